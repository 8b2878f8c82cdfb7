package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
)

// errnoWriter writes through FileWriter but fails the writes
// numbered in fail (1-based) with errno, as the write(2) would.
type errnoWriter struct {
	n     int
	fail  map[int]bool
	errno unix.Errno
}

func (w *errnoWriter) WriteFile(path string, b []byte) error {
	w.n++
	if w.fail[w.n] {
		return fmt.Errorf("write %s: %w", path, w.errno)
	}
	return FileWriter{}.WriteFile(path, b)
}

// TestRollbackFailed: a rollback that fails, of an IRQ, a NAPI thread or
// a steering step, is a *RollbackError in the step's row, naming the
// step and wrapping the write's error; the row's JSON says "rollback: "
// and the error, as it always has; the pin lists it in RollbackFailed
// (and not in Failed), fails and keeps its state file.
func TestRollbackFailed(t *testing.T) {
	tests := []struct {
		name string
		// pin runs a pin whose rollback of one step fails, and returns
		// that step's row (as a JSON document shows it) and error.
		pin      func(t *testing.T) (res *PinResult, row any, rowErr error)
		wantStep string
		wantErr  error // what the failed rollback wraps
	}{
		{"irq", func(t *testing.T) (*PinResult, any, error) {
			// Write 3 fails; so does the rollback of write 1 (write 5).
			root := hosttest.Copy(t, "seed")
			w := &errnoWriter{fail: map[int]bool{3: true, 5: true}, errno: unix.EROFS}
			res, err := Pin(context.Background(), PinRequest{Root: hosttest.Open(t, root), NICs: []string{"eth0"}, Writer: w,
				Now: time.Now(), StatePath: filepath.Join(t.TempDir(), "state.json"), Threads: noThreads{}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Rows {
				if r.Action == ActionChange {
					return res, r, r.Err() // the first change
				}
			}
			t.Fatal("no change planned")
			return nil, nil, nil
		}, "IRQ 284", unix.EROFS},
		{"thread", func(t *testing.T) (*PinResult, any, error) {
			// pid 814's move fails; 813 has exited when its move is
			// rolled back (the fourth sched_setaffinity).
			root, sh, ft := napiHost(t)
			ft.failAt = 3
			ft.onSet = func(n int) {
				if n == 4 {
					delete(ft.cpus, 813)
				}
			}
			res, err := napiPin(t, root, sh, ft, context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return res, res.Threads[1], res.Threads[1].Err()
		}, "napi/eth0-8194 (pid 813)", syscall.ESRCH},
		{"steer", func(t *testing.T) (*PinResult, any, error) {
			// The rings are refused; so is deleting the rule added
			// before them.
			f := newFakeNIC(1)
			f.refuse["rings"] = &nicset.SetError{Op: "rings-set", NIC: "eth0", Errno: unix.EOPNOTSUPP}
			f.refuse["delete"] = &nicset.SetError{Op: "ETHTOOL_SRXCLSRLDEL", NIC: "eth0", Errno: unix.EPERM}
			res, err := steerPin(t, hosttest.Copy(t, "seed"), f, nil)
			if err != nil {
				t.Fatal(err)
			}
			return res, res.Steer[2], res.Steer[2].Err()
		}, "eth0 ntuple flow-type tcp6 dst-port 9000 action 1", unix.EPERM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, row, rowErr := tt.pin(t)
			var rb *RollbackError
			if !errors.As(rowErr, &rb) {
				t.Fatalf("row error %v (%T), want a *RollbackError", rowErr, rowErr)
			}
			if rb.Step != tt.wantStep || !errors.Is(rowErr, tt.wantErr) {
				t.Errorf("RollbackError{Step: %q, Err: %v}, want step %q wrapping %v", rb.Step, rb.Err, tt.wantStep, tt.wantErr)
			}
			b, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if want := "rollback: " + rb.Err.Error(); doc.Error != want || rowErr.Error() != want {
				t.Errorf("row's JSON error %q, its error %q; want %q", doc.Error, rowErr.Error(), want)
			}
			if want := []string{tt.wantStep + ": " + rb.Err.Error()}; fmt.Sprint(res.RollbackFailed) != fmt.Sprint(want) {
				t.Errorf("RollbackFailed %q, want %q", res.RollbackFailed, want)
			}
			if len(res.Failed) != 1 {
				t.Errorf("Failed %q, want the one write that failed, not the rollback", res.Failed)
			}
			if res.Err() == nil || res.StateFile == "" {
				t.Errorf("Err() = %v, state file %q; want a failed pin whose state file is the way back", res.Err(), res.StateFile)
			}
			if res.Retired != "" {
				t.Errorf("state file retired to %s after an incomplete rollback", res.Retired)
			}
		})
	}
}
