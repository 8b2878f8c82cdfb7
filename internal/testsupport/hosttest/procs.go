package hosttest

import (
	"bytes"
	"os"
	"strconv"
	"testing"
)

// LiveWithArg returns the PIDs of this machine's live (not zombie or
// dead) processes whose command line holds arg as a whole argument: the
// processes a test started, found by a marker only they carry, to prove
// none outlived what started them.
func LiveWithArg(t testing.TB, arg string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("\x00" + arg + "\x00")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(append([]byte{0}, cmdline...), want) {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		i := bytes.LastIndexByte(st, ')')
		if err == nil && i > 0 && i+2 < len(st) && st[i+2] != 'Z' && st[i+2] != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}
