package nicuse

import (
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// liveUse reads the live host and says which NICs process pid uses.
func liveUse(t *testing.T, pid int) Use {
	t.Helper()
	fsys, err := kfile.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	h, err := topology.Read(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h.NICByName("eth0"); !ok {
		t.Skip("this host has no NIC eth0")
	}
	p, err := proc.Read(fsys, pid)
	if err != nil {
		t.Fatal(err)
	}
	return Of(h, p)
}

// TestLiveMacvlan: a process whose namespace's only interface is a
// macvlan on eth0 is attributed to eth0, through the macvlan.
func TestLiveMacvlan(t *testing.T) {
	np := hosttest.MacvlanProc(t, "eth0")
	u := liveUse(t, np.PID)
	t.Logf("%s: %q", u.Netns, u.How)
	if !unknown.Is(u.Attribution, AttributionSockets) || !slices.Equal(u.NICs, []string{"eth0"}) {
		t.Fatalf("Of(macvlan process) = %s %v, want sockets [eth0]; how: %q", u.Attribution, u.NICs, u.How)
	}
	want := "macvlan " + np.NsIface + " on the host's eth0"
	if !strings.Contains(u.How[0], want) || !strings.HasPrefix(u.Netns, "net:[") {
		t.Errorf("How[0] = %q, Netns %q; want it to say %q", u.How[0], u.Netns, want)
	}
}

// TestLiveVeth: a process behind a veth is attributed through the
// host's route to its peer: 203.0.113.5 goes by the host's default
// route, through eth0.
func TestLiveVeth(t *testing.T) {
	np := hosttest.VethProc(t)
	u := liveUse(t, np.PID)
	t.Logf("%s: %q", u.Netns, u.How)
	if !unknown.Is(u.Attribution, AttributionSockets) || !slices.Equal(u.NICs, []string{"eth0"}) {
		t.Fatalf("Of(veth process) = %s %v, want sockets [eth0]; how: %q", u.Attribution, u.NICs, u.How)
	}
	want := np.NsIface + " → host peer " + np.HostIface + " → route to 203.0.113.5 through eth0"
	if !strings.Contains(u.How[0], want) {
		t.Errorf("How[0] = %q, want it to say %q", u.How[0], want)
	}
}
