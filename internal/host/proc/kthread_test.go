package proc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// writeTask writes a task's comm, stat and status as Linux 6.18 prints
// a napi kthread's.
func writeTask(t *testing.T, root, pid, comm, stat, status string) {
	t.Helper()
	dir := filepath.Join(root, "proc", pid)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"comm": comm + "\n", "stat": stat, "status": status} {
		if body == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The stat and status of napi/eth0-257 on this VM (Linux 6.18, threaded
// NAPI on virtio_net), shortened to the lines irqnuma reads.
const (
	napiStat   = "27443 (napi/eth0-257) S 2 0 0 0 -1 2129984 0 0 0 0 0 3 0 0 20 0 1 0 2361934 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	napiStatus = "Name:\tnapi/eth0-257\nState:\tS (sleeping)\nTgid:\t27443\nPid:\t27443\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n"
)

func TestReadTask(t *testing.T) {
	root := t.TempDir()
	writeTask(t, root, "27443", "napi/eth0-257", napiStat, napiStatus)
	writeTask(t, root, "27442", "napi/eth0-0", napiStat, "")
	writeTask(t, root, "1", "systemd", "1 (systemd) S 0 1 1 0 -1 4194560 1 0 0 0 5 7 0 0 20 0 1 0 12 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 3 0\n", "")
	writeTask(t, root, "9", "napi/eth0-9", "9 (napi/eth0-9) Z 2 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0\n", "")
	fsys := hosttest.Open(t, root)
	got, err := ReadTask(fsys, 27443)
	if err != nil {
		t.Fatal(err)
	}
	if got.PID != 27443 || got.Comm != "napi/eth0-257" || got.Start != 2361934 || got.Allowed.String() != "0-1" {
		t.Errorf("ReadTask = %+v", got)
	}
	if _, err := ReadTask(fsys, 4242); !errors.Is(err, ErrNoProcess) {
		t.Errorf("ReadTask of no pid = %v, want ErrNoProcess", err)
	}
	if _, err := ReadTask(fsys, 9); !errors.Is(err, ErrZombie) {
		t.Errorf("ReadTask of a zombie = %v, want ErrZombie", err)
	}
	if _, err := ReadTask(fsys, 27442); !errors.Is(err, ErrPartial) {
		t.Errorf("ReadTask without status = %v, want ErrPartial", err)
	}
	pids, err := FindByCommPrefix(fsys, "napi/eth0-")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmpDiff([]int{9, 27442, 27443}, pids); diff != "" {
		t.Errorf("FindByCommPrefix (-want +got):\n%s", diff)
	}
}
