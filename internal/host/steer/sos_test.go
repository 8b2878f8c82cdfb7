package steer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// openSosTree runs the registered tree sources on root, as a reader of
// the root does, and returns the one that answers.
func openSosTree(t *testing.T, root string) (source, bool) {
	t.Helper()
	fsys := hosttest.Open(t, root)
	for _, ts := range treeSources {
		if src, ok := ts.open(fsys); ok {
			return src, true
		}
	}
	return nil, false
}

func TestSosRegistered(t *testing.T) {
	var rank20 bool
	for _, ts := range treeSources {
		rank20 = rank20 || ts.rank == 20
	}
	if !rank20 {
		t.Fatal("no tree source of rank 20")
	}
	src, ok := openSosTree(t, hosttest.Root("sos-ice"))
	if !ok || src.name() != "sosreport" {
		t.Fatalf("sos-ice: source %v, %v; want the sosreport source", src, ok)
	}
	if err := src.close(); err != nil {
		t.Error(err)
	}
	// A host tree without sos_commands/networking/ is not a sosreport.
	if src, ok := openSosTree(t, hosttest.Root("vm-virtio")); ok && src.name() == "sosreport" {
		t.Error("vm-virtio read as a sosreport")
	}
}

func TestSosIce(t *testing.T) {
	src, ok := openSosTree(t, hosttest.Root("sos-ice"))
	if !ok {
		t.Fatal("sos-ice: no source")
	}
	n := &NIC{Name: "em1"}
	src.read(n)
	if want := (DriverInfo{"ice", "6.15.3-3.gdc.el9.x86_64", "4.51 0x8001e501 23.0.8", "0000:63:00.0"}); n.Driver == nil || *n.Driver != want {
		t.Errorf("driver %+v, want %+v", n.Driver, want)
	}
	if want := (Channels{MaxRX: 64, MaxTX: 64, MaxOther: 1, MaxCombined: 64, Other: 1, Combined: 8}); n.Channels == nil || *n.Channels != want {
		t.Errorf("channels %+v, want %+v", n.Channels, want)
	}
	if n.Rings == nil || n.Rings.RX != 8160 || unknown.Is(n.Rings.TCPDataSplit, TCPDataSplitEnabled) || n.Rings.TCPDataSplit.Why() != DataSplitNA {
		t.Errorf("rings %+v, want RX 8160 and no TCP data split (ethtool's n/a)", n.Rings)
	}
	if f := n.Features["ntuple-filters"]; !f.On || len(n.Features) != 63 {
		t.Errorf("ntuple-filters %+v of %d features, want on of 63", f, len(n.Features))
	}
	if n.Coalesce["rx-usecs"] != 12 || n.Coalesce["tx-usecs"] != 28 {
		t.Errorf("coalesce %v, want rx-usecs 12, tx-usecs 28", n.Coalesce)
	}
	port := uint16(5201)
	any0 := uint16(0)
	wantRules := &Rules{Count: 1, Rules: []Rule{{
		Location: 1023, FlowType: "tcp4", SrcIP: "0.0.0.0", SrcMask: "0.0.0.0", DstIP: "10.0.0.2", DstMask: "255.255.255.255",
		SrcPort: &any0, DstPort: &port, DstPortMask: 0xffff, Action: RuleActionQueue, Queue: 2,
	}}}
	if diff := cmp.Diff(wantRules, n.Rules, exportValues); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	want := map[Part]unknown.Kind{
		PartRSS: unknown.KindNotCaptured, PartContexts: unknown.KindNotCaptured, PartFlowHash: unknown.KindNotCaptured,
		FlowHashPart("tcp4"): unknown.KindNotCaptured, FlowHashPart("udp4"): unknown.KindNotCaptured,
		FlowHashPart("tcp6"): unknown.KindNotCaptured, FlowHashPart("udp6"): unknown.KindNotCaptured,
		PartQueues: unknown.KindNotCaptured, PartNAPI: unknown.KindNotCaptured, PartQStats: unknown.KindNotCaptured,
		PartPrivFlags: unknown.KindNotCaptured,
	}
	got := map[Part]unknown.Kind{}
	for p, r := range n.Unknown {
		got[p] = r.Kind
	}
	if diff := cmp.Diff(want, got, exportValues); diff != "" {
		t.Errorf("unknown parts (-want +got):\n%s", diff)
	}
	if d := n.Unknown[PartRSS].Detail; !strings.Contains(d, "ethtool -x") {
		t.Errorf("RSS unknown detail %q does not say sos lacks ethtool -x", d)
	}
	if d := n.Unknown[PartPrivFlags].Detail; d != "no sos_commands/networking/ethtool_--show-priv-flags_em1" {
		t.Errorf("priv flags unknown detail %q, want the absent file named", d)
	}
}

// TestSosFromCaptures builds a sosreport tree from the real bnxt_en
// captures, with what a sosreport holds when ethtool fails or a file
// is not ethtool's, and reads it through a traced kfile.FS.
func TestSosFromCaptures(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, sosDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"ethtool_-i_isp1": readNIC(t, "ethtool-i/bnxt_en_isp1.txt"),
		"ethtool_-k_isp1": readNIC(t, "ethtool-k/bnxt_en_isp1_ntuple_on.txt"),
		"ethtool_-c_isp1": readNIC(t, "ethtool-c/bnxt_en_isp1.txt"),
		"ethtool_-g_isp1": readNIC(t, "ethtool-g/bnxt_en_isp1_whitespace_stripped.txt"),
		// What ethtool writes when the driver has no get_channels.
		"ethtool_-l_isp1": []byte("netlink error: Operation not supported\n"),
		// ethtool's messages when the driver has no rule table.
		"ethtool_--show-ntuple_isp1": []byte("4 RX rings available\nrxclass: Cannot get RX class rule count: Operation not supported\nRX classification rule retrieval failed\n"),
		// Not ethtool's output.
		"ethtool_--show-priv-flags_isp1": []byte("Private flags for isp1:\nlegacy-rx: maybe\n"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := kfile.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	src, ok := openSos(fsys)
	if !ok {
		t.Fatal("the tree is not seen as a sosreport")
	}
	read := map[string]bool{}
	stop := kfile.Trace(func(a kfile.Access) {
		if a.Op == kfile.OpRead {
			read[a.Rel] = true
		}
	})
	n := &NIC{Name: "isp1"}
	src.read(n)
	stop()
	for name := range files {
		if !read[sosDir+"/"+name] {
			t.Errorf("%s was not read through the FS", name)
		}
	}
	if n.Driver == nil || n.Driver.Driver != "bnxt_en" || n.Rings == nil || n.Rings.MaxRXJumbo != 8191 || n.Coalesce["rx-usecs"] != 14 || !n.Features["ntuple-filters"].On {
		t.Errorf("bnxt_en: driver %+v rings %+v coalesce %v ntuple %v", n.Driver, n.Rings, n.Coalesce, n.Features["ntuple-filters"])
	}
	for _, c := range []struct {
		part Part
		why  unknown.Kind
		in   string
	}{
		{PartChannels, unknown.KindDriver, "ethtool_-l_isp1: netlink error: Operation not supported"},
		{PartRules, unknown.KindDriver, "ethtool_--show-ntuple_isp1: rxclass: Cannot get RX class rule count"},
		{PartPrivFlags, unknown.KindMalformed, "ethtool_--show-priv-flags_isp1: ethtool --show-priv-flags: line 2"},
	} {
		r, ok := n.Why(c.part)
		if !ok || r.Kind != c.why || !strings.Contains(r.Detail, c.in) {
			t.Errorf("%s: unknown %v %v, want %q saying %q", c.part, ok, r, c.why, c.in)
		}
	}
	if n.Channels != nil || n.Rules != nil || n.PrivFlags != nil {
		t.Errorf("parts set that are unknown: channels %v rules %v priv flags %v", n.Channels, n.Rules, n.PrivFlags)
	}
	// An interface the report has nothing of, and a name that is no file.
	for _, name := range []string{"eth9", "../x"} {
		n := &NIC{Name: name}
		src.read(n)
		if n.Driver != nil || n.Channels != nil || n.Features != nil {
			t.Errorf("%s: parts read from nothing", name)
		}
		for _, p := range []Part{PartDriver, PartChannels, PartRings, PartFeatures, PartCoalesce, PartRules, PartPrivFlags} {
			if _, ok := n.Why(p); !ok {
				t.Errorf("%s: %s neither read nor said unknown", name, p)
			}
		}
	}
}
