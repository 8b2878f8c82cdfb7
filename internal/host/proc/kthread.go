package proc

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// Task is one task as a move of its CPU affinity needs to know it: its
// pid, its name, and when it started, which together name it for good (a
// pid alone is reused once the task exits).
type Task struct {
	PID  int
	Comm string
	// Start is /proc/PID/stat field 22 (starttime): clock ticks after
	// boot.
	Start uint64
	// Allowed is its Cpus_allowed_list.
	Allowed cpuset.Set
}

// ReadTask reads /proc/PID/stat and /proc/PID/status. A task that is
// not there, or exits while read, wraps ErrNoProcess (ErrZombie when it
// has exited unreaped); a tree holding its folder without the files
// wraps ErrPartial.
func ReadTask(fsys kfile.FS, pid int) (Task, error) {
	base := fsys.Path(filepath.Join("proc", strconv.Itoa(pid)))
	fail := func(err error) (Task, error) {
		switch {
		case exitedMeanwhile(fsys, base, err):
			return Task{}, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
		case kfile.IsNotExist(err):
			// The folder is there without the file: a tree that did not
			// capture it.
			return Task{}, fmt.Errorf("process %d: %w: %w", pid, ErrPartial, err)
		}
		return Task{}, fmt.Errorf("process %d: %w", pid, err)
	}
	st, err := readTaskStat(fsys, base+"/stat")
	if err != nil {
		return fail(err)
	}
	if exited(st.state) {
		return Task{}, fmt.Errorf("process %d (%s): %w", pid, st.comm, ErrZombie)
	}
	status, err := readStatus(fsys, base+"/status")
	if err != nil {
		return fail(err)
	}
	return Task{PID: pid, Comm: st.comm, Start: st.start, Allowed: status.cpus}, nil
}

// FindByCommPrefix returns the PIDs whose comm begins with prefix,
// ascending: the kernel threads of one kind ("napi/eth0-"). A kernel
// thread's comm is its full name (Linux 5.17 and later print it whole,
// past the 15 bytes of a task's comm).
func FindByCommPrefix(fsys kfile.FS, prefix string) ([]int, error) {
	return findComm(fsys, func(comm string) bool { return strings.HasPrefix(comm, prefix) })
}
