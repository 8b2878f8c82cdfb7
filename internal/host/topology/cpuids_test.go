package topology

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

func writeTree(t *testing.T, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(p) // the copy's files are read-only
	if err := os.WriteFile(p, []byte(data), 0o444); err != nil {
		t.Fatal(err)
	}
}

// TestCPUIDsPastNRCPUs: a CPU id at or past 8192 (NR_CPUS at its largest)
// in online or possible is refused, naming the file; 8191 is a CPU.
func TestCPUIDsPastNRCPUs(t *testing.T) {
	tests := []struct {
		file, give string
		wantErr    string // "" when the tree reads
	}{
		{"online", "0-63,8192\n", "cpu/online: CPU 8192 is past 8191"},
		{"online", "0-1048575\n", "cpu/online: CPU 1048575 is past 8191"},
		{"possible", "0-1048575\n", "cpu/possible: CPU 1048575 is past 8191"},
		{"possible", "0-63,8191\n", ""},
	}
	for _, tt := range tests {
		root := hosttest.Copy(t, "seed")
		writeTree(t, root, "sys/devices/system/cpu/"+tt.file, tt.give)
		h, err := Read(hosttest.Open(t, root))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s %q: %v", tt.file, tt.give, err)
		case tt.wantErr == "" && h.MaxCPUs() != 8192:
			t.Errorf("%s %q: MaxCPUs() = %d, want 8192", tt.file, tt.give, h.MaxCPUs())
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "NR_CPUS")):
			t.Errorf("%s %q: error %v, want one saying %q and NR_CPUS", tt.file, tt.give, err, tt.wantErr)
		}
	}
}

// TestCPUFolderPastNRCPUs: without cpu/possible the cpuN folders say
// which CPUs exist; a cpu1048575 folder is no CPU, as cpufreq is not.
func TestCPUFolderPastNRCPUs(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	if err := os.Remove(filepath.Join(root, "sys/devices/system/cpu/possible")); err != nil {
		t.Fatal(err)
	}
	writeTree(t, root, "sys/devices/system/cpu/cpu1048575/online", "1\n")
	h, err := Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Possible.String(); got != "0-63" {
		t.Errorf("possible %s, want 0-63", got)
	}
}

// TestDistanceMatrixNotSquare: a distance row whose length is not the
// number of nodes makes every distance unknown, with a note naming the
// file; a square matrix is kept.
func TestDistanceMatrixNotSquare(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(t *testing.T, root string)
		want   string // in a note; "" when the distances are kept
	}{
		{"square", func(t *testing.T, root string) {}, ""},
		{"long row", func(t *testing.T, root string) {
			writeTree(t, root, "sys/devices/system/node/node1/distance", "21 10 31\n")
		}, "node1/distance has 3 distances for 2 nodes"},
		{"short row", func(t *testing.T, root string) {
			writeTree(t, root, "sys/devices/system/node/node0/distance", "10\n")
		}, "node0/distance has 1 distances for 2 nodes"},
		{"node folder gone", func(t *testing.T, root string) {
			if err := os.RemoveAll(filepath.Join(root, "sys/devices/system/node/node1")); err != nil {
				t.Fatal(err)
			}
		}, "node0/distance has 2 distances for 1 nodes"},
	}
	for _, tt := range tests {
		root := hosttest.Copy(t, "seed")
		tt.mutate(t, root)
		h, err := Read(hosttest.Open(t, root))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for _, n := range h.Nodes {
			if known := n.Distances.Known(); known != (tt.want == "") {
				t.Errorf("%s: node %d distances %v, want known %v", tt.name, n.ID, n.Distances, tt.want == "")
			}
		}
		if tt.want != "" && !hasNote(h, tt.want) {
			t.Errorf("%s: no note says %q: %q", tt.name, tt.want, h.Notes)
		}
	}
}

// TestLookupNICClipsName: an unknown NIC's name, however long, is quoted
// cut at 64 bytes, saying how many bytes were left out.
func TestLookupNICClipsName(t *testing.T) {
	h, err := Read(hosttest.Open(t, hosttest.Root("seed")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.LookupNIC(strings.Repeat("x", 114000))
	want := `unknown NIC "` + strings.Repeat("x", 64) + `"... (113936 more bytes) (this host has: `
	if !errors.Is(err, ErrUnknownNIC) || len(err.Error()) > 300 || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("LookupNIC(114 KB) error %.400v, want one starting %s", err, want)
	}
	if _, err := h.LookupNIC("eth9"); err == nil || !strings.HasPrefix(err.Error(), `unknown NIC "eth9" (this host has: `) {
		t.Errorf("LookupNIC(eth9) error %v", err)
	}
}

// TestReadHostCPUs: the CPUs a host has are those Read builds a CPU for,
// on every host tree (offline-2node's offline ones included, sos-ice's
// without cpuN folders from online); a possible naming hot-plug slots
// past the cpuN folders adds none; an online past NR_CPUS is the error
// Read gives.
func TestReadHostCPUs(t *testing.T) {
	for _, name := range []string{"arm64", "nps2", "offline-2node", "seed", "sos-ice", "vm-virtio"} {
		fsys := hosttest.Open(t, hosttest.Root(name))
		h, err := Read(fsys)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int
		for _, c := range h.CPUs {
			ids = append(ids, c.ID)
		}
		got, err := ReadHostCPUs(fsys)
		if want := cpuset.New(ids...); err != nil || !got.Equal(want) {
			t.Errorf("%s: ReadHostCPUs = %s, %v; want %s", name, got, err, want)
		}
	}
	tests := []struct {
		file, give string
		want       string // the CPUs, or the error's text
	}{
		{"possible", "0-127\n", "0-63"},
		{"online", "0-63,8192\n", "CPU 8192 is past 8191"},
	}
	for _, tt := range tests {
		root := hosttest.Copy(t, "seed")
		writeTree(t, root, "sys/devices/system/cpu/"+tt.file, tt.give)
		got, err := ReadHostCPUs(hosttest.Open(t, root))
		if (err == nil && got.String() != tt.want) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s %q: ReadHostCPUs = %s, %v; want %s", tt.file, tt.give, got, err, tt.want)
		}
	}
}
