package affinity

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/prometheus/procfs"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// ThreadStat is what one thread's stat file says of where it runs and how
// much CPU it has used: the light read a watcher repeats every interval,
// without status or numa_maps.
type ThreadStat struct {
	TID     int
	Comm    string
	State   string // stat field 3: "R", "S", ...
	LastCPU int    // stat field 39; -1 when unknown
	// UTime and STime are stat fields 14 and 15, in clock ticks (USER_HZ).
	UTime, STime uint64
}

// ReadThreadStats reads the stat file of every thread of pid, by TID. A
// process that is gone is an error wrapping ErrNoProcess; a thread that
// exits while it is read is left out.
func ReadThreadStats(root string, pid int) ([]ThreadStat, error) {
	fs, err := procfs.NewFS(filepath.Join(root, "proc"))
	if err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	tasks, err := fs.AllThreads(pid)
	if err != nil {
		if kfile.IsNotExist(err) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
		}
		return nil, fmt.Errorf("process %d threads: %w", pid, err)
	}
	out := make([]ThreadStat, 0, len(tasks))
	for _, t := range tasks {
		st, err := t.Stat()
		if err != nil {
			if kfile.IsNotExist(err) {
				continue // the thread exited while we read
			}
			return nil, fmt.Errorf("process %d thread %d: %w", pid, t.PID, err)
		}
		ts := ThreadStat{TID: t.PID, Comm: st.Comm, State: st.State, LastCPU: -1,
			UTime: uint64(st.UTime), STime: uint64(st.STime)}
		if st.Processor <= cpuset.MaxID {
			ts.LastCPU = int(st.Processor)
		}
		out = append(out, ts)
	}
	slices.SortFunc(out, func(a, b ThreadStat) int { return a.TID - b.TID })
	return out, nil
}
