package watch

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/irqnuma/irqnuma/cpuset"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		give    string
		want    []statCPU
		wantErr bool
	}{
		{
			give: "cpu  3 0 2 10 0 0 1 0 0 0\ncpu0 1 0 1 5 0 0 1 0 0 0\ncpu2 2 0 1 5 0 0 0 4 0 0\nintr 9 1 2 3\nctxt 5\n",
			want: []statCPU{{0, cpuTimes{user: 1, system: 1, idle: 5, softirq: 1}}, {2, cpuTimes{user: 2, system: 1, idle: 5, steal: 4}}},
		},
		{ // 2.6.0-2.6.10: no steal
			give: "cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n",
			want: []statCPU{{0, cpuTimes{1, 2, 3, 4, 5, 6, 7, 0}}},
		},
		{give: "cpu0 1 2 3 4\n", wantErr: true},
		{give: "cpu0 1 2 3 4 5 6 x\n", wantErr: true},
		{give: "cpux 1 2 3 4 5 6 7\n", wantErr: true},
		{give: "cpu1 1 2 3 4 5 6 7\ncpu1 1 2 3 4 5 6 7\n", wantErr: true},
		{give: "intr 1 2\n", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseStat([]byte(tt.give), nil)
		if tt.wantErr {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("parseStat(%q) error = %v, want one wrapping ErrFormat", tt.give, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseStat(%q): %v", tt.give, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(statCPU{}, cpuTimes{})); diff != "" {
			t.Errorf("parseStat(%q) (-want +got):\n%s", tt.give, diff)
		}
	}
}

func TestParseSoftirqs(t *testing.T) {
	hdr := "                    CPU0       CPU2       CPU3\n"
	tests := []struct {
		give    string
		want    softirqs
		wantErr bool
	}{
		{
			give: hdr + "          HI:          0          0          0\n      NET_TX:          1          2          3\n      NET_RX:         10         20         30\n         RCU:          5          5          5\n",
			want: softirqs{cpus: []int{0, 2, 3}, netRX: []uint64{10, 20, 30}, netTX: []uint64{1, 2, 3}},
		},
		{give: hdr + "      NET_TX:          1          2\n      NET_RX:         10         20         30\n", wantErr: true},
		{give: hdr + "      NET_RX:         10         20         30\n", wantErr: true},
		{give: "   CPU0 CPUx\n", wantErr: true},
		{give: "\n", wantErr: true},
		{give: hdr + "      NET_TX:          1          2          z\n", wantErr: true},
	}
	for _, tt := range tests {
		var got softirqs
		err := parseSoftirqs([]byte(tt.give), &got)
		if tt.wantErr {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("parseSoftirqs(%q) error = %v, want one wrapping ErrFormat", tt.give, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseSoftirqs(%q): %v", tt.give, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(softirqs{})); diff != "" {
			t.Errorf("parseSoftirqs(%q) (-want +got):\n%s", tt.give, diff)
		}
	}
}

// TestParseSoftnet: with the CPU id column (Linux 5.10+: 13 fields; 6.x:
// 15, as on this machine's 6.18) the id is read; without it (11 fields,
// 3.11 to 5.9), line i is the i-th online CPU, not CPU i.
func TestParseSoftnet(t *testing.T) {
	const (
		// This VM's Linux 6.18, CPUs 0 and 1.
		v618 = "00bb84ac 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n" +
			"013441a1 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001 00000000 00000000\n"
		// 5.10 to 6.x: CPU 1 offline, so the lines are CPUs 0 and 2.
		v510 = "00000005 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n" +
			"00000006 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000002\n"
		// 4.18: 11 fields, no id; CPU 1 offline.
		v418 = "00000005 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n" +
			"0000000a 00000003 0000000f 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
	)
	tests := []struct {
		name, give, online string
		want               []softnetCPU
		err                string // part of the error, "" for none
	}{
		{name: "6.18, 15 fields", give: v618, online: "0-1",
			want: []softnetCPU{{id: 0, processed: 0xbb84ac}, {id: 1, processed: 0x13441a1}}},
		{name: "5.10, 13 fields, a CPU offline", give: v510, online: "0,2",
			want: []softnetCPU{{id: 0, processed: 5}, {id: 2, processed: 6, dropped: 1, squeeze: 2}}},
		{name: "4.18, 11 fields, a CPU offline", give: v418, online: "0,2",
			want: []softnetCPU{{id: 0, processed: 5}, {id: 2, processed: 10, dropped: 3, squeeze: 15}}},
		{name: "empty", give: "", online: "0", want: []softnetCPU{}},
		{name: "fewer lines than online CPUs, no id", give: v418, online: "0-2", err: "2 lines for 3 online CPUs"},
		{name: "more lines than online CPUs, no id", give: v418, online: "0", err: "line 2: more lines than the 1 online CPUs"},
		{name: "12 fields", give: "0 0 0 0 0 0 0 0 0 0 0 0\n", online: "0", err: "line 1: 12 fields"},
		{name: "ids out of order", give: v510[len(v510)/2:] + v510[:len(v510)/2], online: "0,2", err: "line 2: CPU 0 after CPU 2"},
		{name: "not hex", give: strings.Replace(v510, "00000005", "0000000g", 1), online: "0,2", err: `line 1: "0000000g" is not a 32-bit hex counter`},
		{name: "past 32 bits", give: strings.Replace(v510, "00000005", "100000000", 1), online: "0,2", err: `"100000000" is not a 32-bit hex counter`},
		{name: "id past the largest CPU id", give: strings.Replace(v510, "00000002\n", "7fffffff\n", 1), online: "0,2", err: "past the largest CPU id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			online, err := cpuset.ParseList(tt.online)
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseSoftnet([]byte(tt.give), online, nil)
			if tt.err != "" {
				if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want ErrFormat saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(softnetCPU{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppendCounts(t *testing.T) {
	tests := []struct {
		give string
		want []uint64
		ok   bool
	}{
		{"          1          2 ", []uint64{1, 2}, true},
		{"1\t2\r", []uint64{1, 2}, true},
		{"", nil, true},
		{"  1  2x", nil, false},
		{"  99999999999999999999", nil, false},
	}
	for _, tt := range tests {
		got, ok := appendCounts(nil, []byte(tt.give))
		if ok != tt.ok || (ok && !cmp.Equal(tt.want, got)) {
			t.Errorf("appendCounts(%q) = %v, %v, want %v, %v", tt.give, got, ok, tt.want, tt.ok)
		}
	}
}
