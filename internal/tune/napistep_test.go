package tune

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/schematest"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
)

func ptr[T any](v T) *T { return &v }

func cloneNAPI(n steer.NAPI) steer.NAPI {
	c := n
	c.DeferHardIRQs, c.GROFlushTimeout, c.IRQSuspendTimeout, c.Threaded = clonePtr(n.DeferHardIRQs), clonePtr(n.GROFlushTimeout), clonePtr(n.IRQSuspendTimeout), clonePtr(n.Threaded)
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// SetNAPI sets the fake NIC's one NAPI instance as the kernel does: an
// id it does not have is ENOENT ("napi not found"), a setting the kernel
// does not report is an attribute it refuses.
func (s *fakeSetter) SetNAPI(_ string, id uint32, set nicset.NAPISetting) error {
	if err := s.refused("napi"); err != nil {
		return err
	}
	n := &s.nic.napi
	if id != n.ID {
		return &nicset.SetError{Op: "napi-set", NIC: "eth0", Errno: unix.ENOENT, Message: "napi not found"}
	}
	if (set.Threaded != nil && n.Threaded == nil) || (set.IRQSuspendTimeout != nil && n.IRQSuspendTimeout == nil) {
		return &nicset.SetError{Op: "napi-set", NIC: "eth0", Errno: unix.EINVAL, Message: "Unknown attribute type"}
	}
	for _, f := range []struct{ to, from *uint64 }{{n.GROFlushTimeout, set.GROFlushTimeout}, {n.IRQSuspendTimeout, set.IRQSuspendTimeout}} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
	if set.DeferHardIRQs != nil {
		*n.DeferHardIRQs = *set.DeferHardIRQs
	}
	if set.Threaded != nil {
		*n.Threaded = *set.Threaded
	}
	return nil
}

// napiState is a NAPI instance's settings as napi-get shows them.
func napiState(n steer.NAPI) string {
	show := func(p any) string {
		switch v := p.(type) {
		case *uint32:
			if v != nil {
				return fmt.Sprint(*v)
			}
		case *uint64:
			if v != nil {
				return fmt.Sprint(*v)
			}
		case *bool:
			if v != nil {
				return fmt.Sprint(*v)
			}
		}
		return "-"
	}
	return fmt.Sprintf("napi %d defer %s gro %s suspend %s threaded %s", n.ID, show(n.DeferHardIRQs), show(n.GROFlushTimeout), show(n.IRQSuspendTimeout), show(n.Threaded))
}

// napiStep sets defer-hard-irqs 2, gro-flush-timeout 20000 and threaded
// on eth0's NAPI 8193, leaving irq-suspend-timeout.
func napiStep() SteerStep {
	return SteerStep{NIC: "eth0", NAPI: &NAPIStep{ID: 8193, NAPISetting: nicset.NAPISetting{
		DeferHardIRQs: ptr(uint32(2)), GROFlushTimeout: ptr(uint64(20000)), Threaded: ptr(true)}}}
}

func TestNAPIStepWords(t *testing.T) {
	one := SteerStep{NIC: "eth0", NAPI: &NAPIStep{ID: 8193, NAPISetting: nicset.NAPISetting{DeferHardIRQs: ptr(uint32(0))}}}
	if got := one.Name(); got != "eth0 napi 8193 defer-hard-irqs 0" {
		t.Errorf("Name = %q", got)
	}
	all := napiStep()
	all.NAPI.IRQSuspendTimeout = ptr(uint64(5_000_000_000))
	if got, want := all.Name(), "eth0 napi 8193 defer-hard-irqs 2 gro-flush-timeout 20000 irq-suspend-timeout 5000000000 threaded enabled"; got != want {
		t.Errorf("Name = %q, want %q", got, want)
	}
	if got := stepTo(one); got != "defer-hard-irqs 0" {
		t.Errorf("stepTo = %q", got)
	}
	v := savedStep{NIC: "eth0", NAPI: &savedNAPI{ID: 8193, GROFlushTimeout: ptr(uint64(0)), Threaded: ptr(false)}}
	if got := savedText(v); got != "gro-flush-timeout 0 threaded disabled" {
		t.Errorf("savedText = %q", got)
	}
	if got := savedKind(v); got != "napi 8193" {
		t.Errorf("savedKind = %q", got)
	}
}

// TestNAPIStepPinRestore: a pin's NAPI step is saved before it is made,
// with the old value of exactly the settings it changes, in a state file
// the schema admits; it reads back as set, and restoring the saved step
// puts the instance back.
func TestNAPIStepPinRestore(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	f := newFakeNIC(1)
	want := napiState(f.napi)
	res, err := steerPinSteps(t, root, f, nil, []SteerStep{napiStep()})
	if err != nil || res.Err() != nil {
		t.Fatalf("Pin: %v, %v", err, res.Err())
	}
	if got := napiState(f.napi); got != "napi 8193 defer 2 gro 20000 suspend 0 threaded true" {
		t.Errorf("after the pin: %s", got)
	}
	wantRow := SteerRow{NIC: "eth0", Step: "eth0 napi 8193 defer-hard-irqs 2 gro-flush-timeout 20000 threaded enabled",
		From: "defer-hard-irqs 0 gro-flush-timeout 0 threaded disabled", To: "defer-hard-irqs 2 gro-flush-timeout 20000 threaded enabled", Result: ResultChanged}
	if len(res.Steer) != 1 || !cmp.Equal(wantRow, res.Steer[0], cmp.AllowUnexported(SteerRow{})) {
		t.Errorf("steering rows %+v, want %+v", res.Steer, wantRow)
	}
	raw, err := os.ReadFile(res.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Load(t).Validate(t, "state file", raw)
	var doc struct {
		Steer []struct {
			NAPI json.RawMessage `json:"napi"`
		} `json:"steer"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Steer) != 1 {
		t.Fatalf("state file: %v, %s", err, raw)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc.Steer[0].NAPI); err != nil {
		t.Fatal(err)
	}
	if got := compact.String(); got != `{"id":8193,"defer_hard_irqs":0,"gro_flush_timeout":0,"threaded":false}` {
		t.Errorf("saved napi %s: want the id and the three old values it changes", got)
	}
	st, err := parseState(raw)
	if err != nil {
		t.Fatal(err)
	}
	// A state holding NAPI settings is version 4's (see stateversion.go);
	// the restore of its steering is restoreSteer's, checked first as
	// Restore checks a state.
	if err := checkSteer(st.Steer, stateVersionTune); err != nil {
		t.Fatalf("checkSteer: %v", err)
	}
	openSetter = func(kfile.FS) (nicset.Setter, error) { return &fakeSetter{nic: f}, nil }
	defer func() { openSetter = nicset.OpenSetter }()
	var rr RestoreResult
	rr.restoreSteer(context.Background(), hosttest.Open(t, root), st.Steer)
	if len(rr.Failed) != 0 || len(rr.Steer) != 1 || rr.Steer[0].Step != "eth0 napi 8193" || rr.Steer[0].Result != ResultChanged ||
		rr.Steer[0].To != "defer-hard-irqs 0 gro-flush-timeout 0 threaded disabled" {
		t.Errorf("restore: failed %v, rows %+v", rr.Failed, rr.Steer)
	}
	if got := napiState(f.napi); got != want {
		t.Errorf("after restore: %s, want %s", got, want)
	}
}

// TestNAPIStepRollback: a failure after the NAPI step, or its refusal,
// leaves the instance as it was.
func TestNAPIStepRollback(t *testing.T) {
	on := nicset.DataSplitOn
	steps := []SteerStep{napiStep(), {NIC: "eth0", Rings: &nicset.RingSetting{TCPDataSplit: &on}}}
	tests := []struct {
		name      string
		fault     func(int) error
		refuse    string
		wantCalls []string
	}{
		{"fault after it", func(i int) error {
			if i == 1 {
				return errors.New("injected fault")
			}
			return nil
		}, "", []string{"napi", "napi"}},
		{"the rings refused", nil, "rings", []string{"napi", "rings", "napi"}},
		{"it refused", nil, "napi", []string{"napi"}},
	}
	for _, tt := range tests {
		root := hosttest.Copy(t, "seed")
		f := newFakeNIC(1)
		want := napiState(f.napi)
		if tt.refuse != "" {
			f.refuse[tt.refuse] = &nicset.SetError{Op: tt.refuse + "-set", NIC: "eth0", Errno: unix.EPERM}
		}
		res, err := steerPinSteps(t, root, f, tt.fault, steps)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if res.Stop != StopFailed || res.Err() == nil {
			t.Errorf("%s: stop %v, err %v; want a failed pin", tt.name, res.Stop, res.Err())
		}
		if got := napiState(f.napi); got != want {
			t.Errorf("%s: after the rollback %s, want %s", tt.name, got, want)
		}
		if !cmp.Equal(f.calls, tt.wantCalls) {
			t.Errorf("%s: calls %v, want %v", tt.name, f.calls, tt.wantCalls)
		}
	}
}

// TestNAPIStepUnsaveable: a setting whose current value the kernel does
// not report, an instance the NIC lacks, or a value the kernel refuses
// stops the pin before any change.
func TestNAPIStepUnsaveable(t *testing.T) {
	tests := []struct {
		name string
		edit func(f *fakeNIC, s *NAPIStep)
		want string
	}{
		{"threaded not reported", func(f *fakeNIC, _ *NAPIStep) { f.napi.Threaded = nil }, "napi-get reports no threaded for NAPI 8193"},
		{"another instance", func(_ *fakeNIC, s *NAPIStep) { s.ID = 8194 }, "eth0 has no NAPI instance 8194"},
		{"defer past S32_MAX", func(_ *fakeNIC, s *NAPIStep) { s.DeferHardIRQs = ptr(uint32(math.MaxInt32 + 1)) }, "more than the kernel takes"},
		{"nothing", func(_ *fakeNIC, s *NAPIStep) { s.NAPISetting = nicset.NAPISetting{} }, "sets nothing"},
	}
	for _, tt := range tests {
		f := newFakeNIC(1)
		s := napiStep()
		tt.edit(f, s.NAPI)
		_, err := steerPinSteps(t, hosttest.Copy(t, "seed"), f, nil, []SteerStep{s})
		if !errors.Is(err, ErrUnsaveable) || !strings.Contains(err.Error(), tt.want) || len(f.calls) != 0 {
			t.Errorf("%s: Pin = %v, calls %v; want ErrUnsaveable saying %q and no change", tt.name, err, f.calls, tt.want)
		}
	}
}

// TestStateNAPITampered: a state's NAPI step is refused in a state older
// than version 4, and for a missing id, a value out of range, a field
// irqnuma does not write, no setting, or another part beside it.
func TestStateNAPITampered(t *testing.T) {
	fsys := hosttest.FS(t, "seed")
	real, err := realRoot(fsys)
	if err != nil {
		t.Fatal(err)
	}
	ok := savedStep{NIC: "eth0", NAPI: &savedNAPI{ID: 8193, Threaded: ptr(false)}}
	v3 := pinState{Version: stateVersionSteer, Root: real, Steer: []savedStep{ok}}
	if err := v3.Validate(fsys); !errors.Is(err, ErrBadState) || !strings.Contains(err.Error(), "only version 4 has") {
		t.Errorf("Validate(a version 3 state with a NAPI step) = %v, want ErrBadState", err)
	}
	if err := checkSteer([]savedStep{ok}, stateVersionTune); err != nil {
		t.Errorf("checkSteer(a NAPI step, version 4) = %v", err)
	}
	tests := []struct {
		name string
		give string // the steer member of a state file
		want string // what the parse or checkSteer says
	}{
		{"no id", `[{"nic":"eth0","napi":{"threaded":true}}]`, "NAPI id 0"},
		{"defer past S32_MAX", `[{"nic":"eth0","napi":{"id":8193,"defer_hard_irqs":2147483648}}]`, "more than the kernel takes"},
		{"defer past u32", `[{"nic":"eth0","napi":{"id":8193,"defer_hard_irqs":4294967296}}]`, `field "steer.napi.defer_hard_irqs"`},
		{"negative timeout", `[{"nic":"eth0","napi":{"id":8193,"gro_flush_timeout":-1}}]`, `field "steer.napi.gro_flush_timeout"`},
		{"busy-poll", `[{"nic":"eth0","napi":{"id":8193,"threaded":"busy-poll"}}]`, `field "steer.napi.threaded"`},
		{"unknown field", `[{"nic":"eth0","napi":{"id":8193,"busy_poll":true}}]`, "unknown field"},
		{"no setting", `[{"nic":"eth0","napi":{"id":8193}}]`, "sets nothing"},
		{"beside rings", `[{"nic":"eth0","napi":{"id":8193,"threaded":true},"rings":{}}]`, "holds 2 parts"},
	}
	for _, tt := range tests {
		st, err := parseState([]byte(`{"schema":"state","version":4,"created":"2025-01-01T00:00:00Z","root":"/","entries":[],"steer":` + tt.give + `}`))
		if err == nil {
			err = checkSteer(st.Steer, st.Version)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
}
