package watch

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestSamplesOpenEachFileOnce holds watch to its syscall economy: over K
// samples of a tree, every file a sample reads (the online CPUs,
// /proc/interrupts, /proc/stat, /proc/softirqs, softnet_stat and each
// watched thread's stat) is opened once, at the first sample, and read
// again from its start at each later one; only the process's task
// folder is listed at every sample, for the threads that come and go. A
// thread that starts is opened once when it does; one that exits is read
// no more. What is read again is what the tree holds now: the counters
// rewritten between samples give their rates.
func TestSamplesOpenEachFileOnce(t *testing.T) {
	const k = 6
	p := &proc.Process{PID: 5001, Comm: "iperf3"}
	h, s, clk := setup(t, "seed", p)
	defer s.Close()
	// A NIC already known for the process: no sockets read again.
	s.uses[p.PID] = nicuse.Use{PID: p.PID, Comm: p.Comm, NICs: []string{"eth0"}, Attribution: unknown.Of(nicuse.AttributionSockets)}
	for tid := 5001; tid <= 5003; tid++ {
		h.Thread(5001, tid, "iperf3", "S", 1000, 100, 3)
	}
	var mu sync.Mutex
	opens, rereads, lists := map[string]int{}, map[string]int{}, map[string]int{}
	stop := kfile.Trace(func(a kfile.Access) {
		if a.Root != h.Root {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch a.Op {
		case kfile.OpRead:
			opens[a.Rel]++
		case kfile.OpReread:
			rereads[a.Rel]++
		case kfile.OpReadDir:
			lists[a.Rel]++
		default:
			t.Errorf("%s %s: a sample does more than read files and list the task folder", a.Op, a.Rel)
		}
	})
	defer stop()
	prev := sample(t, s)
	for i := 1; i < k; i++ {
		clk.Advance(time.Second)
		h.AddIRQ(286, 53, 1000*uint64(i))
		h.Thread(5001, 5001, "iperf3", "S", 1000+10*uint64(i), 100, 3)
		switch i {
		case 2: // thread 5003 exits, 5004 starts
			if err := os.RemoveAll(filepath.Join(h.Root, "proc/5001/task/5003")); err != nil {
				t.Fatal(err)
			}
			h.Thread(5001, 5004, "iperf3", "S", 1000, 100, 3)
		}
		cur := sample(t, s)
		iv := diff(t, s, prev, cur)
		if got, want := irqStats(t, iv, 286).PerSec, 1000*float64(i); !unknown.Is(got, want) {
			t.Errorf("sample %d: IRQ 286 at %v/s, want %v: the file read again is not the tree's", i, val(got), want)
		}
		prev = cur
	}
	stop()
	files := []string{"sys/devices/system/cpu/online", "proc/interrupts", "proc/stat", "proc/softirqs", "proc/net/softnet_stat",
		"proc/5001/task/5001/stat", "proc/5001/task/5002/stat"}
	wantOpens, wantRereads := map[string]int{}, map[string]int{}
	for _, f := range files {
		wantOpens[f], wantRereads[f] = 1, k-1
	}
	wantOpens["proc/5001/task/5003/stat"], wantRereads["proc/5001/task/5003/stat"] = 1, 1   // samples 0 and 1
	wantOpens["proc/5001/task/5004/stat"], wantRereads["proc/5001/task/5004/stat"] = 1, k-3 // from sample 2
	if diff := cmp.Diff(wantOpens, opens); diff != "" {
		t.Errorf("opens over %d samples (-want +got):\n%s", k, diff)
	}
	if diff := cmp.Diff(wantRereads, rereads); diff != "" {
		t.Errorf("reads again over %d samples (-want +got):\n%s", k, diff)
	}
	if diff := cmp.Diff(map[string]int{"proc/5001/task": k}, lists); diff != "" {
		t.Errorf("listings over %d samples (-want +got):\n%s", k, diff)
	}
}
