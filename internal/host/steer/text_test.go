package steer

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/unknown"
)

// xNewest is ethtool -x as ethtool 6.x prints it over netlink (the
// format of rss_reply_cb), tabs and all.
const xNewest = `RX flow hash indirection table for eth0 with 4 RX ring(s):
    0:      0     1     2     3     0     1     2     3
    8:      0     1
RSS hash key:
6d:5a:56:da
RSS hash function:
    toeplitz: off
    xor: off
    crc32: on
RSS input transformation:
    symmetric-xor: on
    symmetric-or-xor: off
`

func TestParseEthtoolXNewest(t *testing.T) {
	got, err := ParseEthtoolX([]byte(xNewest))
	if err != nil {
		t.Fatal(err)
	}
	want := RSS{Rings: 4, Table: []uint32{0, 1, 2, 3, 0, 1, 2, 3, 0, 1}, Key: []byte{0x6d, 0x5a, 0x56, 0xda}, HashFunc: "crc32", InputXfrm: u32p(1)}
	if diff := cmp.Diff(want, got.RSS, exportValues); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(got.Unknown) != 0 {
		t.Errorf("Unknown = %v, want none", got.Unknown)
	}
}

func TestParseEthtoolXUnknowns(t *testing.T) {
	tests := []struct {
		give string
		want map[RSSItem]unknown.Kind
	}{
		{
			give: "RX flow hash indirection table for eth0 with 1 RX ring(s):\nOperation not supported\nRSS hash key:\nOperation not supported\nRSS hash function:\n    Operation not supported\n",
			want: map[RSSItem]unknown.Kind{RSSItemTable: unknown.KindDriver, RSSItemKey: unknown.KindDriver, RSSItemHashFunc: unknown.KindDriver, RSSItemInputXfrm: unknown.KindNotCaptured},
		},
		{
			give: "RX flow hash indirection table for eth0 with 1 RX ring(s):\n    0:      0\nRSS hash key:\n00\nRSS hash function:\n    toeplitz: off\n    Unknown hash function: 0x10\nRSS input transformation:\n    symmetric-xor: off\n    symmetric-or-xor: off\n    Unknown bits in RSS input transformation: 0x8\n",
			want: map[RSSItem]unknown.Kind{RSSItemHashFunc: unknown.KindMalformed},
		},
		{
			give: "Cannot get RX ring count: Operation not permitted\n",
			want: map[RSSItem]unknown.Kind{RSSItemTable: unknown.KindPermission, RSSItemKey: unknown.KindPermission, RSSItemHashFunc: unknown.KindPermission, RSSItemInputXfrm: unknown.KindPermission},
		},
	}
	for _, tt := range tests {
		got, err := ParseEthtoolX([]byte(tt.give))
		if err != nil {
			t.Fatalf("ParseEthtoolX(%q): %v", tt.give, err)
		}
		gotWhy := map[RSSItem]unknown.Kind{}
		for it, r := range got.Unknown {
			gotWhy[it] = r.Kind
		}
		if diff := cmp.Diff(tt.want, gotWhy, exportValues); diff != "" {
			t.Errorf("ParseEthtoolX(%q) unknown (-want +got):\n%s", tt.give, diff)
		}
	}
	got, _ := ParseEthtoolX([]byte(tests[1].give))
	if got.RSS.InputXfrm == nil || *got.RSS.InputXfrm != 8 {
		t.Errorf("unknown input transformation bits: %v, want 8", got.RSS.InputXfrm)
	}
}

func TestParseEthtoolXErrors(t *testing.T) {
	hdr := "RX flow hash indirection table for eth0 with 4 RX ring(s):\n"
	tests := []struct {
		give string
		want string // in the error
	}{
		{"", "empty"},
		{"    0:      0     1\n", "before the"},
		{hdr + "    0:  0 x\n", "table entry"},
		{hdr + "    0:  0 1 2 3 4 5 6 7 8\n", "9 entries"},
		{hdr + "    0:  0\n" + hdr, "second table header"},
		{hdr + "RSS hash key:\nzz:01\n", "not hex bytes"},
		{hdr + "RSS hash key:\n0:01\n", "two hex digits"},
		{hdr + "RSS hash function:\n    toeplitz: on\n    xor: on\n", "two hash functions on"},
		{hdr + "RSS hash function:\nRSS hash key:\n", "after the func section"},
		{"$ ethtool -x eth0\n" + hdr, "shell prompt"},
		{"RX flow hash indirection table for eth0 with 4294967296 RX ring(s):\n", "not a u32"},
	}
	for _, tt := range tests {
		_, err := ParseEthtoolX([]byte(tt.give))
		if !errors.Is(err, ErrText) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseEthtoolX(%q) = %v, want ErrText saying %q", tt.give, err, tt.want)
		}
	}
}

// TestTextHugeClaims holds the parsers to what the text holds: a ring
// count, table index or rule count of 2^31 allocates nothing for it.
func TestTextHugeClaims(t *testing.T) {
	texts := map[string]func([]byte) error{
		"RX flow hash indirection table for eth0 with 2147483648 RX ring(s):\n 2147483648: 1\nRSS hash key:\n00\n":             func(b []byte) error { _, err := ParseEthtoolX(b); return err },
		"2147483648 RX rings available\nTotal 2147483648 rules\n\nFilter: 4294967295\n\tRule Type: Raw IPv4\n\tAction: Drop\n": func(b []byte) error { _, err := parseEthtoolN(b); return err },
		"[{'id': 4294967295, 'type': 'rx', 'napi-id': 4294967295}]\n":                                                          func(b []byte) error { _, err := parseYNL(b); return err },
	}
	for text, parse := range texts {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := parse([]byte(text))
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("parsing %q allocated %d bytes", text, grew)
		}
		t.Logf("%q: %v", text, err)
	}
	x, err := ParseEthtoolX([]byte("RX flow hash indirection table for eth0 with 2147483648 RX ring(s):\n 2147483648: 1\nRSS hash key:\n00\n"))
	if err != nil {
		t.Fatal(err)
	}
	if x.RSS.Rings != 1<<31 || x.RSS.Table != nil || x.Unknown[RSSItemTable].Kind != unknown.KindNotCaptured {
		t.Errorf("a table starting at entry 2^31: %+v, want rings 2^31 and no table", x)
	}
	if _, err := parseEthtoolN([]byte("Total 2147483648 rules\n\nFilter: 1\n\tRule Type: Raw IPv4\n\tAction: Drop\n")); !errors.Is(err, ErrText) || !strings.Contains(err.Error(), "1 of the 2147483648") {
		t.Errorf("2^31 rules claimed, one shown: %v", err)
	}
}

func TestParseEthtoolLMissing(t *testing.T) {
	// What `ethtool -l eth4 | grep Combined | tail -1` leaves.
	_, err := ParseEthtoolL([]byte("Combined:       2\n"))
	if !errors.Is(err, ErrText) || !strings.Contains(err.Error(), "no maximum for Other, RX, TX") {
		t.Errorf("err = %v, want the missing maxima named", err)
	}
	_, err = ParseEthtoolL([]byte("Channel parameters for eth0:\nPre-set maximums:\nRX: 1\nTX: 1\nOther: 1\nCombined: 1\nCurrent hardware settings:\nRX: 1\nTX: 1\nOther: 1\nCombined: 1\nQueues: 3\n"))
	if !errors.Is(err, ErrText) || !strings.Contains(err.Error(), "line 12") {
		t.Errorf("unknown field: err = %v, want line 12 named", err)
	}
}

func TestParseEthtoolGNewest(t *testing.T) {
	// rings_reply_cb with every field a 6.13+ kernel may send.
	give := "Ring parameters for eth0:\nPre-set maximums:\nRX:\t\t\t4096\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t4096\nTX push buff len:\tn/a\nHDS thresh:\t\t1024\n" +
		"Current hardware settings:\nRX:\t\t\t1024\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t512\nRX Buf Len:\t\t4096\nCQE Size:\t\t64\nTX Push:\t\ton\nRX Push:\t\toff\nTX push buff len:\tn/a\nTCP data split:\t\ton\nHDS thresh:\t\t256\n"
	got, err := ParseEthtoolG([]byte(give))
	if err != nil {
		t.Fatal(err)
	}
	want := Rings{MaxRX: 4096, MaxTX: 4096, RX: 1024, TX: 512, RXBufLen: u32p(4096), CQESize: u32p(64), TxPush: boolp(true), RxPush: boolp(false),
		TCPDataSplit: tdsp(TCPDataSplitEnabled), HDSThresh: u32p(256), HDSThreshMax: u32p(1024)}
	if diff := cmp.Diff(want, *got, exportValues); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := ParseEthtoolG([]byte(strings.Replace(give, "TCP data split:\t\ton", "TCP data split:\t\tunknown(7)", 1))); !errors.Is(err, ErrText) {
		t.Errorf("TCP data split unknown(7): err = %v, want ErrText", err)
	}
}

func TestParseEthtoolNRules(t *testing.T) {
	give := `8 RX rings available
Total 3 rules

Filter: 1
	Rule Type: TCP over IPv4
	Src IP addr: 0.0.0.0 mask: 255.255.255.255
	Dest IP addr: 192.168.1.10 mask: 0.0.0.0
	TOS: 0x0 mask: 0xff
	Src port: 0 mask: 0xffff
	Dest port: 5201 mask: 0x0
	Action: Direct to queue 6

Filter: 2
	Rule Type: UDP over IPv6
	Src IP addr: :: mask: ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff
	Dest IP addr: fe80::1 mask: ::
	Traffic Class: 0x0 mask: 0xff
	Src port: 0 mask: 0xffff
	Dest port: 4791 mask: 0x0
	Action: Direct to VF 0 queue 3

Filter: 3
	Flow Type: Raw Ethernet
	Src MAC addr: 00:00:00:00:00:00 mask: FF:FF:FF:FF:FF:FF
	Dest MAC addr: 00:11:22:33:44:55 mask: 00:00:00:00:00:00
	Ethertype: 0x0 mask: 0xFFFF
	Action: Direct to RSS Context 1 (queue base offset: 2)

`
	got, err := parseEthtoolN([]byte(give))
	if err != nil {
		t.Fatal(err)
	}
	p := func(v uint16) *uint16 { return &v }
	one := uint32(1)
	want := &RulesText{RXRings: u32p(8), Rules: &Rules{Count: 3, Rules: []Rule{
		{Location: 1, FlowType: "tcp4", SrcIP: "0.0.0.0", SrcMask: "0.0.0.0", DstIP: "192.168.1.10", DstMask: "255.255.255.255",
			SrcPort: p(0), SrcPortMask: 0, DstPort: p(5201), DstPortMask: 0xffff, Action: RuleActionQueue, Queue: 6},
		{Location: 2, FlowType: "udp6", SrcIP: "::", SrcMask: "::", DstIP: "fe80::1", DstMask: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
			SrcPort: p(0), DstPort: p(4791), DstPortMask: 0xffff, Action: RuleActionQueue, VF: 1, Queue: 3},
		{Location: 3, FlowType: "ether", Action: RuleActionQueue, Context: &one, Queue: 2},
	}}}
	if diff := cmp.Diff(want, got, exportValues); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	fail, err := parseEthtoolN([]byte("4 RX rings available\nrxclass: Cannot get RX class rule count: Operation not supported\nRX classification rule retrieval failed\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fail.Rules != nil || fail.Unknown == nil || fail.Unknown.Kind != unknown.KindDriver || *fail.RXRings != 4 {
		t.Errorf("rule count refused: %+v, want no rules, unknown %q", fail, unknown.KindDriver)
	}
	for _, bad := range []string{
		"Total 1 rules\n\nFilter: 1\n\tRule Type: TCP over IPv4\n",                     // no action
		"Total 1 rules\n\nFilter: 1\n\tRule Type: TCP over IPv4\n\tAction: Teleport\n", // unknown action
		"Total 1 rules\n\nFilter: 1\n\tUnknown Flow type: 99\n\tAction: Drop\n",        // ethtool did not know it
		"Total 1 rules\n\nFilter: 1\n\tRule Type: TCP over IPv4\n\tSrc port: 70000 mask: 0x0\n\tAction: Drop\n",
		"Total 1 rules\n\n\tRule Type: TCP over IPv4\n",
	} {
		if _, err := parseEthtoolN([]byte(bad)); !errors.Is(err, ErrText) {
			t.Errorf("parseEthtoolN(%q) = %v, want ErrText", bad, err)
		}
	}
}

func TestParseRxFlowHash(t *testing.T) {
	tests := []struct {
		give string
		ft   FlowType
		want HashFields
	}{
		// ixgbe's default for udp4: addresses only.
		{"UDP over IPV4 flows use these fields for computing Hash flow key:\nIP SA\nIP DA\n\n", "udp4", "sd"},
		{"For RSS context 1:\nTCP over IPV6 flows use these fields for computing Hash flow key:\nIP SA\nIP DA\nL4 bytes 0 & 1 [TCP/UDP src port]\nL4 bytes 2 & 3 [TCP/UDP dst port]\n", "tcp6", "sdfn"},
		{"IPSEC AH/ESP over IPV4 flows use these fields for computing Hash flow key:\nNone\n", "esp4", ""},
		{" use these fields for computing Hash flow key:\nL2DA\nVLAN tag\nL3 proto\nIP SA\nIP DA\nGTP TEID\nIPv6 Flow Label\n", "ip6", "mvtsdel"},
		{"UDP over IPV6 flows - All matching flows discarded on RX\n", "udp6", "r"},
	}
	for _, tt := range tests {
		got, err := parseRxFlowHash([]byte(tt.give), tt.ft)
		if err != nil || got != tt.want {
			t.Errorf("parseRxFlowHash(%q, %s) = %q, %v, want %q", tt.give, tt.ft, got, err, tt.want)
		}
	}
	for _, bad := range []string{
		"UDP over IPV4 flows use these fields for computing Hash flow key:\nIP DA\nIP SA\n", // out of ethtool's order
		"UDP over IPV4 flows use these fields for computing Hash flow key:\n",
		"UDP over IPV4 flows use these fields for computing Hash flow key:\nIP SA\nsomething\n",
		"",
	} {
		if _, err := parseRxFlowHash([]byte(bad), "udp4"); !errors.Is(err, ErrText) {
			t.Errorf("parseRxFlowHash(%q) = %v, want ErrText", bad, err)
		}
	}
}

func TestParseYNLThreaded(t *testing.T) {
	give := `[{'defer-hard-irqs': 0, 'gro-flush-timeout': 0, 'id': 513, 'ifindex': 2, 'irq': 41, 'irq-suspend-timeout': 0, 'pid': 1234, 'threaded': 'enabled'},
 {'id': 514, 'ifindex': 2, 'threaded': 'disabled'}]`
	got, err := parseYNL([]byte(give))
	if err != nil {
		t.Fatal(err)
	}
	on, off := true, false
	zero := uint32(0)
	var z64 uint64
	want := &YNLDump{NAPIs: []NAPI{
		{ID: 513, IRQ: unknown.Of(41), PID: 1234, DeferHardIRQs: &zero, GROFlushTimeout: &z64, IRQSuspendTimeout: &z64, Threaded: &on},
		{ID: 514, IRQ: unknown.Not[int](NoIRQ), Threaded: &off},
	}, Ifindex: []int{2, 2}}
	if diff := cmp.Diff(want, got, exportValues); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		"", "None\n", "[{'id': 1, 'type': 'rx'", "[{'id': -1, 'type': 'rx'}]", "[{'id': 1, 'type': 'both'}]",
		"[{'type': 'rx'}]", "[{'id': 1, 'id': 2}]", "[{'id': 1, 'threaded': 'maybe'}]",
		"[" + strings.Repeat("{'a': [", 20) + "1" + strings.Repeat("]}", 20) + "]",
	} {
		if _, err := parseYNL([]byte(bad)); !errors.Is(err, ErrText) {
			t.Errorf("parseYNL(%q) = %v, want ErrText", bad, err)
		}
	}
}

func TestEthtoolFailure(t *testing.T) {
	tests := []struct {
		give string
		want unknown.Kind
		ok   bool
	}{
		{"netlink error: Operation not supported\n", unknown.KindDriver, true},
		{"Cannot get device ring settings: Operation not permitted\n", unknown.KindPermission, true},
		{"Cannot get device coalesce settings: No such device\n", unknown.KindFailed, true},
		{"Ring parameters for eth0:\n", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		r, ok := ethtoolFailure([]byte(tt.give))
		if ok != tt.ok || r.Kind != tt.want {
			t.Errorf("ethtoolFailure(%q) = %v, %v, want %q, %v", tt.give, r, ok, tt.want, tt.ok)
		}
	}
}

func TestSplitSession(t *testing.T) {
	give := "before\n$ ethtool -l eth0\nCombined: 1\n# a note\n$ ethtool -L eth0 combined 2\n$ cat x\n0"
	want := []SessionCommand{
		{Line: "", Output: []byte("before\n")},
		{Line: "ethtool -l eth0", Output: []byte("Combined: 1\n# a note\n")},
		{Line: "ethtool -L eth0 combined 2"},
		{Line: "cat x", Output: []byte("0")},
	}
	if diff := cmp.Diff(want, splitSession([]byte(give)), exportValues); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseEthtoolKOld(t *testing.T) {
	// ethtool 2.6.3x: "Offload parameters", names with spaces, and the
	// perror of an offload the driver does not report, on stderr.
	give := "Offload parameters for eth0:\nCannot get device udp large send offload settings: Operation not supported\nrx-checksumming: on\ntcp segmentation offload: off\n"
	got, err := parseEthtoolK([]byte(give))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]Feature{"rx-checksumming": {On: true}, "tcp segmentation offload": {}}, got, exportValues); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseEthtoolK([]byte("ntuple-filters: maybe\n")); !errors.Is(err, ErrText) {
		t.Errorf("ntuple-filters: maybe: err = %v, want ErrText", err)
	}
}
