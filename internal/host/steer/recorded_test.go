package steer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func openTree(t testing.TB, root string) kfile.FS {
	t.Helper()
	fsys, err := kfile.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

// TestRecordedModel reads a recorded root written from a model back to
// the model: every part of two 8-queue NICs.
func TestRecordedModel(t *testing.T) {
	root := t.TempDir()
	want := []*NIC{modelNIC(0, 8, 64), modelNIC(1, 8, 128)}
	writeRecorded(t, root, want)
	got, err := Read(openTree(t, root), []string{"eth0", "eth1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != "recorded" {
		t.Errorf("Source = %q, want recorded", got.Source)
	}
	wantHost := &Host{NICs: want, Source: "recorded", Sysctls: map[string]int64{"busy_poll": 0, "busy_read": 0, "rps_sock_flow_entries": 0}}
	if diff := cmp.Diff(wantHost, got, exportValues); diff != "" {
		t.Errorf("recorded root read (-model +read):\n%s", diff)
	}
}

// roundTrips is how many requests one NIC's reading makes, and how many
// a reading makes once whatever the NIC count (two families and the
// string sets). The benchmark reports the same; raising either is a
// decision, made here.
const (
	genlPerNIC   = 9  // channels, rings, coalesce, features, rss, rss dump, queue-get, napi-get, qstats-get
	genlPerRead  = 3  // nlctrl ethtool, nlctrl netdev, strset
	ioctlPerNIC  = 13 // drvinfo, rxrings, 10 rx-flow-hash, rxclsrlcnt
	ioctlPerRule = 1  // rxclsrule, after one rxclsrlall
)

func TestRoundTrips(t *testing.T) {
	root := t.TempDir()
	var nics []*NIC
	var names []string
	for i := range 3 {
		nics = append(nics, modelNIC(i, 4, 16))
		names = append(names, nics[i].Name)
	}
	writeRecorded(t, root, nics)
	fsys := openTree(t, root)
	src, err := openSource(fsys)
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*nlSource)
	if _, err := readWith(fsys, names, s, ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := genlPerRead + 3*genlPerNIC; s.trips.genl != want {
		t.Errorf("netlink round trips for 3 NICs = %d, want %d", s.trips.genl, want)
	}
	if want := 3 * (ioctlPerNIC + 1 + 2*ioctlPerRule); s.trips.ioctl != want {
		t.Errorf("ioctls for 3 NICs with 2 rules each = %d, want %d", s.trips.ioctl, want)
	}
}

// TestRecordedMissing: a NIC the recording lacks is not captured, part
// by part, each naming its file; a garbled answer is unreadable, naming
// its file; an errno file is the kernel's refusal.
func TestRecordedMissing(t *testing.T) {
	root := t.TempDir()
	n := modelNIC(0, 2, 8)
	writeRecorded(t, root, []*NIC{n})
	dir := filepath.Join(root, recordDir, "eth0")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Remove(filepath.Join(dir, "ethtool.rings")))
	must(os.WriteFile(filepath.Join(dir, "ethtool.channels"), []byte{1, 2, 3}, 0o644))
	must(os.Remove(filepath.Join(dir, "netdev.napi-get")))
	must(os.WriteFile(filepath.Join(dir, "netdev.napi-get.errno"), []byte("EPERM\n"), 0o644))
	must(os.Remove(filepath.Join(dir, "ioctl.rxfh.udp4")))
	must(os.WriteFile(filepath.Join(dir, "ioctl.rxfh.udp4.errno"), []byte("EOPNOTSUPP\n"), 0o644))
	must(os.Remove(filepath.Join(dir, "ioctl.rxfh.tcp6")))
	must(os.WriteFile(filepath.Join(dir, "ioctl.rxfh.tcp6.errno"), []byte("EWHAT\n"), 0o644))
	h, err := Read(openTree(t, root), []string{"eth0"})
	if err != nil {
		t.Fatal(err)
	}
	got := h.NICs[0]
	tests := []struct {
		part Part
		why  unknown.Kind
		file string
	}{
		{PartRings, unknown.KindNotCaptured, "ethtool.rings"},
		{PartChannels, unknown.KindMalformed, "ethtool.channels"},
		{PartNAPI, unknown.KindPermission, ""},
		{FlowHashPart("udp4"), unknown.KindDriver, ""},
		{FlowHashPart("tcp6"), unknown.KindMalformed, "ioctl.rxfh.tcp6.errno"},
	}
	for _, tt := range tests {
		r, ok := got.Why(tt.part)
		if !ok || r.Kind != tt.why || !strings.Contains(r.Detail, tt.file) {
			t.Errorf("%s: %v (known %v), want %s naming %q", tt.part, r, ok, tt.why, tt.file)
		}
	}
	if got.Rings != nil || got.Channels != nil || got.NAPIs != nil {
		t.Errorf("unknown parts are set: rings %v channels %v napis %v", got.Rings, got.Channels, got.NAPIs)
	}
	if got.Queues == nil || got.RSS == nil {
		t.Errorf("the parts still recorded were not read")
	}
	// An interface the recording has no folder for: every part not
	// captured.
	must(os.MkdirAll(filepath.Join(root, "sys/class/net/eth9"), 0o755))
	h, err = Read(openTree(t, root), []string{"eth9"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Part{PartChannels, PartRSS, PartFeatures, PartRules, PartDriver, PartQueues} {
		if r, _ := h.NICs[0].Why(p); r.Kind != unknown.KindNotCaptured {
			t.Errorf("eth9 %s: %v, want not captured", p, r)
		}
	}
}

// TestReadErrors: an unknown interface and a malformed sysfs file are
// errors naming them.
func TestReadErrors(t *testing.T) {
	root := t.TempDir()
	writeRecorded(t, root, []*NIC{modelNIC(0, 2, 8)})
	_, err := Read(openTree(t, root), []string{"nope0"})
	if !errors.Is(err, ErrUnknownInterface) || !strings.Contains(err.Error(), "nope0") {
		t.Errorf("Read(nope0) = %v, want ErrUnknownInterface naming it", err)
	}
	p := filepath.Join(root, "sys/class/net/eth0/threaded")
	if err := os.WriteFile(p, []byte("yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Read(openTree(t, root), []string{"eth0"})
	if !errors.Is(err, kfile.ErrFileParse) || !strings.Contains(err.Error(), "threaded") {
		t.Errorf("Read with a malformed threaded = %v, want a parse error naming it", err)
	}
}

// TestNoSource: a tree with neither a recording nor a sosreport says
// every part is not captured, and still reads sysfs.
func TestNoSource(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sys/class/net/eth0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "sys/class/net/eth0/threaded"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Read(openTree(t, root), []string{"eth0"})
	if err != nil {
		t.Fatal(err)
	}
	n := h.NICs[0]
	if h.Source != "none" || n.Sysfs.Threaded == nil || *n.Sysfs.Threaded != 1 {
		t.Errorf("source %q, threaded %v", h.Source, n.Sysfs.Threaded)
	}
	for _, p := range sourceParts {
		if r, _ := n.Why(p); r.Kind != unknown.KindNotCaptured {
			t.Errorf("%s: %v, want not captured", p, r)
		}
	}
}

// BenchmarkRead8x64 reads the steering of 8 NICs of 64 queues each
// (tables of 128 and 512 entries, 64 NAPIs, 2 ntuple rules) from
// recorded answers, and reports the netlink round trips and ioctls one
// reading needs: a live reading makes the same requests.
func BenchmarkRead8x64(b *testing.B) {
	root := b.TempDir()
	var nics []*NIC
	var names []string
	for i := range 8 {
		nics = append(nics, modelNIC(i, 64, []int{128, 512}[i%2]))
		names = append(names, nics[i].Name)
	}
	writeRecorded(b, root, nics)
	fsys := openTree(b, root)
	var genl, ioctl int
	b.ReportAllocs()
	for b.Loop() {
		src, err := openSource(fsys)
		if err != nil {
			b.Fatal(err)
		}
		s := src.(*nlSource)
		if _, err := readWith(fsys, names, s, ReadOptions{}); err != nil {
			b.Fatal(err)
		}
		genl, ioctl = s.trips.genl, s.trips.ioctl
	}
	b.ReportMetric(float64(genl), "netlink-trips/op")
	b.ReportMetric(float64(ioctl), "ioctls/op")
}

// TestRecordedKernelParts: a kernel without the netdev family (6.1), an
// ethtool family that cannot dump RSS contexts (before 6.11), and one
// without a command are unknown.KindKernel, from the recorded family answers.
func TestRecordedKernelParts(t *testing.T) {
	root := t.TempDir()
	writeRecorded(t, root, []*NIC{modelNIC(0, 2, 8)})
	kdir := filepath.Join(root, recordDir, ethnl.KernelDir)
	if err := os.Remove(filepath.Join(kdir, "nlctrl.netdev")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, "nlctrl.netdev.errno"), []byte("ENOENT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ops := map[uint32]uint32{1: 0x0e, 11: 0x0e, 15: 0x0e, 17: 0x0e, 38: 0x0a} // no coalesce-get; rss-get without dump
	if err := os.WriteFile(filepath.Join(kdir, "nlctrl.ethtool"), familyReply(t, "ethtool", 0x1a, ops), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Read(openTree(t, root), []string{"eth0"})
	if err != nil {
		t.Fatal(err)
	}
	n := h.NICs[0]
	for _, p := range []Part{PartQueues, PartNAPI, PartQStats, PartContexts, PartCoalesce} {
		if r, _ := n.Why(p); r.Kind != unknown.KindKernel {
			t.Errorf("%s: %v, want not supported by this kernel", p, r)
		}
	}
	if n.RSS == nil || len(n.RSS.Table) != 8 || n.Channels == nil {
		t.Errorf("the parts this kernel has were not read: rss %v, channels %v", n.RSS, n.Channels)
	}
}

// TestBoundedClaims: a driver claiming 2^31 rules, or a string set of
// 2^31 strings, is not believed and nothing of that size is allocated.
func TestBoundedClaims(t *testing.T) {
	root := t.TempDir()
	writeRecorded(t, root, []*NIC{modelNIC(0, 2, 8)})
	cnt := newRxnfc(ethtoolGRXClsRlCnt, rxnfcSize)
	native.PutUint32(cnt[rxnfcRuleCnt:], 1<<31)
	if err := os.WriteFile(filepath.Join(root, recordDir, "eth0", "ioctl.rxclsrlcnt"), cnt, 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := openTree(t, root)
	var n *NIC
	allocs := testing.AllocsPerRun(1, func() {
		h, err := Read(fsys, []string{"eth0"})
		if err != nil {
			t.Fatal(err)
		}
		n = h.NICs[0]
	})
	if r, _ := n.Why(PartRules); r.Kind != unknown.KindMalformed || !strings.Contains(r.Detail, "2147483648 rules") {
		t.Errorf("rules: %v, want unreadable naming the claim", r)
	}
	if allocs > 20000 {
		t.Errorf("%v allocations", allocs)
	}
	b := enc(t, func(ae *netlink.AttributeEncoder) {
		ae.Nested(ethnlStringsetsSet, func(s *netlink.AttributeEncoder) error {
			s.Uint32(ethnlStringsetID, 4)
			s.Uint32(ethnlStringsetCount, 1<<31)
			return nil
		})
	})
	if _, err := decodeStrset(enc(t, func(ae *netlink.AttributeEncoder) { ae.Bytes(ethnlStrsetStringsets, b) })); err == nil {
		t.Error("a string set of 2^31 strings was accepted")
	}
}

// rxfhAnswers are GRSSH's two answers for an RSS context.
func rxfhAnswers(r RSS) (sizes, full []byte) {
	var hfunc byte
	for i, name := range hashFuncNames {
		if name == r.HashFunc {
			hfunc = 1 << i
		}
	}
	sizes = newRxnfc(ethtoolGRSSH, rxfhSize)
	native.PutUint32(sizes[8:], uint32(len(r.Table)))
	native.PutUint32(sizes[12:], uint32(len(r.Key)))
	sizes[16] = hfunc
	full = append(append([]byte(nil), sizes...), make([]byte, 4*len(r.Table))...)
	for i, q := range r.Table {
		native.PutUint32(full[rxfhSize+4*i:], q)
	}
	full = append(full, r.Key...)
	return sizes, full
}

// TestRecordedRSSIoctl: a kernel without ETHTOOL_MSG_RSS_GET (6.1) has
// its table, key and hash function read with ETHTOOL_GRSSH.
func TestRecordedRSSIoctl(t *testing.T) {
	root := t.TempDir()
	n := modelNIC(0, 4, 32)
	writeRecorded(t, root, []*NIC{n})
	ops := map[uint32]uint32{1: 0x0e, 11: 0x0e, 15: 0x0e, 17: 0x0e, 19: 0x0e}
	kdir := filepath.Join(root, recordDir, ethnl.KernelDir)
	if err := os.WriteFile(filepath.Join(kdir, "nlctrl.ethtool"), familyReply(t, "ethtool", 0x1a, ops), 0o644); err != nil {
		t.Fatal(err)
	}
	sizes, full := rxfhAnswers(*n.RSS)
	dir := filepath.Join(root, recordDir, "eth0")
	for name, b := range map[string][]byte{"ioctl.rssh-sizes": sizes, "ioctl.rssh": full} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := Read(openTree(t, root), []string{"eth0"})
	if err != nil {
		t.Fatal(err)
	}
	got := h.NICs[0]
	if diff := cmp.Diff(n.RSS, got.RSS, exportValues); diff != "" {
		t.Errorf("RSS by ioctl (-model +read):\n%s", diff)
	}
	if r, _ := got.Why(PartContexts); r.Kind != unknown.KindKernel {
		t.Errorf("contexts: %v, want not supported by this kernel", r)
	}
	// The driver of virtio_net without RSS: sizes 0, toeplitz.
	sizes, _ = rxfhAnswers(RSS{HashFunc: "toeplitz"})
	if err := os.WriteFile(filepath.Join(dir, "ioctl.rssh-sizes"), sizes, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err = Read(openTree(t, root), []string{"eth0"})
	if err != nil {
		t.Fatal(err)
	}
	got = h.NICs[0]
	if got.RSS == nil || got.RSS.HashFunc != "toeplitz" || got.RSS.Table != nil || got.Unknown[PartRSSTable].Kind != unknown.KindDriver {
		t.Errorf("virtio-like GRSSH: rss %+v, table %v", got.RSS, got.Unknown[PartRSSTable])
	}
}
