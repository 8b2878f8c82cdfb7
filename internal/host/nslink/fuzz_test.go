package nslink

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// FuzzDecodeLinks: any bytes a root holds as a recorded link dump decode
// to links or an error, never a panic, and what decodes holds what
// Read promises (an index, a name, no index twice).
func FuzzDecodeLinks(f *testing.F) {
	f.Add(hosttest.NsLinksBytes(sample))
	f.Add(hosttest.NsLinksBytes(sample[:1]))
	f.Add([]byte{})
	for _, dir := range []string{"veth", "macvlan"} {
		if b, err := os.ReadFile(filepath.Join("testdata", dir, "links")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		links, err := decodeLinks(b)
		if err != nil {
			return
		}
		seen := map[int]bool{}
		for _, l := range links {
			if l.Index <= 0 || l.Name == "" || l.Link < 0 || seen[l.Index] ||
				l.XDP.Attached > XDPAttachedMulti || (!l.XDP.Reported && l.XDP != XDP{}) {
				t.Fatalf("decodeLinks gave %+v", l)
			}
			seen[l.Index] = true
		}
	})
}

// FuzzDecodeXDP: any nested IFLA_XDP decodes to a known mode or an
// error.
func FuzzDecodeXDP(f *testing.F) {
	f.Add(xdpAttr(0))
	f.Add(xdpAttr(1, [2]uint32{4, 42}, [2]uint32{5, 42}))
	f.Add(xdpAttr(4, [2]uint32{6, 7}, [2]uint32{7, 9}))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := decodeXDP(b)
		if err == nil && (!x.Reported || x.Attached > XDPAttachedMulti || strings.HasPrefix(x.Mode(), "mode")) {
			t.Fatalf("decodeXDP gave %+v", x)
		}
	})
}

// FuzzDecodeNSID: any bytes decode to an id of -1 or more, or an error.
func FuzzDecodeNSID(f *testing.F) {
	f.Add(hosttest.NsIDBytes(0))
	f.Add(hosttest.NsIDBytes(-1))
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, err := decodeNSID(b); err == nil && id < -1 {
			t.Fatalf("decodeNSID = %d", id)
		}
	})
}

// FuzzParseIPLink: any text parses to links with a positive, unique
// index, a name, and program ids only where a mode is attached, or to
// an ErrIPLink.
func FuzzParseIPLink(f *testing.F) {
	for _, name := range sosIPLink {
		if b, err := os.ReadFile(filepath.Join("testdata/sos", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("7: em1: <UP> mtu 9000 xdpmulti qdisc mq\n    prog/xdpgeneric id 5 \n    prog/xdpoffload id 6 \n"))
	f.Add([]byte("7: em1@if3: <UP> mtu 9000 xdp[9]/id:4 qdisc mq\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		links, err := parseIPLink(b)
		if err != nil {
			if !errors.Is(err, ErrIPLink) {
				t.Fatalf("ParseIPLink error %v is no ErrIPLink", err)
			}
			return
		}
		seen := map[int]bool{}
		for _, l := range links {
			x := l.XDP
			if l.Index <= 0 || seen[l.Index] || l.Name == "" || strings.ContainsAny(l.Name, ": \t@") || !x.Reported ||
				(x.Attached == XDPAttachedNone && x != XDP{Reported: true}) {
				t.Fatalf("ParseIPLink gave %+v", l)
			}
			seen[l.Index] = true
		}
	})
}
