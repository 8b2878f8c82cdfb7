package nslink

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// sample is a pod's namespace: lo, a veth whose peer is ifindex 9 of the
// namespace it calls 0, a macvlan on that namespace's 3, a VF.
var sample = []hosttest.NsLink{
	{Index: 1, Name: "lo", Flags: 0x9},
	{Index: 2, Name: "eth0", Kind: "veth", Link: 9, HasNetNSID: true, Flags: 0x1003},
	{Index: 4, Name: "net1", Kind: "macvlan", Link: 3, HasNetNSID: true, NetNSID: 0},
	{Index: 6, Name: "net2", ParentDev: "0000:3b:02.1", ParentBus: "pci"},
}

func TestDecodeLinks(t *testing.T) {
	t.Parallel()
	got, err := decodeLinks(hosttest.NsLinksBytes(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := []Link{
		{Index: 1, Name: "lo", Flags: 0x9, LinkNetNSID: inThisNamespace},
		{Index: 2, Name: "eth0", Kind: "veth", Link: 9, LinkNetNSID: unknown.Of(0), Flags: 0x1003},
		{Index: 4, Name: "net1", Kind: "macvlan", Link: 3, LinkNetNSID: unknown.Of(0)},
		{Index: 6, Name: "net2", ParentDev: "0000:3b:02.1", ParentBus: "pci", LinkNetNSID: inThisNamespace},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(unknown.Value[int]{})); diff != "" {
		t.Errorf("decodeLinks (-want +got):\n%s", diff)
	}
	if !got[0].Loopback() || got[1].Loopback() {
		t.Errorf("Loopback: lo %v, eth0 %v", got[0].Loopback(), got[1].Loopback())
	}
	if id, err := decodeNSID(hosttest.NsIDBytes(0)); err != nil || id != 0 {
		t.Errorf("decodeNSID(0) = %d, %v", id, err)
	}
	if id, err := decodeNSID(hosttest.NsIDBytes(-1)); err != nil || id != -1 {
		t.Errorf("decodeNSID(-1) = %d, %v", id, err)
	}
}

func TestDecodeLinksMalformed(t *testing.T) {
	t.Parallel()
	good := hosttest.NsLinksBytes(sample[:1])
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := []struct {
		name string
		give []byte
		want string
	}{
		{"short header", good[:10], "shorter than its header"},
		{"length past the end", mut(func(b []byte) []byte { b[0] = 0xff; return b }), "does not fit"},
		{"sequence set", mut(func(b []byte) []byte { b[8] = 1; return b }), "sequence and port are not 0"},
		{"not RTM_NEWLINK", mut(func(b []byte) []byte { b[4] = 20; return b }), "not RTM_NEWLINK"},
		{"empty dump", hosttest.NsLinksBytes(nil), ""},
		{"short ifinfomsg", mut(func(b []byte) []byte { binary.NativeEndian.PutUint32(b, 24); return b[:24] }), "shorter than struct ifinfomsg"},
		{"index 0", mut(func(b []byte) []byte { b[16+4] = 0; return b }), "is not an interface index"},
		{"name without NUL", mut(func(b []byte) []byte { b[len(b)-2] = 'x'; b[len(b)-1] = 'y'; return b }), "not NUL-terminated"},
		{"attribute past the end", mut(func(b []byte) []byte { b[32] = 0x40; return b }), "does not fit"},
		{"two links of one index", append(append([]byte(nil), good...), good...), "index 1 twice"},
		{"two links of one name", hosttest.NsLinksBytes([]hosttest.NsLink{{Index: 1, Name: "eth0"}, {Index: 2, Name: "eth0"}}),
			`message 1: link 2 is named "eth0", as link 1 is`},
		{"60,000 links of one name", oneName(60000), `message 1: link 2 is named "eth0", as link 1 is`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeLinks(tt.give)
			if tt.want == "" {
				if err != nil || len(got) != 0 {
					t.Errorf("decodeLinks = %v, %v; want no links", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("decodeLinks = %d links, %v; want an error saying %q", len(got), err, tt.want)
			}
		})
	}
	if _, err := decodeNSID(append(hosttest.NsIDBytes(0), hosttest.NsIDBytes(1)...)); err == nil {
		t.Error("decodeNSID of two replies: no error")
	}
}

// oneName is a dump of n links, indexes 1 to n, all named eth0.
func oneName(n int) []byte {
	links := make([]hosttest.NsLink, n)
	for i := range links {
		links[i] = hosttest.NsLink{Index: i + 1, Name: "eth0"}
	}
	return hosttest.NsLinksBytes(links)
}

// TestReadRecorded reads a recording as a snapshot holds it, and says
// why when it holds none, or a bad one.
func TestReadRecorded(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	hosttest.WriteNsLinks(t, root, 4026532201, "net:[4026531840]", 0, sample)
	fsys, err := kfile.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := HostNamespace(fsys); got != "net:[4026531840]" {
		t.Errorf("HostNamespace = %q", got)
	}
	ls, err := Read(fsys, 4242, "net:[4026532201]")
	if err != nil {
		t.Fatal(err)
	}
	if !ls.Links.Known() || !ls.InitNSID.Known() || len(ls.Links.Or(nil)) != 4 || ls.Source != "recorded" {
		t.Fatalf("Read = %+v", ls)
	}
	eth0, _ := ls.ByName("eth0")
	net2, _ := ls.ByIndex(6)
	if !ls.InHost(eth0) || ls.InHost(net2) {
		t.Errorf("InHost(eth0) = %v, InHost(net2) = %v", ls.InHost(eth0), ls.InHost(net2))
	}
	ls, err = Read(fsys, 4242, "net:[4026532999]")
	if err != nil || ls.Links.Known() || !strings.Contains(ls.Links.Why().Detail, "irqnuma/netns/4026532999/links not captured") {
		t.Errorf("not captured: %+v, %v", ls, err)
	}
	hosttest.WriteNsLinks(t, root, 4026532300, "net:[4026531840]", 0, nil)
	dir := filepath.Join(root, RecordDir, "4026532300")
	if err := os.WriteFile(filepath.Join(dir, "links"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "init-nsid"), filepath.Join(dir, "init-nsid.errno")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "init-nsid.errno"), []byte("EPERM\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ls, _ = Read(fsys, 4242, "net:[4026532300]")
	if ls.Links.Known() || !strings.Contains(ls.Links.Why().Detail, "links: read ") || !strings.Contains(ls.Links.Why().Detail, "shorter than its header") || !strings.Contains(ls.InitNSID.Why().Detail, "the kernel answered EPERM") {
		t.Errorf("bad recording: %+v", ls)
	}
	if _, err := Read(fsys, 1, "mnt:[4026531840]"); !errors.Is(err, ErrBadNamespace) {
		t.Errorf("Read(mnt:) = %v, want ErrBadNamespace", err)
	}
}

// TestDecodeReal decodes replies Linux 6.18 sent (testdata/README).
func TestDecodeReal(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		dir, name, kind string
		link            int
	}{{"veth", "inn032781", "veth", -1}, {"macvlan", "inn032782", "macvlan", 4}} {
		b, err := os.ReadFile(filepath.Join("testdata", tt.dir, "links"))
		if err != nil {
			t.Fatal(err)
		}
		links, err := decodeLinks(b)
		if err != nil {
			t.Fatalf("%s: %v", tt.dir, err)
		}
		ls := &Links{Links: unknown.Of(links)}
		if b, err = os.ReadFile(filepath.Join("testdata", tt.dir, "init-nsid")); err != nil {
			t.Fatal(err)
		}
		id, err := decodeNSID(b)
		if err != nil || id != 0 {
			t.Errorf("%s: init-nsid %d, %v; want 0", tt.dir, id, err)
		}
		ls.InitNSID = unknown.Of(id)
		lo, okLo := ls.ByIndex(1)
		l, ok := ls.ByName(tt.name)
		if len(links) != 2 || !okLo || !lo.Loopback() || lo.Name != "lo" || !ok || l.Kind != tt.kind || !ls.InHost(l) || (tt.link > 0 && l.Link != tt.link) {
			t.Errorf("%s: %+v", tt.dir, links)
		}
	}
}

// TestDecodeRealXDP: Linux 6.18's real dumps carry IFLA_XDP on every
// link, XDP_ATTACHED_NONE where nothing is attached.
func TestDecodeRealXDP(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"veth", "macvlan"} {
		b, err := os.ReadFile(filepath.Join("testdata", dir, "links"))
		if err != nil {
			t.Fatal(err)
		}
		links, err := decodeLinks(b)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, l := range links {
			if want := (XDP{Reported: true}); l.XDP != want || l.XDP.Mode() != "none" {
				t.Errorf("%s %s: XDP %+v (%s), want %+v", dir, l.Name, l.XDP, l.XDP.Mode(), want)
			}
		}
	}
}

// xdpAttr is a nested IFLA_XDP as rtnl_xdp_fill builds it: the mode as
// a u8, then u32 ids, each attribute padded to 4 bytes.
func xdpAttr(mode byte, ids ...[2]uint32) []byte {
	attr := func(p []byte, typ uint16, v []byte) []byte {
		h := make([]byte, 4)
		binary.NativeEndian.PutUint16(h, uint16(4+len(v)))
		binary.NativeEndian.PutUint16(h[2:], typ)
		p = append(append(p, h...), v...)
		for len(p)%4 != 0 {
			p = append(p, 0)
		}
		return p
	}
	p := attr(nil, 2, []byte{mode}) // IFLA_XDP_ATTACHED
	for _, id := range ids {
		p = attr(p, uint16(id[0]), binary.NativeEndian.AppendUint32(nil, id[1]))
	}
	return p
}

func TestDecodeXDP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		b    []byte
		want XDP
		mode string
	}{
		{"none", xdpAttr(0), XDP{Reported: true}, "none"},
		// One mode: IFLA_XDP_PROG_ID and that mode's id (5 = DRV).
		{"driver", xdpAttr(1, [2]uint32{4, 42}, [2]uint32{5, 42}), XDP{Reported: true, Attached: 1, ProgID: 42, DrvProgID: 42}, "driver"},
		{"generic", xdpAttr(2, [2]uint32{4, 7}, [2]uint32{6, 7}), XDP{Reported: true, Attached: 2, ProgID: 7, SKBProgID: 7}, "generic"},
		{"offload", xdpAttr(3, [2]uint32{4, 9}, [2]uint32{7, 9}), XDP{Reported: true, Attached: 3, ProgID: 9, HWProgID: 9}, "offload"},
		// Multi: each mode's id, no IFLA_XDP_PROG_ID.
		{"multi", xdpAttr(4, [2]uint32{6, 7}, [2]uint32{7, 9}), XDP{Reported: true, Attached: 4, SKBProgID: 7, HWProgID: 9}, "multi"},
	} {
		got, err := decodeXDP(tc.b)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got != tc.want || got.Mode() != tc.mode {
			t.Errorf("%s: got %+v (%s), want %+v (%s)", tc.name, got, got.Mode(), tc.want, tc.mode)
		}
	}
	for _, tc := range []struct {
		name, err string
		b         []byte
	}{
		{"no attached", "no IFLA_XDP_ATTACHED", []byte{8, 0, 4, 0, 1, 0, 0, 0}},
		{"bad mode", "IFLA_XDP_ATTACHED 5 is not", xdpAttr(5)},
		{"wide mode", "IFLA_XDP_ATTACHED is 4 bytes", []byte{8, 0, 2, 0, 1, 0, 0, 0}},
		{"short id", "IFLA_XDP_PROG_ID is 2 bytes", append(xdpAttr(1), 6, 0, 4, 0, 1, 0, 0, 0)},
		{"truncated", "does not fit", []byte{12, 0, 2, 0, 0}},
	} {
		if _, err := decodeXDP(tc.b); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.err)
		}
	}
}
