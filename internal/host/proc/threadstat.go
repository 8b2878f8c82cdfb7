package proc

import (
	"fmt"
	"path/filepath"
	"slices"
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
	t := NewThreads(fsys, pid)
	defer t.Close()
	return t.Read()
}

// Threads reads the stat files of one process's threads again and again,
// as ReadThreadStats does once: each thread's file is kept open
// (kfile.Keep) while the thread is listed in the process's task folder,
// so a watcher pays a listing and two preads a thread each interval, not
// an open and a close of each. It is not safe for concurrent use; Close
// releases the files.
type Threads struct {
	fsys  kfile.FS
	pid   int
	base  string
	files map[int]*kfile.Kept // by TID, of the threads last listed
	buf   []byte
}

// NewThreads returns the reader of pid's threads; nothing is opened
// before its first Read.
func NewThreads(fsys kfile.FS, pid int) *Threads {
	return &Threads{fsys: fsys, pid: pid, base: filepath.Join(fsys.Root(), "proc", strconv.Itoa(pid)), files: map[int]*kfile.Kept{}}
}

// Read reads the stat file of every thread of the process now, as
// ReadThreadStats does.
func (t *Threads) Read() ([]ThreadStat, error) {
	pid := t.pid
	tids, err := threadIDs(t.fsys, t.base)
	if err != nil {
		t.Close()
		if gone(err) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
		}
		return nil, fmt.Errorf("process %d threads: %w", pid, err)
	}
	t.forget(tids)
	out := make([]ThreadStat, 0, len(tids))
	zombies := 0
	for _, tid := range tids {
		k := t.files[tid]
		if k == nil {
			k = t.fsys.Keep(filepath.Join(t.base, "task", strconv.Itoa(tid), "stat"), 1<<16)
			t.files[tid] = k
		}
		b, err := k.Read(t.buf[:0])
		var st taskStat
		if err == nil {
			t.buf = b
			st, err = parseTaskStat(k.Path(), b)
		}
		switch {
		case gone(err):
			k.Close()
			delete(t.files, tid)
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

// forget closes the files of threads no longer listed in tids (sorted).
func (t *Threads) forget(tids []int) {
	for tid, k := range t.files {
		if _, listed := slices.BinarySearch(tids, tid); !listed {
			k.Close()
			delete(t.files, tid)
		}
	}
}

// Close closes every thread's file; a Read after it opens them again.
func (t *Threads) Close() {
	for tid, k := range t.files {
		k.Close()
		delete(t.files, tid)
	}
}
