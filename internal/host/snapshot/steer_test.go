package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestSnapshotReplaysSteering snapshots the running machine and reads
// every interface's steering from the snapshot: what the live kernel
// said, queue counters aside (packets keep arriving), replayed from the
// recorded netlink and ioctl answers.
func TestSnapshotReplaysSteering(t *testing.T) {
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("reading every part of the steering needs root")
	}
	ents, err := os.ReadDir("/sys/class/net")
	if err != nil || len(ents) == 0 {
		t.Skip("no live /sys/class/net")
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	dir, _ := snap(t, "/", Options{})
	if _, err := os.Stat(filepath.Join(dir, steer.RecordDir, names[0])); err != nil {
		t.Fatalf("the snapshot holds no recorded steering of %s: %v", names[0], err)
	}
	live, err := kfile.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	want, err := steer.Read(live, names)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := kfile.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	got, err := steer.Read(tree, names)
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != "recorded" {
		t.Errorf("snapshot's steering Source = %q, want recorded", got.Source)
	}
	opts := append([]cmp.Option{cmpopts.IgnoreFields(steer.NIC{}, "QStats"), cmpopts.IgnoreFields(steer.Host{}, "Source")}, cmpReadings...)
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("snapshot's steering differs (-live +snapshot):\n%s", diff)
	}
}
