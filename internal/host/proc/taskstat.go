package proc

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// taskStat is what irqnuma reads of /proc/PID/task/TID/stat.
type taskStat struct {
	comm         string
	state        string // field 3: "R", "S", ...
	utime, stime uint64 // fields 14 and 15, clock ticks
	// start is field 22, starttime: clock ticks after boot the task
	// started at; a pid and its start time name one task for good.
	start     uint64
	processor unknown.Value[int] // field 39, the CPU it last ran on
}

// readTaskStat reads and parses a stat file. The command name sits in
// parentheses and may hold spaces and parentheses itself, so the fields
// are counted from the last ')'.
func readTaskStat(fsys kfile.FS, path string) (taskStat, error) {
	b, err := fsys.ReadLimit(path, 1<<16)
	if err != nil {
		return taskStat{}, err
	}
	return parseTaskStat(path, b)
}

func parseTaskStat(path string, b []byte) (taskStat, error) {
	st := taskStat{processor: unknown.NotAs[int](unknown.KindKernel, "stat has no processor field (39)")}
	l, r := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if l < 0 || r < l {
		return st, fmt.Errorf("read %s: no (comm) in %q", path, clip(b))
	}
	st.comm = string(b[l+1 : r])
	f := bytes.Fields(b[r+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 13 {
		return st, fmt.Errorf("read %s: %d fields after the command name, want at least 13", path, len(f))
	}
	st.state = string(f[0])
	var err error
	if st.utime, err = strconv.ParseUint(string(f[11]), 10, 64); err != nil {
		return st, fmt.Errorf("read %s: utime %q is not a number", path, clip(f[11]))
	}
	if st.stime, err = strconv.ParseUint(string(f[12]), 10, 64); err != nil {
		return st, fmt.Errorf("read %s: stime %q is not a number", path, clip(f[12]))
	}
	if len(f) > 19 {
		if st.start, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
			return st, fmt.Errorf("read %s: starttime %q is not a number", path, clip(f[19]))
		}
	}
	if len(f) > 36 {
		cpu, err := strconv.ParseInt(string(f[36]), 10, 64)
		if err != nil {
			return st, fmt.Errorf("read %s: processor %q is not a number", path, clip(f[36]))
		}
		if cpu >= 0 && cpu <= cpuset.MaxID {
			st.processor = unknown.Of(int(cpu))
		} else {
			st.processor = unknown.NotAs[int](unknown.KindMalformed, fmt.Sprintf("stat processor %d is no CPU id", cpu))
		}
	}
	return st, nil
}

// threadIDs lists the thread ids of the process folder base (its task/),
// ascending.
func threadIDs(fsys kfile.FS, base string) ([]int, error) {
	ents, err := fsys.ReadDir(filepath.Join(base, "task"))
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil && tid > 0 {
			tids = append(tids, tid)
		}
	}
	slices.Sort(tids)
	return tids, nil
}

// clip shortens what an error quotes from a file.
func clip(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}
