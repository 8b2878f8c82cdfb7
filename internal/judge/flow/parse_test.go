package flow

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/irqnuma/irqnuma/internal/usage"
)

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		give string
		want netip.AddrPort
		port bool
	}{
		{"10.0.0.1:5000", netip.MustParseAddrPort("10.0.0.1:5000"), true},
		{"10.0.0.1", netip.MustParseAddrPort("10.0.0.1:0"), false},
		{"[fe80::1]:5201", netip.MustParseAddrPort("[fe80::1]:5201"), true},
		{"[fe80::1]", netip.MustParseAddrPort("[fe80::1]:0"), false},
		{"fe80::1", netip.MustParseAddrPort("[fe80::1]:0"), false},
		{"[fe80::1%eth0]:5201", netip.MustParseAddrPort("[fe80::1]:5201"), true},
		{"[::ffff:10.0.0.1]:80", netip.MustParseAddrPort("10.0.0.1:80"), true},
	}
	for _, tt := range tests {
		got, port, err := parseEndpoint(tt.give)
		if err != nil || got != tt.want || port != tt.port {
			t.Errorf("parseEndpoint(%q) = %v, %v, %v; want %v, %v", tt.give, got, port, err, tt.want, tt.port)
		}
	}
	for _, bad := range []string{"", "10.0.0.1:", "10.0.0.1:65536", "host:80", "fe80::1:52011", "[fe80::1]:x", "1.2.3.4.5"} {
		if _, _, err := parseEndpoint(bad); err == nil {
			t.Errorf("parseEndpoint(%q): no error", bad)
		}
	}
}

func TestParseFlow(t *testing.T) {
	f, err := Parse("udp", "[fe80::1]:5201", "fe80::2")
	if err != nil || f.FlowType() != "udp6" || !f.HasSrcPort() || f.HasDstPort() {
		t.Errorf("Parse = %+v, %v", f, err)
	}
	for _, args := range [][3]string{{"sctp", "1.2.3.4", "1.2.3.5"}, {"tcp", "1.2.3.4", "fe80::1"}, {"tcp", "x", "1.2.3.4"}} {
		if _, err := Parse(args[0], args[1], args[2]); !errors.Is(err, usage.ErrUsage) {
			t.Errorf("Parse(%q): %v, want a usage error", args, err)
		}
	}
}

func TestParseKey(t *testing.T) {
	want := []byte{0x6d, 0x5a, 0x56, 0xda}
	for _, s := range []string{"6d:5a:56:da", "6d5a56da", "6D:5A:\n56:DA\n", "0x6d5a56da"} {
		if got, err := ParseKey(s); err != nil || !bytes.Equal(got, want) {
			t.Errorf("ParseKey(%q) = %x, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "6d:5", "zz", "6d;5a"} {
		if _, err := ParseKey(s); !errors.Is(err, usage.ErrUsage) {
			t.Errorf("ParseKey(%q): %v, want a usage error", s, err)
		}
	}
}

func TestParseTable(t *testing.T) {
	got, err := parseTable("t", []byte("0 1\n2,3\t4\n"))
	if err != nil || len(got) != 5 || got[4] != 4 {
		t.Errorf("parseTable(numbers) = %v, %v", got, err)
	}
	x := "RX flow hash indirection table for eth0 with 2 RX ring(s):\n    0:      0     1     0     1\nRSS hash key:\nOperation not supported\nRSS hash function:\n    toeplitz: on\n"
	if got, err := parseTable("x", []byte(x)); err != nil || len(got) != 4 || got[1] != 1 {
		t.Errorf("parseTable(ethtool -x) = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0 1 -1", "0 x", "RX flow hash indirection table for eth0 with 2 RX ring(s):\nbogus\n"} {
		if _, err := parseTable("bad", []byte(bad)); !errors.Is(err, usage.ErrUsage) {
			t.Errorf("parseTable(%q): %v, want a usage error", bad, err)
		}
	}
}

func TestParseFields(t *testing.T) {
	if got, err := ParseFields("nfds"); err != nil || got != "sdfn" {
		t.Errorf("ParseFields(nfds) = %q, %v", got, err)
	}
	for _, bad := range []string{"sdd", "sdx", "SD"} {
		if _, err := ParseFields(bad); !errors.Is(err, usage.ErrUsage) {
			t.Errorf("ParseFields(%q): %v", bad, err)
		}
	}
}

func TestRuleMatches(t *testing.T) {
	port := func(p uint16) *uint16 { return &p }
	f, _ := Parse("tcp", "10.1.2.3:40000", "10.0.0.2:5201")
	tests := []struct {
		rule steer.Rule
		want bool
	}{
		{steer.Rule{FlowType: "tcp4", DstPort: port(5201), DstPortMask: 0xffff}, true},
		{steer.Rule{FlowType: "tcp4", DstPort: port(5202), DstPortMask: 0xffff}, false},
		{steer.Rule{FlowType: "tcp4", DstPort: port(5200), DstPortMask: 0xfff0}, true}, // masked low bits
		{steer.Rule{FlowType: "tcp4", SrcIP: "10.1.0.0", SrcMask: "255.255.0.0"}, true},
		{steer.Rule{FlowType: "tcp4", SrcIP: "10.2.0.0", SrcMask: "255.255.0.0"}, false},
		{steer.Rule{FlowType: "tcp4", DstIP: "10.0.0.9", DstMask: "0.0.0.0"}, true}, // no bit must match
		{steer.Rule{FlowType: "tcp6"}, false},
		{steer.Rule{FlowType: "udp4"}, false},
		{steer.Rule{FlowType: "ip4", DstIP: "10.0.0.2", DstMask: "255.255.255.255"}, true},
		{steer.Rule{FlowType: "ip6"}, false},
		{steer.Rule{FlowType: "ether"}, false},
	}
	for _, tt := range tests {
		if got := ruleMatches(&tt.rule, f); got != tt.want {
			t.Errorf("ruleMatches(%+v) = %v, want %v", tt.rule, got, tt.want)
		}
	}
}

func FuzzParseTable(f *testing.F) {
	f.Add([]byte("0 1 2 3"))
	f.Add([]byte("RX flow hash indirection table for eth0 with 2 RX ring(s):\n    0:      0     1\nRSS hash key:\n6d:5a\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if q, err := parseTable("fuzz", b); err == nil && len(q) == 0 {
			t.Fatal("no error and no table")
		}
	})
}

func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"10.0.0.1:5000", "[fe80::1]:5201", "fe80::1", "[::ffff:1.2.3.4]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ap, port, err := parseEndpoint(s)
		if err != nil {
			return
		}
		if !ap.Addr().IsValid() || ap.Addr().Is4In6() || ap.Addr().Zone() != "" || (!port && ap.Port() != 0) {
			t.Fatalf("parseEndpoint(%q) = %v, %v", s, ap, port)
		}
	})
}

func FuzzParseKey(f *testing.F) {
	f.Add("6d:5a:56:da")
	f.Fuzz(func(t *testing.T, s string) {
		if k, err := ParseKey(s); err == nil && len(k) == 0 {
			t.Fatal("no error and no key")
		}
	})
}

func TestRuleNeedsPort(t *testing.T) {
	port := func(p uint16) *uint16 { return &p }
	r := steer.Rule{FlowType: "udp4", DstPort: port(5201), DstPortMask: 0xffff, Action: steer.RuleActionQueue, Queue: 3}
	n := &steer.NIC{Name: "eth0", Rules: &steer.Rules{Count: 1, Rules: []steer.Rule{r}}}
	f, _ := Parse("udp", "10.0.0.1:4000", "10.0.0.2")
	p := &Path{}
	if p.rule(f, n) || len(p.Notes) != 1 {
		t.Errorf("a rule on a port the flow does not give: decided %v, notes %q", p.Queue, p.Notes)
	}
	f, _ = Parse("udp", "10.0.0.1:4000", "10.0.0.2:5201")
	p = &Path{}
	if !p.rule(f, n) || !unknown.Is(p.Queue, 3) || p.QueueBy != "ntuple rule 0" {
		t.Errorf("matching rule: queue %v by %q", p.Queue, p.QueueBy)
	}
}

func TestARFS(t *testing.T) {
	n := &steer.NIC{Name: "eth0", Features: map[string]steer.Feature{"rx-ntuple-filter": {On: true}},
		Sysfs: steer.Sysfs{RPSFlowCnt: map[int]uint32{0: 0, 1: 2048}}}
	st := &steer.Host{Sysctls: map[string]int64{"rps_sock_flow_entries": 32768}}
	p := &Path{}
	p.arfs(n, st)
	if p.ARFS == "" {
		t.Error("ntuple on, RFS sized: no aRFS note")
	}
	st.Sysctls["rps_sock_flow_entries"] = 0
	p = &Path{}
	p.arfs(n, st)
	if p.ARFS != "" {
		t.Errorf("rps_sock_flow_entries 0: %q", p.ARFS)
	}
}
