package tune

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// countingWriter writes through FileWriter and counts the writes.
type countingWriter struct{ n int }

func (w *countingWriter) WriteFile(path string, b []byte) error {
	w.n++
	return FileWriter{}.WriteFile(path, b)
}

// TestPinPlannedFirst: Planned sees the plan before any write, and an
// error from it stops the pin with nothing written and no state file.
func TestPinPlannedFirst(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, stop := range []bool{false, true} {
		root := hosttest.Copy(t, "seed")
		w := &countingWriter{}
		var seen *PinResult
		state := filepath.Join(t.TempDir(), "state.json")
		res, err := Pin(context.Background(), PinRequest{
			Root: hosttest.Open(t, root), NICs: []string{"eth0"}, Writer: w, Now: now, StatePath: state,
			Planned: func(r *PinResult) error {
				if w.n != 0 {
					t.Errorf("Planned called after %d writes", w.n)
				}
				seen = r
				if stop {
					return errors.New("stderr closed")
				}
				return nil
			},
		})
		if seen == nil || seen.Changes == 0 || len(seen.Targets) != 1 {
			t.Fatalf("stop %v: Planned saw %+v", stop, seen)
		}
		_, statErr := os.Stat(state)
		if stop {
			if err == nil || err.Error() != "stderr closed" || w.n != 0 || !os.IsNotExist(statErr) {
				t.Errorf("stopped in Planned: err %v, %d writes, state file %v", err, w.n, statErr)
			}
			continue
		}
		if err != nil || res.Changed != seen.Changes || w.n != res.Changes || statErr != nil {
			t.Errorf("pin: err %v, changed %d of %d, %d writes, state file %v", err, res.Changed, seen.Changes, w.n, statErr)
		}
	}
}

// TestRestoreMissingFile: a state file that does not exist is an error
// naming it, and nothing is made under the root (not even the lock).
func TestRestoreMissingFile(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	missing := filepath.Join(t.TempDir(), "state.json")
	_, err := Restore(context.Background(), hosttest.Open(t, root), missing, FileWriter{}, nil)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Restore of a missing file: %v; want an error naming %s", err, missing)
	}
	if _, err := os.Stat(filepath.Join(root, "var")); !os.IsNotExist(err) {
		t.Errorf("Restore made %s/var: %v", root, err)
	}
}

// TestPinRestoreHeld: a caller holding the root's lock pins and restores
// under it, and nobody else can meanwhile; a lock of another root or one
// released is refused before anything is written.
func TestPinRestoreHeld(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	lock, err := AcquireLock(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	req := PinRequest{Root: hosttest.Open(t, root), NICs: []string{"eth0"}, Writer: FileWriter{}, Now: time.Now(), Lock: lock}
	res, err := Pin(context.Background(), req)
	if err != nil || res.Err() != nil || res.Changed == 0 {
		t.Fatalf("Pin under a held lock: %v, %+v", err, res)
	}
	if _, err := AcquireLock(hosttest.Open(t, root)); !errors.Is(err, ErrLocked) {
		t.Errorf("AcquireLock while held = %v, want ErrLocked", err)
	}
	if _, err := Restore(context.Background(), hosttest.Open(t, root), res.StateFile, FileWriter{}, nil); !errors.Is(err, ErrLocked) {
		t.Errorf("Restore (taking the lock) while held = %v, want ErrLocked", err)
	}
	rr, err := RestoreHeld(context.Background(), lock, hosttest.Open(t, root), res.StateFile, FileWriter{}, nil)
	if err != nil || rr.Err() != nil {
		t.Fatalf("RestoreHeld: %v, %v", err, rr.Err())
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("tree not back as it was (-before +after):\n%s", diff)
	}
	other := hosttest.Copy(t, "seed")
	w := &countingWriter{}
	if _, err := Pin(context.Background(), PinRequest{Root: hosttest.Open(t, other), NICs: []string{"eth0"}, Writer: w, Now: time.Now(), Lock: lock}); err == nil || w.n != 0 {
		t.Errorf("Pin of another root under this lock: err %v, %d writes; want a refusal", err, w.n)
	}
	lock.Release()
	if _, err := RestoreHeld(context.Background(), lock, hosttest.Open(t, root), res.StateFile, FileWriter{}, nil); err == nil {
		t.Errorf("RestoreHeld with a released lock: no error")
	}
}

// TestPlanDedupe: a step repeating an IRQ or a queue alike is dropped; one
// placing it elsewhere is refused, naming both.
func TestPlanDedupe(t *testing.T) {
	step := func(irqN int, nic string, kind irq.Kind, queue int, to ...int) planStep {
		return planStep{IRQ: irqN, NIC: nic, Kind: kind, Queue: queue, To: cpuset.New(to...), Action: ActionChange}
	}
	p := &pinPlan{Steps: []planStep{
		step(284, "eth0", irq.KindQueue, 0, 16), step(285, "eth0", irq.KindQueue, 1, 17),
		step(-1, "eth0", KindXPS, 0, 16), step(284, "eth0", irq.KindQueue, 0, 16), step(-1, "eth0", KindXPS, 0, 16),
	}}
	if err := p.dedupe(); err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 3 {
		t.Errorf("%d steps after dedupe, want 3: %+v", len(p.Steps), p.Steps)
	}
	p = &pinPlan{Steps: []planStep{step(284, "eth0", irq.KindQueue, 0, 16), step(284, "eth1", irq.KindQueue, 0, 20)}}
	err := p.dedupe()
	if err == nil || !strings.Contains(err.Error(), "IRQ 284 is planned twice, for eth0 (change 16) and for eth1 (change 20)") {
		t.Errorf("dedupe of a conflict = %v", err)
	}
}
