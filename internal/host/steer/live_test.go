package steer

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// liveRoot opens the live root for a test that needs root and ethtool.
func liveRoot(t *testing.T) kfile.FS {
	t.Helper()
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("reading every part of a NIC's steering needs root")
	}
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skip("ethtool is not installed (apt-get install ethtool; .ci/run installs it)")
	}
	fsys, err := kfile.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

// recordTree records names into a new tree, with the sysfs and procfs
// files the live reading read, and returns the tree's root.
func recordTree(t *testing.T, fsys kfile.FS, names []string) string {
	t.Helper()
	dir := t.TempDir()
	var mu sync.Mutex
	var read []string
	stop := kfile.Trace(func(a kfile.Access) {
		if a.Root == "/" && a.Op == kfile.OpRead && a.Err == nil {
			mu.Lock()
			read = append(read, a.Rel)
			mu.Unlock()
		}
	})
	err := Record(fsys, names, func(rel string, data []byte) error {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	})
	stop()
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range read {
		b, err := os.ReadFile("/" + rel)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// liveVolatile ignores what changes between two readings of a live NIC:
// its queue counters.
var liveVolatile = cmpopts.IgnoreFields(NIC{}, "QStats")

// TestLiveRecordReplay reads this host's eth0 live, records it, reads the
// recording, and finds the same; and the live values are what ethtool
// prints.
func TestLiveRecordReplay(t *testing.T) {
	fsys := liveRoot(t)
	if _, err := os.Stat("/sys/class/net/eth0"); err != nil {
		t.Skip("no eth0")
	}
	names := []string{"eth0", "lo"}
	live, err := Read(fsys, names)
	if err != nil {
		t.Fatal(err)
	}
	if live.Source != "netlink" {
		t.Errorf("live Source = %q, want netlink", live.Source)
	}
	dir := recordTree(t, fsys, names)
	tree, err := kfile.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	replayed, err := Read(tree, names)
	if err != nil {
		t.Fatal(err)
	}
	if replayed.Source != "recorded" {
		t.Errorf("replayed Source = %q, want recorded", replayed.Source)
	}
	if diff := cmp.Diff(live, replayed, exportValues, liveVolatile, cmpopts.IgnoreFields(Host{}, "Source")); diff != "" {
		t.Errorf("recorded reading differs from the live one (-live +recorded):\n%s", diff)
	}
	// A second replay is byte for byte the first, counters included.
	again, err := Read(tree, names)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(replayed, again, exportValues); diff != "" {
		t.Errorf("two readings of one recording differ:\n%s", diff)
	}
	eth0 := live.NIC("eth0")
	compareEthtool(t, eth0)
}

// ethtool runs ethtool with args and returns its output.
func ethtool(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ethtool", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ethtool %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// sections splits ethtool -l/-g output into its "Pre-set maximums" and
// "Current hardware settings" key: value maps (n/a is 0).
func sections(t *testing.T, out string) (maxima, current map[string]uint32) {
	t.Helper()
	maxima, current = map[string]uint32{}, map[string]uint32{}
	cur := map[string]uint32(nil)
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Pre-set maximums"):
			cur = maxima
			continue
		case strings.HasPrefix(line, "Current hardware settings"):
			cur = current
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || cur == nil {
			continue
		}
		v = strings.TrimSpace(v)
		if v == "n/a" {
			cur[k] = 0
			continue
		}
		if n, err := strconv.ParseUint(v, 10, 32); err == nil {
			cur[k] = uint32(n)
		}
	}
	return maxima, current
}

func compareEthtool(t *testing.T, n *NIC) {
	t.Helper()
	if n.Channels == nil {
		t.Fatalf("eth0 channels unknown: %v", n.Unknown[PartChannels])
	}
	mx, cur := sections(t, ethtool(t, "-l", n.Name))
	wantCh := Channels{MaxRX: mx["RX"], MaxTX: mx["TX"], MaxOther: mx["Other"], MaxCombined: mx["Combined"],
		RX: cur["RX"], TX: cur["TX"], Other: cur["Other"], Combined: cur["Combined"]}
	if diff := cmp.Diff(wantCh, *n.Channels, exportValues); diff != "" {
		t.Errorf("channels differ from ethtool -l (-ethtool +read):\n%s", diff)
	}
	if n.Rings == nil {
		t.Fatalf("eth0 rings unknown: %v", n.Unknown[PartRings])
	}
	mx, cur = sections(t, ethtool(t, "-g", n.Name))
	r := n.Rings
	gotRings := [8]uint32{r.MaxRX, r.MaxRXMini, r.MaxRXJumbo, r.MaxTX, r.RX, r.RXMini, r.RXJumbo, r.TX}
	wantRings := [8]uint32{mx["RX"], mx["RX Mini"], mx["RX Jumbo"], mx["TX"], cur["RX"], cur["RX Mini"], cur["RX Jumbo"], cur["TX"]}
	if gotRings != wantRings {
		t.Errorf("rings = %v, ethtool -g says %v", gotRings, wantRings)
	}
	compareFeatures(t, n)
	compareRSS(t, n)
	compareDriver(t, n)
}

var ethtoolFeature = regexp.MustCompile(`^\s*([a-z0-9-]+): (on|off)( \[fixed\])?`)

func compareFeatures(t *testing.T, n *NIC) {
	t.Helper()
	if n.Features == nil {
		t.Fatalf("features unknown: %v", n.Unknown[PartFeatures])
	}
	matched := 0
	for _, line := range strings.Split(ethtool(t, "-k", n.Name), "\n") {
		m := ethtoolFeature.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f, ok := n.Features[m[1]]
		if !ok {
			continue // one of ethtool's legacy group names
		}
		matched++
		want := Feature{On: m[2] == "on", Fixed: m[3] != ""}
		if f != want {
			t.Errorf("feature %s = %+v, ethtool -k says %q", m[1], f, line)
		}
	}
	t.Logf("%d features compared with ethtool -k", matched)
	if matched < len(n.Features)/2 {
		t.Errorf("only %d of %d features found in ethtool -k", matched, len(n.Features))
	}
}

var ringsLine = regexp.MustCompile(`with (\d+) RX ring\(s\)`)

func compareRSS(t *testing.T, n *NIC) {
	t.Helper()
	out := ethtool(t, "-x", n.Name)
	if n.RSS == nil {
		t.Fatalf("rss unknown: %v", n.Unknown[PartRSS])
	}
	if m := ringsLine.FindStringSubmatch(out); m == nil || m[1] != strconv.Itoa(int(n.RSS.Rings)) {
		t.Errorf("RSS rings = %d, ethtool -x says %q", n.RSS.Rings, m)
	}
	if strings.Contains(out, "indirection table for "+n.Name+" with") && strings.Contains(strings.SplitN(out, "RSS hash key", 2)[0], "Operation not supported") {
		if len(n.RSS.Table) != 0 || n.Unknown[PartRSSTable].Kind != unknown.KindDriver {
			t.Errorf("ethtool -x has no table; read %v, %v", n.RSS.Table, n.Unknown[PartRSSTable])
		}
	}
	on := regexp.MustCompile(`(?m)^\s+(\S+): on$`).FindStringSubmatch(out)
	if on == nil || on[1] != n.RSS.HashFunc {
		t.Errorf("hash function = %q, ethtool -x says %q", n.RSS.HashFunc, on)
	}
}

func compareDriver(t *testing.T, n *NIC) {
	t.Helper()
	if n.Driver == nil {
		t.Fatalf("driver unknown: %v", n.Unknown[PartDriver])
	}
	kv := map[string]string{}
	for _, line := range strings.Split(ethtool(t, "-i", n.Name), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			kv[k] = v
		} else if k, ok := strings.CutSuffix(line, ":"); ok {
			kv[k] = ""
		}
	}
	want := DriverInfo{Driver: kv["driver"], Version: kv["version"], Firmware: kv["firmware-version"], BusInfo: kv["bus-info"]}
	if diff := cmp.Diff(want, *n.Driver, exportValues); diff != "" {
		t.Errorf("driver differs from ethtool -i (-ethtool +read):\n%s", diff)
	}
}

// BenchmarkReadLive reads this host's eth0 live: what the requests
// BenchmarkRead8x64 counts cost against the kernel.
func BenchmarkReadLive(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	if _, err := os.Stat("/sys/class/net/eth0"); err != nil {
		b.Skip("no eth0")
	}
	fsys, err := kfile.Open("/")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Read(fsys, []string{"eth0"}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLiveRSSIoctl reads eth0's RSS with ETHTOOL_GRSSH, the path of
// kernels before 6.2, and finds what netlink's RSS_GET says.
func TestLiveRSSIoctl(t *testing.T) {
	fsys := liveRoot(t)
	if _, err := os.Stat("/sys/class/net/eth0"); err != nil {
		t.Skip("no eth0")
	}
	h, err := Read(fsys, []string{"eth0"})
	if err != nil {
		t.Fatal(err)
	}
	want := h.NICs[0].RSS
	if want == nil {
		t.Skip("eth0 has no RSS over netlink")
	}
	s := newNLSource(ethnl.NewLive(), "netlink")
	defer s.close()
	sets, err := s.strings()
	if err != nil {
		t.Fatal(err)
	}
	n := &NIC{Name: "eth0"}
	r, ok := s.readRSSIoctl(n, sets[ethSSRSSHashFuncs])
	if !ok {
		t.Fatalf("GRSSH: %v", n.Unknown[PartRSS])
	}
	got := r.rss
	got.Rings, got.InputXfrm = want.Rings, want.InputXfrm // netlink and GRXRINGS say these
	if diff := cmp.Diff(*want, got, exportValues); diff != "" {
		t.Errorf("GRSSH differs from RSS_GET (-netlink +ioctl):\n%s", diff)
	}
}
