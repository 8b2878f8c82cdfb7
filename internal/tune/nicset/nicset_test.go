package nicset

import (
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func TestOpenSetterRefusesCapturedRoot(t *testing.T) {
	fsys := hosttest.FS(t, hosttest.Names()[0])
	s, err := OpenSetter(fsys)
	if !errors.Is(err, ErrNotLive) {
		t.Fatalf("OpenSetter(%s) = %v, %v; want ErrNotLive", fsys.Root(), s, err)
	}
}

// ruleAsker answers steer's reading of eth0's ntuple rules with one
// rule, whose ETHTOOL_GRXCLSRULE answer is rule; every other request is
// refused (EOPNOTSUPP), so its part stays unknown.
type ruleAsker struct {
	loc  uint32
	rule []byte
}

func (a *ruleAsker) Genl(ethnl.Request) ([]ethnl.Msg, error) { return nil, unix.EOPNOTSUPP }
func (a *ruleAsker) Where(dir, key string) string            { return dir + "/" + key }
func (a *ruleAsker) Close() error                            { return nil }

func (a *ruleAsker) Ioctl(req ethnl.IoctlRequest) ([]byte, error) {
	b := make([]byte, len(req.Buf))
	switch req.Key {
	case "ioctl.rxclsrlcnt": // data (at 8): the table's size; rule_cnt (at 184)
		native.PutUint64(b[8:], 16)
		native.PutUint32(b[184:], 1)
	case "ioctl.rxclsrlall": // rule_cnt, then rule_locs (at 188)
		native.PutUint32(b[184:], 1)
		native.PutUint32(b[188:], a.loc)
	case "ioctl.rxclsrule." + strconv.FormatUint(uint64(a.loc), 10):
		copy(b, a.rule)
	default:
		return nil, unix.EOPNOTSUPP
	}
	return b, nil
}

// readRule is the rule steer reads back when the kernel answers
// GRXCLSRULE with b, the struct ethtool_rxnfc SRXCLSRLINS was given.
func readRule(t *testing.T, loc uint32, b []byte) steer.Rule {
	t.Helper()
	fsys, err := kfile.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	n, err := steer.ReadNIC(fsys, &ruleAsker{loc: loc, rule: b}, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	if n.Rules == nil || len(n.Rules.Rules) != 1 {
		t.Fatalf("steer read the rules as %+v (%v)", n.Rules, n.Unknown[steer.PartRules])
	}
	return n.Rules.Rules[0]
}

// The rule irqnuma inserts reads back, through steer's decoder of
// ETHTOOL_GRXCLSRULE, as the rule it meant: ethtool's layout both ways.
func TestEncodeRuleInsDecodes(t *testing.T) {
	tests := []struct {
		give RuleSpec
		loc  uint32
	}{
		{RuleSpec{FlowType: "tcp4", DstPort: 9000, Queue: 1}, 7},
		{RuleSpec{FlowType: "tcp6", DstPort: 443, Queue: 15}, rxClsLocAny},
	}
	for _, tt := range tests {
		b, err := encodeRuleIns(tt.give, tt.loc)
		if err != nil {
			t.Fatal(err)
		}
		if cmd := native.Uint32(b); cmd != ethtoolSRXClsRlIns {
			t.Errorf("cmd %#x, want ETHTOOL_SRXCLSRLINS", cmd)
		}
		r := readRule(t, tt.loc, b)
		if !tt.give.Matches(r) || r.Location != tt.loc {
			t.Errorf("encodeRuleIns(%+v, %d) decodes as %+v", tt.give, tt.loc, r)
		}
		// The port is big-endian, as the kernel's __be16 pdst.
		off := rxnfcFS + fsHU + 10
		if tt.give.FlowType == "tcp6" {
			off = rxnfcFS + fsHU + 34
		}
		if p := binary.BigEndian.Uint16(b[off:]); p != tt.give.DstPort {
			t.Errorf("pdst %d, want %d", p, tt.give.DstPort)
		}
	}
	if _, err := encodeRuleIns(RuleSpec{FlowType: "udp4", DstPort: 1}, 0); err == nil {
		t.Error("encodeRuleIns(udp4) = nil error, want a refusal")
	}
}

func TestRuleSpecMatches(t *testing.T) {
	port := uint16(9000)
	other := uint16(80)
	ctx := uint32(1)
	spec := RuleSpec{FlowType: "tcp4", DstPort: 9000, Queue: 1}
	base := steer.Rule{FlowType: "tcp4", DstPort: &port, DstPortMask: 0xffff, Action: steer.RuleActionQueue, Queue: 1}
	tests := []struct {
		name string
		edit func(r *steer.Rule)
		want bool
	}{
		{"same", func(*steer.Rule) {}, true},
		{"other queue", func(r *steer.Rule) { r.Queue = 2 }, false},
		{"partial port mask", func(r *steer.Rule) { r.DstPortMask = 0xff00 }, false},
		{"source port too", func(r *steer.Rule) { r.SrcPort, r.SrcPortMask = &other, 0xffff }, false},
		{"an address too", func(r *steer.Rule) { r.DstIP = "10.0.0.1" }, false},
		{"tcp6", func(r *steer.Rule) { r.FlowType = "tcp6" }, false},
		{"drop", func(r *steer.Rule) { r.Action = steer.RuleActionDrop }, false},
		{"rss context", func(r *steer.Rule) { r.Context = &ctx }, false},
	}
	for _, tt := range tests {
		r := base
		tt.edit(&r)
		if got := spec.Matches(r); got != tt.want {
			t.Errorf("%s: Matches = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// u32s reads b as the host's u32s.
func u32s(b []byte) []uint32 {
	var out []uint32
	for ; len(b) >= 4; b = b[4:] {
		out = append(out, native.Uint32(b))
	}
	return out
}

func TestEncodeSRSSH(t *testing.T) {
	key := []byte{1, 2, 3, 4}
	tests := []struct {
		name      string
		give      RSSSetting
		xfrm      byte
		wantIndir uint32
		wantTable []uint32
		wantKey   []byte
	}{
		{"default, 6.1", RSSSetting{Default: true}, 0, 0, nil, nil},
		{"table, 6.8+", RSSSetting{Table: []uint32{0, 2, 3, 0}}, rxhXfrmNoChange, 4, []uint32{0, 2, 3, 0}, nil},
		{"key only", RSSSetting{Key: key}, 0, 0xffffffff, nil, key},
	}
	for _, tt := range tests {
		b := encodeSRSSH(tt.give, tt.xfrm)
		if len(b) != rxfhSize+4*len(tt.wantTable)+len(tt.wantKey) {
			t.Fatalf("%s: %d bytes", tt.name, len(b))
		}
		if native.Uint32(b) != ethtoolSRSSH || native.Uint32(b[4:]) != 0 {
			t.Errorf("%s: cmd %#x context %d", tt.name, native.Uint32(b), native.Uint32(b[4:]))
		}
		if got := native.Uint32(b[8:]); got != tt.wantIndir {
			t.Errorf("%s: indir_size %#x, want %#x", tt.name, got, tt.wantIndir)
		}
		if got := native.Uint32(b[12:]); got != uint32(len(tt.wantKey)) {
			t.Errorf("%s: key_size %d, want %d", tt.name, got, len(tt.wantKey))
		}
		if b[16] != 0 || b[17] != tt.xfrm || slices.ContainsFunc(b[18:24], func(c byte) bool { return c != 0 }) {
			t.Errorf("%s: hfunc, input_xfrm, reserved = % x", tt.name, b[16:24])
		}
		if table := u32s(b[rxfhSize : rxfhSize+4*len(tt.wantTable)]); !slices.Equal(table, tt.wantTable) && len(tt.wantTable) > 0 {
			t.Errorf("%s: table %v, want %v", tt.name, table, tt.wantTable)
		}
		if got := b[rxfhSize+4*len(tt.wantTable):]; !slices.Equal(got, tt.wantKey) && len(tt.wantKey) > 0 {
			t.Errorf("%s: key % x, want % x", tt.name, got, tt.wantKey)
		}
	}
}

// setAttrsOf lists a request body's attributes by type.
func setAttrsOf(t *testing.T, b []byte) map[uint16][]byte {
	t.Helper()
	out := map[uint16][]byte{}
	if err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		out[typ] = append([]byte{}, ad.Bytes()...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEncodeSetBodies(t *testing.T) {
	four := uint32(4)
	got := setAttrsOf(t, ethnl.Encode(func(ae *netlink.AttributeEncoder) { encodeChannels(ae, ChannelCounts{Combined: &four}) }))
	if len(got) != 1 || native.Uint32(got[ethnlChannelsCombinedCount]) != 4 {
		t.Errorf("channels-set body %v, want only COMBINED_COUNT 4", got)
	}
	got = setAttrsOf(t, ethnl.Encode(func(ae *netlink.AttributeEncoder) { encodeRSSSet(ae, RSSSetting{Default: true}) }))
	if v, ok := got[ethnlRSSIndir]; !ok || len(v) != 0 || len(got) != 1 {
		t.Errorf("rss-set default body %v, want an empty INDIR only", got)
	}
	got = setAttrsOf(t, ethnl.Encode(func(ae *netlink.AttributeEncoder) {
		encodeRSSSet(ae, RSSSetting{Table: []uint32{0, 2}, Key: []byte{9}})
	}))
	if tb := u32s(got[ethnlRSSIndir]); !slices.Equal(tb, []uint32{0, 2}) || !slices.Equal(got[ethnlRSSHkey], []byte{9}) {
		t.Errorf("rss-set body %v", got)
	}
}

func TestIsDefaultTableAndEqual(t *testing.T) {
	if !IsDefaultTable([]uint32{0, 1, 2, 3, 0, 1, 2, 3}, 4) {
		t.Error("i mod 4 is not the default over 4 rings")
	}
	if IsDefaultTable([]uint32{0, 1, 2, 3}, 2) || IsDefaultTable(nil, 4) || IsDefaultTable([]uint32{0}, 0) {
		t.Error("a table that is not i mod rings is the default")
	}
	if diff := cmp.Diff([]uint32{0, 2, 3, 0, 2, 3, 0}, EqualTable(7, []uint32{0, 2, 3})); diff != "" {
		t.Errorf("EqualTable (-want +got):\n%s", diff)
	}
}

func TestCheckReadBack(t *testing.T) {
	n := &steer.NIC{Name: "eth2", RSS: &steer.RSS{Rings: 4, Table: []uint32{0, 1, 2, 3}}, Channels: &steer.Channels{Combined: 4}}
	if err := checkRSS(n, RSSSetting{Default: true}); err != nil {
		t.Errorf("default table: %v", err)
	}
	if err := checkRSS(n, RSSSetting{Table: []uint32{0, 2, 3, 0}}); !errors.Is(err, ErrReadBack) {
		t.Errorf("another table: %v, want ErrReadBack", err)
	}
	three := uint32(3)
	if err := checkChannels(n, ChannelCounts{Combined: &three}); !errors.Is(err, ErrReadBack) {
		t.Errorf("channels: %v, want ErrReadBack", err)
	}
	on := DataSplitOn
	if err := checkRings(&steer.NIC{Name: "eth2", Unknown: map[steer.Part]unknown.Reason{steer.PartRings: {Kind: unknown.KindDriver}}}, RingSetting{TCPDataSplit: &on}); !errors.Is(err, ErrReadBack) {
		t.Errorf("rings unknown: %v, want ErrReadBack", err)
	}
}

func TestRuleLocation(t *testing.T) {
	n := &steer.NIC{Name: "eth0", Rules: &steer.Rules{TableSize: 3, Rules: []steer.Rule{{Location: 0}, {Location: 2}}}}
	if loc, err := ruleLocation(n, 3); err != nil || loc != 1 {
		t.Errorf("ruleLocation = %d, %v; want 1", loc, err)
	}
	if loc, err := ruleLocation(n, rxClsLocSpecial|3); err != nil || loc != rxClsLocAny {
		t.Errorf("special: ruleLocation = %#x, %v; want RX_CLS_LOC_ANY", loc, err)
	}
	n.Rules.Rules = append(n.Rules.Rules, steer.Rule{Location: 1})
	if _, err := ruleLocation(n, 3); err == nil {
		t.Error("a full table gave a location")
	}
}

func TestSetErrorSaysTheKernelsTerms(t *testing.T) {
	err := setError("eth2", "rings-set", &netlink.OpError{Op: "receive", Err: unix.EOPNOTSUPP, Message: "setting tcp-data-split is not supported"})
	var se *SetError
	if !errors.As(err, &se) || !errors.Is(err, unix.EOPNOTSUPP) {
		t.Fatalf("setError = %v", err)
	}
	want := "eth2 rings-set: EOPNOTSUPP (the driver cannot): setting tcp-data-split is not supported"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	if r := se.Reason(); r.Kind != unknown.KindDriver {
		t.Errorf("Reason %v, want %s", r, unknown.KindDriver)
	}
}

func FuzzEncodeRuleIns(f *testing.F) {
	f.Add(true, uint16(9000), uint32(1), uint32(5))
	f.Fuzz(func(t *testing.T, v6 bool, port uint16, queue, loc uint32) {
		spec := RuleSpec{FlowType: "tcp4", DstPort: port, Queue: queue}
		if v6 {
			spec.FlowType = "tcp6"
		}
		b, err := encodeRuleIns(spec, loc)
		if err != nil {
			t.Fatal(err)
		}
		if r := readRule(t, loc, b); !spec.Matches(r) || r.Location != loc {
			t.Fatalf("%+v at %d decodes as %+v", spec, loc, r)
		}
	})
}
