package audit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestAuditProcesses runs the process checks on in-memory processes.
func TestAuditProcesses(t *testing.T) {
	h, tb := loadHost(t, "seed")
	th := func(tid int, allowed string, last int) proc.Thread {
		s, err := cpuset.ParseList(allowed)
		if err != nil {
			t.Fatal(err)
		}
		return proc.Thread{TID: tid, Allowed: s, LastCPU: unknown.Of(last)}
	}
	tests := []struct {
		name string
		give proc.Process
		want []string // "check/severity CPUs"
	}{
		{name: "well placed", give: proc.Process{PID: 10, Comm: "iperf3", Allowed: cpuset.New(22, 25),
			Threads: []proc.Thread{th(10, "22,25", 22)}, NodeKB: map[int]uint64{1: 100, 0: 10}}},
		{name: "one thread pinned remote, others fine", give: proc.Process{PID: 11, Comm: "iperf3", Allowed: cpuset.New(22),
			Threads: []proc.Thread{th(11, "22", 22), th(12, "0-1", 0)}},
			want: []string{"proc-remote/error 0", "proc-remote/warning 0-1"}},
		{name: "unpinned: may run anywhere", give: proc.Process{PID: 13, Comm: "nginx", Allowed: cpuset.Range(0, 63),
			Threads: []proc.Thread{th(13, "0-63", 54)}, NodeKB: map[int]uint64{}},
			want: []string{"proc-remote/warning 0-15,32-47", "proc-irq-overlap/warning 17-21,23-24,26,28-31,49-53,55-56,58,60-63"}},
		{name: "last CPU unknown is not judged", give: proc.Process{PID: 14, Comm: "x", Allowed: cpuset.New(22),
			Threads: []proc.Thread{th(14, "22", -1)}}},
		{name: "half the pages remote is not most", give: proc.Process{PID: 15, Comm: "x", Allowed: cpuset.New(22),
			Threads: []proc.Thread{th(15, "22", 22)}, NodeKB: map[int]uint64{0: 50, 1: 50}}},
		{name: "most pages remote", give: proc.Process{PID: 16, Comm: "x", Allowed: cpuset.New(22),
			Threads: []proc.Thread{th(16, "22", 22)}, NodeKB: map[int]uint64{0: 51, 1: 49}},
			want: []string{"proc-mem-remote/warning "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.give
			var got []string
			for _, f := range Run(h, tb, []*proc.Process{&p}, Options{Governor: performance, Uses: usesOn("eth0", &p)}) {
				if strings.HasPrefix(string(f.Check), "proc-") {
					got = append(got, string(f.Check)+"/"+string(f.Severity)+" "+f.CPUs.List())
					if f.PID != p.PID {
						t.Errorf("%s: PID %d, want %d", f.Check, f.PID, p.PID)
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("process findings (-want +got):\n%s", diff)
			}
		})
	}
}
