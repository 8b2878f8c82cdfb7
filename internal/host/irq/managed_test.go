package irq

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// managedOf loads every IRQ of root and returns managed per IRQ:
// "yes", "no" or "unknown".
func managedOf(t *testing.T, root string) map[int]string {
	t.Helper()
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Load(h, Options{All: true})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, q := range tab.IRQs {
		switch managed, known := q.Managed.Get(); {
		case !known:
			out[q.IRQ] = "unknown"
		case managed:
			out[q.IRQ] = "yes"
		default:
			out[q.IRQ] = "no"
		}
	}
	return out
}

// chmodAll sets the mode of every /proc/irq/*/<file> of root.
func chmodAll(t *testing.T, root, file string, mode os.FileMode) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(root, "proc/irq/*", file))
	if len(paths) == 0 {
		t.Fatalf("no proc/irq/*/%s", file)
	}
	for _, p := range paths {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}

func writeRelease(t *testing.T, root, release string) {
	t.Helper()
	p := filepath.Join(root, "proc/sys/kernel/osrelease")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(release+"\n"), 0o444); err != nil {
		t.Fatal(err)
	}
}

// TestManagedFromModes: managed is known only where the modes are the
// kernel's and the kernel is one that marks managed IRQs. vm-virtio's
// IRQ 36 (virtio1-req.0) is the managed one, 0444 beside 0644 files.
func TestManagedFromModes(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, root string)
		want36  string // the managed IRQ
		want26  string // ttyS0, settable
	}{
		{"kernel modes, read-only beside writable", func(*testing.T, string) {}, "yes", "no"},
		{"6.1: every smp_affinity writable", func(t *testing.T, root string) {
			chmodAll(t, root, "smp_affinity", 0o644)
			chmodAll(t, root, "smp_affinity_list", 0o644)
			writeRelease(t, root, "6.1.0-57-amd64")
		}, "unknown", "unknown"},
		{"no release, every smp_affinity writable", func(t *testing.T, root string) {
			chmodAll(t, root, "smp_affinity", 0o644)
			chmodAll(t, root, "smp_affinity_list", 0o644)
		}, "unknown", "unknown"},
		{"6.12: every smp_affinity writable", func(t *testing.T, root string) {
			chmodAll(t, root, "smp_affinity", 0o644)
			chmodAll(t, root, "smp_affinity_list", 0o644)
			writeRelease(t, root, "6.12.117+deb12-amd64")
		}, "no", "no"},
		{"modes lost: node writable", func(t *testing.T, root string) {
			chmodAll(t, root, "node", 0o644)
			writeRelease(t, root, "6.18.44")
		}, "unknown", "unknown"},
		{"modes lost: effective_affinity_list writable", func(t *testing.T, root string) {
			chmodAll(t, root, "effective_affinity_list", 0o664)
		}, "unknown", "unknown"},
		{"modes lost: nothing writable", func(t *testing.T, root string) {
			chmodAll(t, root, "smp_affinity", 0o444)
			chmodAll(t, root, "smp_affinity_list", 0o444)
			// as a capture that copies read-only does (dell-2numa)
			if err := os.Chmod(filepath.Join(root, "proc/irq/default_smp_affinity"), 0o444); err != nil {
				t.Fatal(err)
			}
			writeRelease(t, root, "6.12.117+deb12-amd64")
		}, "unknown", "unknown"},
		{"modes lost: nothing writable, no default_smp_affinity", func(t *testing.T, root string) {
			chmodAll(t, root, "smp_affinity", 0o444)
			chmodAll(t, root, "smp_affinity_list", 0o444)
			if err := os.Remove(filepath.Join(root, "proc/irq/default_smp_affinity")); err != nil {
				t.Fatal(err)
			}
			writeRelease(t, root, "6.12.117+deb12-amd64")
		}, "unknown", "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := hosttest.Copy(t, "vm-virtio")
			tt.prepare(t, root)
			got := managedOf(t, root)
			if got[36] != tt.want36 || got[26] != tt.want26 {
				t.Errorf("managed of IRQ 36, 26 = %s, %s, want %s, %s", got[36], got[26], tt.want36, tt.want26)
			}
		})
	}
}

// TestManagedNICOnly: loading only a NIC's IRQs, all writable, still
// finds the read-only one elsewhere that shows the kernel marks them.
func TestManagedNICOnly(t *testing.T) {
	root := hosttest.Copy(t, "vm-virtio")
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Load(h, Options{NICs: []string{"eth0"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.IRQs) == 0 {
		t.Fatal("no eth0 IRQs")
	}
	for _, q := range tab.IRQs {
		if !unknown.Is(q.Managed, false) {
			t.Errorf("IRQ %d: managed %s (%s), want known not managed", q.IRQ, q.Managed, q.Managed.Why())
		}
	}
}

func TestParseRelease(t *testing.T) {
	tests := []struct {
		give         string
		major, minor int
		ok           bool
	}{
		{"6.1.0-57-amd64", 6, 1, true},
		{"6.12.117+deb12-amd64\n", 6, 12, true},
		{"5.14.0-427.el9.x86_64", 5, 14, true},
		{"6.18-rc1", 6, 18, true},
		{"6", 0, 0, false},
		{"", 0, 0, false},
		{"x.y", 0, 0, false},
	}
	for _, tt := range tests {
		major, minor, ok := parseRelease(tt.give)
		if major != tt.major || minor != tt.minor || ok != tt.ok {
			t.Errorf("parseRelease(%q) = %d, %d, %v, want %d, %d, %v", tt.give, major, minor, ok, tt.major, tt.minor, tt.ok)
		}
	}
}
