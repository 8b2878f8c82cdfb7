package tune

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
)

// liveRelease is the running kernel's major and minor version.
func liveRelease(t *testing.T) (major, minor int) {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err == nil {
		_, err = fmt.Sscanf(string(b), "%d.%d", &major, &minor)
	}
	if err != nil {
		t.Fatalf("the kernel's release: %v", err)
	}
	return major, minor
}

// deviceKnobs are eth0's device-wide NAPI files, which a per-NAPI set
// leaves alone.
func deviceKnobs(t *testing.T, nic string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range []string{"threaded", "napi_defer_hard_irqs", "gro_flush_timeout"} {
		b, err := os.ReadFile(filepath.Join("/sys/class/net", nic, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = strings.TrimSpace(string(b))
	}
	return out
}

// TestNAPISetLive sets every setting of eth0's first NAPI instance with
// a NAPI steering step (saved, made, read back) and undoes it from what
// was saved, checking in napi-get that the instance ends as it began,
// its kernel thread (none, or the same) included, and the device-wide
// files unchanged. On a kernel before 6.13 the set fails, saying the
// kernel has no napi-set.
func TestNAPISetLive(t *testing.T) {
	const nic = "eth0"
	hosttest.Writes(t, nic+"'s per-NAPI settings (netdev napi-set)")
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("not root: napi-set needs CAP_NET_ADMIN")
	}
	set, err := nicset.OpenSetter(hosttest.Open(t, "/"))
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if major, minor := liveRelease(t); major < 6 || major == 6 && minor < 13 {
		err := set.SetNAPI(nic, 1, nicset.NAPISetting{DeferHardIRQs: ptr(uint32(0))})
		if !errors.Is(err, nicset.ErrNoNAPISet) || !strings.Contains(err.Error(), "Linux 6.13") {
			t.Fatalf("SetNAPI on Linux %d.%d = %v, want ErrNoNAPISet", major, minor, err)
		}
		return
	}
	n, err := set.Read(nic)
	if err != nil {
		t.Fatal(err)
	}
	if len(n.NAPIs) == 0 {
		t.Skipf("%s: napi-get lists no NAPI instance (%v)", nic, n.Unknown[steer.PartNAPI])
	}
	before, knobs := cloneNAPI(n.NAPIs[0]), deviceKnobs(t, nic)
	step := SteerStep{NIC: nic, NAPI: &NAPIStep{ID: before.ID, NAPISetting: nicset.NAPISetting{
		DeferHardIRQs:   ptr(*before.DeferHardIRQs%1000 + 2),
		GROFlushTimeout: ptr(*before.GROFlushTimeout%1_000_000 + 20000),
	}}}
	if before.IRQSuspendTimeout != nil {
		// Past a u32: the attribute is 8 bytes.
		step.NAPI.IRQSuspendTimeout = ptr(*before.IRQSuspendTimeout%1_000_000 + 5_000_000_000)
	}
	if before.Threaded != nil { // 6.17 and later
		step.NAPI.Threaded = ptr(!*before.Threaded)
	}
	saved, err := saveSteer(set, []SteerStep{step})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s, saved %s", step.Name(), savedText(saved[0]))
	undone := false
	t.Cleanup(func() {
		if !undone {
			if err := undoStep(set, saved[0]); err != nil {
				t.Errorf("put %s back: %v", savedKind(saved[0]), err)
			}
		}
	})
	if err := applyStep(set, step, &saved[0]); err != nil {
		t.Fatalf("%s: %v", step.Name(), err)
	}
	if n, err = set.Read(nic); err != nil {
		t.Fatal(err)
	}
	got := cloneNAPI(n.NAPIs[0])
	if *got.DeferHardIRQs != *step.NAPI.DeferHardIRQs || *got.GROFlushTimeout != *step.NAPI.GROFlushTimeout {
		t.Errorf("after the set napi-get says %+v", got)
	}
	if step.NAPI.Threaded != nil && *step.NAPI.Threaded && got.PID == 0 {
		t.Errorf("threaded enabled, and napi-get names no kernel thread")
	}
	undone = true
	if err := undoStep(set, saved[0]); err != nil {
		t.Fatalf("undo %s: %v", savedKind(saved[0]), err)
	}
	if n, err = set.Read(nic); err != nil {
		t.Fatal(err)
	}
	after := n.NAPIs[0]
	if napiState(after) != napiState(before) || after.PID != before.PID {
		t.Errorf("NAPI not as it was: %s pid %d, before %s pid %d", napiState(after), after.PID, napiState(before), before.PID)
	}
	if diff := cmp.Diff(knobs, deviceKnobs(t, nic)); diff != "" {
		t.Errorf("%s's device-wide NAPI files changed (-before +after):\n%s", nic, diff)
	}
}
