package nslink

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
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
		if _, err := RecordHost(live, put); err != nil {
			t.Fatal(err)
		}
		l, ok := got.ByName(np.NsIface)
		if !got.Links.Known() || !got.InitNSID.Known() || !ok || !got.InHost(l) {
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
		if diff := cmp.Diff(got, replayed, cmpopts.IgnoreFields(Links{}, "Source"), cmp.AllowUnexported(unknown.Value[int]{}, unknown.Value[[]Link]{})); diff != "" {
			t.Errorf("%s: replayed differs from live (-live +replayed):\n%s", ns, diff)
		}
	}
}

// TestLiveRecordHost records the host namespace's links and reads the
// recording back as the live reading of them (zc check's source for
// IFLA_XDP), eth0's XDP state included.
func TestLiveRecordHost(t *testing.T) {
	live, err := kfile.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/sys/class/net/eth0"); err != nil {
		t.Skip("this host has no eth0")
	}
	ns := HostNamespace(live)
	if ns == "" {
		t.Skip("the host's network namespace cannot be read here")
	}
	root := t.TempDir()
	var names []string
	put := func(rel string, data []byte) error {
		names = append(names, rel)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(root, rel), data, 0o644)
	}
	got, err := RecordHost(live, put)
	if err != nil {
		t.Fatal(err)
	}
	ino, _ := Inode(ns)
	dir := filepath.Join(RecordDir, strconv.FormatUint(ino, 10))
	if want := []string{filepath.Join(RecordDir, "host"), filepath.Join(dir, "links")}; len(names) < 2 || !cmp.Equal(names[:2], want) {
		t.Errorf("recorded %q, want %q first", names, want)
	}
	if l, ok := got.ByName("eth0"); !got.Links.Known() || !ok || !l.XDP.Reported {
		t.Fatalf("live %+v: want its links known with eth0's IFLA_XDP", got)
	}
	tree, err := kfile.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if hn := HostNamespace(tree); hn != ns {
		t.Errorf("recorded host namespace %q, live %q", hn, ns)
	}
	replayed, err := Read(tree, 0, ns)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, replayed, cmpopts.IgnoreFields(Links{}, "Source"), cmp.AllowUnexported(unknown.Value[int]{}, unknown.Value[[]Link]{})); diff != "" {
		t.Errorf("replayed differs from live (-live +replayed):\n%s", diff)
	}
	if _, err := RecordHost(tree, put); err == nil {
		t.Error("RecordHost on a captured root: no error")
	}
}
