package nslink

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestParseIPLinkReal reads the real `ip -s -d link` and `ip -d address`
// of a namespace with a program in generic mode on g0 and in driver
// mode on v0 (testdata/README).
func TestParseIPLinkReal(t *testing.T) {
	none := XDP{Reported: true}
	want := []Link{
		{Index: 1, Name: "lo", XDP: none, LinkNetNSID: inThisNamespace},
		{Index: 2, Name: "g1", XDP: none, LinkNetNSID: inThisNamespace},
		{Index: 3, Name: "g0", XDP: XDP{Reported: true, Attached: XDPAttachedSKB, ProgID: 97}, LinkNetNSID: inThisNamespace},
		{Index: 4, Name: "v1", XDP: none, LinkNetNSID: inThisNamespace},
		{Index: 5, Name: "v0", XDP: XDP{Reported: true, Attached: XDPAttachedDrv, ProgID: 97}, LinkNetNSID: inThisNamespace},
	}
	for _, f := range sosIPLink {
		b, err := os.ReadFile(filepath.Join("testdata/sos", f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseIPLink(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(unknown.Value[int]{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", f, diff)
		}
	}
}

// TestParseIPLink holds the parser to xdp_dump's other forms (multi and
// offload modes, per-mode program lines, an unknown mode number) and to
// its errors.
func TestParseIPLink(t *testing.T) {
	const first = "7: em1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 "
	tests := []struct {
		give string
		want XDP
		err  string
	}{
		{give: first + "qdisc mq state UP\n", want: XDP{Reported: true}},
		{give: first + "xdpmulti qdisc mq\n    prog/xdpgeneric id 5 tag 00 \n    prog/xdpoffload id 6 \n",
			want: XDP{Reported: true, Attached: XDPAttachedMulti, SKBProgID: 5, HWProgID: 6}},
		{give: first + "xdpoffload/id:12 qdisc mq\n", want: XDP{Reported: true, Attached: XDPAttachedHW, ProgID: 12}},
		{give: first + "xdp[9] qdisc mq\n    prog/xdpdrv id 3 \n", want: XDP{Reported: true, Attached: 9, DrvProgID: 3}},
		{give: first + "qdisc mq\n    prog/xdp id 5 \n", err: "names no xdp mode"},
		{give: first + "xdpbogus qdisc mq\n", err: `xdp mode "xdpbogus"`},
		{give: first + "xdp[0] qdisc mq\n", err: `xdp mode "xdp[0]"`},
		{give: first + "xdp/id:0 qdisc mq\n", err: `program id "0"`},
		{give: first + "xdp qdisc mq\n    prog/xdp id x \n", err: `program id "x"`},
		{give: first + "xdp qdisc mq\n    prog/xdpsome id 3 \n", err: "unknown program mode"},
		{give: first + "xdp qdisc mq\n    prog/xdp \n", err: "no program id"},
		{give: "    link/ether 00:00:00:00:00:01\n", err: "before any link"},
		{give: "em1: <UP> mtu 1500\n", err: "no link index"},
		{give: "0: em1: <UP> mtu 1500\n", err: "no link index"},
		{give: "7: : <UP> mtu 1500\n", err: "no link name"},
		{give: "7: em1: UP mtu 1500\n", err: "no <flags>"},
		{give: "7: em1: <UP> state UP\n", err: "no mtu"},
		{give: "7: em1: <UP> mtu big\n", err: "mtu is not a number"},
		{give: first + "\n" + first + "\n", err: "link index 7 twice"},
		{give: first + "\n8: em1@if7: <UP> mtu 1500\n", err: `line 2: link 8 is named "em1", as link 7 is`},
	}
	for _, tt := range tests {
		got, err := parseIPLink([]byte(tt.give))
		if tt.err != "" {
			if err == nil || !errors.Is(err, ErrIPLink) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseIPLink(%q) = %+v, %v; want an ErrIPLink saying %q", tt.give, got, err, tt.err)
			}
			continue
		}
		if err != nil || len(got) != 1 || got[0].Name != "em1" || got[0].Index != 7 || got[0].XDP != tt.want {
			t.Errorf("parseIPLink(%q) = %+v, %v; want em1 with %+v", tt.give, got, err, tt.want)
		}
	}
}

// TestReadSos reads a sosreport root's ip_-s_-d_link, else its
// ip_-d_address; a root with neither is not found, a bad file is
// unknown with why.
func TestReadSos(t *testing.T) {
	b, err := os.ReadFile("testdata/sos/ip_-d_address")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	fsys, err := kfile.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if ls, found := ReadSos(fsys); found {
		t.Fatalf("empty root: %+v, want not found", ls)
	}
	dir := filepath.Join(root, sosNetworking)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ip_-d_address"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	ls, found := ReadSos(fsys)
	if l, ok := ls.ByName("v0"); !found || !ls.Links.Known() || !ok || l.XDP.Attached != XDPAttachedDrv || ls.Source != "sosreport sos_commands/networking/ip_-d_address" {
		t.Errorf("ip_-d_address: %+v, %v", ls, found)
	}
	if err := os.WriteFile(filepath.Join(dir, "ip_-s_-d_link"), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ls, found = ReadSos(fsys)
	if !found || ls.Links.Known() || !strings.Contains(ls.Links.Why().Detail, "ip_-s_-d_link") || !strings.Contains(ls.Links.Why().Detail, `"garbage": no link index`) {
		t.Errorf("bad ip_-s_-d_link: %+v, %v; want unknown naming it", ls, found)
	}
}
