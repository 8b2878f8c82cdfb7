package nslink

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/irqnuma/irqnuma/internal/hosttest"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// TestLiveRecordReplay asks this host's kernel for the links of a
// veth's and a macvlan's namespace, records them, and reads the
// recording back as the live reading.
func TestLiveRecordReplay(t *testing.T) {
	live, err := kfile.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/sys/class/net/eth0"); err != nil {
		t.Skip("this host has no eth0 to put a macvlan on")
	}
	for _, np := range []hosttest.NetnsProc{hosttest.VethProc(t), hosttest.MacvlanProc(t, "eth0")} {
		ns, err := os.Readlink("/proc/" + strconv.Itoa(np.PID) + "/ns/net")
		if err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		put := func(rel string, data []byte) error {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(root, rel), data, 0o644)
		}
		got, err := Record(live, np.PID, ns, put)
		if err != nil {
			t.Fatal(err)
		}
		if err := RecordHost(live, put); err != nil {
			t.Fatal(err)
		}
		l, ok := got.ByName(np.NsIface)
		if !got.Known || !got.InitNSIDKnown || !ok || !got.InHost(l) {
			t.Fatalf("%s: live %+v: want its links known and %s's link on the host", ns, got, np.NsIface)
		}
		if np.HostIface != "" {
			idx, err := os.ReadFile("/sys/class/net/" + np.HostIface + "/ifindex")
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := strconv.Atoi(string(idx[:len(idx)-1])); l.Kind != "veth" || l.Link != want {
				t.Errorf("%s: %+v, want a veth on the host's ifindex %d", np.NsIface, l, want)
			}
		} else if eth0, _ := os.ReadFile("/sys/class/net/eth0/ifindex"); l.Kind != "macvlan" || strconv.Itoa(l.Link)+"\n" != string(eth0) {
			t.Errorf("%s: %+v, want a macvlan on eth0 (ifindex %s)", np.NsIface, l, eth0)
		}
		tree, err := kfile.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		if hn := HostNamespace(tree); hn != HostNamespace(live) || hn == "" {
			t.Errorf("recorded host namespace %q, live %q", hn, HostNamespace(live))
		}
		replayed, err := Read(tree, np.PID, ns)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, replayed, cmpopts.IgnoreFields(Links{}, "Source")); diff != "" {
			t.Errorf("%s: replayed differs from live (-live +replayed):\n%s", ns, diff)
		}
	}
}
