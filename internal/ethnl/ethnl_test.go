package ethnl

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
)

// familyReply is CTRL_CMD_GETFAMILY's reply for a family with ops (id
// to flags), laid out from linux/genetlink.h's attribute numbers, which
// are written here again rather than taken from ctrl.go.
func familyReply(t testing.TB, name string, id uint16, ops [][2]uint32) Msg {
	attrs, err := func() ([]byte, error) {
		ae := netlink.NewAttributeEncoder()
		ae.Uint16(1, id)                                       // CTRL_ATTR_FAMILY_ID
		ae.String(2, name)                                     // CTRL_ATTR_FAMILY_NAME
		ae.Uint32(3, 1)                                        // CTRL_ATTR_VERSION
		ae.Nested(6, func(l *netlink.AttributeEncoder) error { // CTRL_ATTR_OPS
			for i, op := range ops {
				l.Nested(uint16(i+1), func(o *netlink.AttributeEncoder) error {
					o.Uint32(1, op[0]) // CTRL_ATTR_OP_ID
					o.Uint32(2, op[1]) // CTRL_ATTR_OP_FLAGS
					return nil
				})
			}
			return nil
		})
		return ae.Encode()
	}()
	if err != nil {
		t.Fatal(err)
	}
	return Msg{Type: 0x10, Cmd: 1, Version: 2, Attrs: attrs}
}

// ethtoolOps are some of a 6.18 kernel's ethtool commands: STRSET_GET,
// CHANNELS_GET and RSS_GET dumpable (GENL_CMD_CAP_DUMP), CHANNELS_SET
// not.
var ethtoolOps = [][2]uint32{{1, 0x0e}, {17, 0x0e}, {18, 0x0a}, {38, 0x0e}}

func TestDecodeFamily(t *testing.T) {
	f, err := DecodeFamily("ethtool", []Msg{familyReply(t, "ethtool", 0x1a, ethtoolOps)})
	if err != nil {
		t.Fatal(err)
	}
	if f.ID != 0x1a || !f.Has(17) || !f.Has(18) || f.Has(48) || !f.CanDump(38) || f.CanDump(18) {
		t.Errorf("DecodeFamily = id %#x ops %v", f.ID, f.ops)
	}
	tests := []struct {
		name string
		give []Msg
	}{
		{"no message", nil},
		{"two messages", []Msg{familyReply(t, "ethtool", 0x1a, nil), familyReply(t, "ethtool", 0x1a, nil)}},
		{"no id", []Msg{{Attrs: Encode(func(ae *netlink.AttributeEncoder) { ae.String(2, "ethtool") })}}},
		{"a short id", []Msg{{Attrs: Encode(func(ae *netlink.AttributeEncoder) { ae.Uint8(1, 7) })}}},
		{"an op without its id", []Msg{{Attrs: Encode(func(ae *netlink.AttributeEncoder) {
			ae.Uint16(1, 0x1a)
			ae.Nested(6, func(l *netlink.AttributeEncoder) error {
				l.Nested(1, func(o *netlink.AttributeEncoder) error { o.Uint32(2, 0x0e); return nil })
				return nil
			})
		})}}},
	}
	for _, tt := range tests {
		if f, err := DecodeFamily("ethtool", tt.give); err == nil {
			t.Errorf("%s: DecodeFamily = %+v, want an error", tt.name, f)
		}
	}
}

func TestFamilyRequest(t *testing.T) {
	req := FamilyRequest("netdev")
	if req.Dir != KernelDir || req.Key != "nlctrl.netdev" || req.Family != 0x10 || req.Cmd != 3 || req.Version != 2 || req.Dump || req.Ack {
		t.Errorf("FamilyRequest = %+v", req)
	}
	var name string
	if err := Attrs(req.Attrs, func(typ uint16, ad *netlink.AttributeDecoder) error {
		if typ != 2 {
			return errors.New("an attribute other than CTRL_ATTR_FAMILY_NAME")
		}
		var err error
		name, err = Str(ad, "name")
		return err
	}); err != nil || name != "netdev" {
		t.Errorf("FamilyRequest's attributes: %q, %v", name, err)
	}
}

func TestMsgsRoundTrip(t *testing.T) {
	give := []Msg{familyReply(t, "ethtool", 0x1a, ethtoolOps), {Type: 0x1a, Flags: 2, Cmd: 39, Version: 1, Attrs: []byte{5, 0, 2, 0, 7, 0, 0, 0}}, {Type: 3}}
	b := EncodeMsgs(give)
	if len(b)%4 != 0 {
		t.Errorf("EncodeMsgs: %d bytes, not 4-byte aligned", len(b))
	}
	got, err := DecodeMsgs(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(give, got, cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); diff != "" {
		t.Errorf("DecodeMsgs(EncodeMsgs) (-want +got):\n%s", diff)
	}
	bad := []struct {
		name string
		edit func(b []byte) []byte
	}{
		{"cut in its header", func(b []byte) []byte { return b[:10] }},
		{"a length past the end", func(b []byte) []byte { native.PutUint32(b, uint32(len(b)+4)); return b }},
		{"a sequence", func(b []byte) []byte { b[8] = 1; return b }},
		{"reserved bytes", func(b []byte) []byte { b[18] = 1; return b }},
	}
	for _, tt := range bad {
		b := EncodeMsgs(give)
		if msgs, err := DecodeMsgs(tt.edit(b)); err == nil {
			t.Errorf("%s: DecodeMsgs = %d messages, want an error", tt.name, len(msgs))
		}
	}
}

// FuzzDecodeMsgs: DecodeMsgs never panics, and what it accepts
// re-encodes to the same bytes.
func FuzzDecodeMsgs(f *testing.F) {
	f.Add(EncodeMsgs([]Msg{familyReply(f, "ethtool", 0x1a, ethtoolOps)}))
	f.Add(EncodeMsgs([]Msg{{Type: 0x1a, Cmd: 39, Version: 1, Attrs: []byte{1, 2, 3}}, {Type: 3}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		msgs, err := DecodeMsgs(b)
		if err != nil {
			return
		}
		if got := EncodeMsgs(msgs); string(got) != string(b) {
			t.Errorf("decode then encode changed %d bytes into %d", len(b), len(got))
		}
	})
}

// FuzzDecodeFamily: the controller's reply decoder never panics, and a
// family it accepts has an id.
func FuzzDecodeFamily(f *testing.F) {
	f.Add(familyReply(f, "ethtool", 0x1a, ethtoolOps).Attrs)
	f.Fuzz(func(t *testing.T, b []byte) {
		if fam, err := DecodeFamily("ethtool", []Msg{{Attrs: b}}); err == nil && fam.ID == 0 {
			t.Error("a family without an id")
		}
	})
}
