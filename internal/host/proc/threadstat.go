package proc

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// ThreadStat is what one thread's stat file says of where it runs and how
// much CPU it has used: the light read a watcher repeats every interval,
// without status or numa_maps.
type ThreadStat struct {
	TID     int
	Comm    string
	State   string             // stat field 3: "R", "S", ...
	LastCPU unknown.Value[int] // stat field 39
	// UTime and STime are stat fields 14 and 15, in clock ticks (USER_HZ).
	UTime, STime uint64
}

// ReadThreadStats reads the stat file of every thread of pid, by TID. A
// process that is gone is an error wrapping ErrNoProcess, one that has
// exited and is not reaped yet (every thread a zombie) ErrZombie; a
// thread that exits while it is read, or has exited, is left out.
func ReadThreadStats(fsys kfile.FS, pid int) ([]ThreadStat, error) {
	root := fsys.Root()
	base := filepath.Join(root, "proc", strconv.Itoa(pid))
	tids, err := threadIDs(fsys, base)
	if err != nil {
		if gone(err) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
		}
		return nil, fmt.Errorf("process %d threads: %w", pid, err)
	}
	out := make([]ThreadStat, 0, len(tids))
	zombies := 0
	for _, tid := range tids {
		st, err := readTaskStat(fsys, filepath.Join(base, "task", strconv.Itoa(tid), "stat"))
		switch {
		case gone(err):
			continue // the thread exited while we read
		case err != nil:
			return nil, fmt.Errorf("process %d thread %d: %w", pid, tid, err)
		case exited(st.state):
			zombies++
			continue
		}
		out = append(out, ThreadStat{TID: tid, Comm: st.comm, State: st.state, LastCPU: st.processor,
			UTime: st.utime, STime: st.stime})
	}
	switch {
	case len(out) == 0 && zombies > 0:
		return nil, fmt.Errorf("process %d: %w", pid, ErrZombie)
	case len(out) == 0 && len(tids) > 0:
		return nil, fmt.Errorf("process %d: %w: every thread exited while read", pid, ErrNoProcess)
	}
	return out, nil
}
