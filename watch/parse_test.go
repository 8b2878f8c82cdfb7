package watch

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/procfs"

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

// TestSoftnetByCPU: with the CPU id column (Linux 5.10+) procfs's index is
// used; without it, line i is the i-th online CPU, not CPU i.
func TestSoftnetByCPU(t *testing.T) {
	tests := []struct {
		give    []procfs.SoftnetStat
		online  string
		want    []softnetCPU
		wantErr bool
	}{
		{
			give:   []procfs.SoftnetStat{{Processed: 5, Index: 0, Width: 13}, {Processed: 6, Dropped: 1, TimeSqueezed: 2, Index: 2, Width: 13}},
			online: "0,2",
			want:   []softnetCPU{{id: 0, processed: 5}, {id: 2, processed: 6, dropped: 1, squeeze: 2}},
		},
		{ // 4.18: 11 columns, CPU 1 offline; procfs numbers the lines 0, 1
			give:   []procfs.SoftnetStat{{Processed: 5, Index: 0, Width: 11}, {Processed: 6, Index: 1, Width: 11}},
			online: "0,2",
			want:   []softnetCPU{{id: 0, processed: 5}, {id: 2, processed: 6}},
		},
		{
			give:    []procfs.SoftnetStat{{Index: 0, Width: 11}},
			online:  "0,2",
			wantErr: true,
		},
		{
			give:    []procfs.SoftnetStat{{Index: 3, Width: 13}, {Index: 3, Width: 13}},
			online:  "3",
			wantErr: true,
		},
	}
	for _, tt := range tests {
		online, _ := cpuset.ParseList(tt.online)
		got, err := softnetByCPU(tt.give, online, nil)
		if tt.wantErr {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("softnetByCPU(%+v) error = %v, want one wrapping ErrFormat", tt.give, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("softnetByCPU(%+v): %v", tt.give, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(softnetCPU{})); diff != "" {
			t.Errorf("softnetByCPU(%+v) (-want +got):\n%s", tt.give, diff)
		}
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
