package nicset

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// nla is one netlink attribute as the uapi lays it out (struct nlattr:
// nla_len, nla_type, in the host's order, then the value, padded to 4).
func nla(typ uint16, v []byte) []byte {
	b := make([]byte, 4, 4+len(v)+3)
	native.PutUint16(b, uint16(4+len(v)))
	native.PutUint16(b[2:], typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func u32b(v uint32) []byte { return native.AppendUint32(nil, v) }
func u64b(v uint64) []byte { return native.AppendUint64(nil, v) }

func ptr[T any](v T) *T { return &v }

// TestEncodeNAPISet: napi-set's body is the uapi's napi attributes:
// NETDEV_A_NAPI_ID 2 (u32), DEFER_HARD_IRQS 5 (u32), GRO_FLUSH_TIMEOUT
// 6 and IRQ_SUSPEND_TIMEOUT 7 (uint: 4 bytes when the value fits, 8
// when not, as nla_put_uint), THREADED 8 (u32: disabled 0, enabled 1).
// The numbers are written here from the header, not taken from the
// encoder's constants.
func TestEncodeNAPISet(t *testing.T) {
	tests := []struct {
		name string
		id   uint32
		give NAPISetting
		want [][]byte
	}{
		{"all", 8193, NAPISetting{DeferHardIRQs: ptr(uint32(2)), GROFlushTimeout: ptr(uint64(20000)), IRQSuspendTimeout: ptr(uint64(5_000_000_000)), Threaded: ptr(true)},
			[][]byte{nla(2, u32b(8193)), nla(5, u32b(2)), nla(6, u32b(20000)), nla(7, u64b(5_000_000_000)), nla(8, u32b(1))}},
		{"threaded off", 257, NAPISetting{Threaded: ptr(false)}, [][]byte{nla(2, u32b(257)), nla(8, u32b(0))}},
		{"zeros", 257, NAPISetting{DeferHardIRQs: ptr(uint32(0)), GROFlushTimeout: ptr(uint64(0))},
			[][]byte{nla(2, u32b(257)), nla(5, u32b(0)), nla(6, u32b(0))}},
		{"largest u32 timeout", 9, NAPISetting{GROFlushTimeout: ptr(uint64(math.MaxUint32))}, [][]byte{nla(2, u32b(9)), nla(6, u32b(math.MaxUint32))}},
	}
	for _, tt := range tests {
		got := ethnl.Encode(func(ae *netlink.AttributeEncoder) { encodeNAPISet(ae, tt.id, tt.give) })
		if want := bytes.Join(tt.want, nil); !bytes.Equal(got, want) {
			t.Errorf("%s: napi-set body\n% x\nwant\n% x", tt.name, got, want)
		}
	}
}

// The recorded answers of a 6.18 kernel (virtio_net eth0, ifindex 4):
// see testdata/virtio-6.18/README.
func recorded(t testing.TB, name string) []ethnl.Msg {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "virtio-6.18", name))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := ethnl.DecodeMsgs(b)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// napiKernel answers as a kernel with one NIC, eth0, whose one NAPI
// instance starts as the recorded napi-get reply has it: napi-set puts
// the attributes it carries in place of napi-get's of the same type (one
// attribute set, as the spec has it), and napi-get answers what it
// holds. Everything else it refuses, so steer leaves its part unknown.
type napiKernel struct {
	family []ethnl.Msg
	napi   []ethnl.Msg // the napi-get dump, one instance
	sets   []ethnl.Request
	refuse error // napi-set's answer
	ignore bool  // napi-set is acknowledged and changes nothing
}

func newNAPIKernel(t testing.TB) *napiKernel {
	return &napiKernel{family: recorded(t, "nlctrl.netdev"), napi: recorded(t, "netdev.napi-get")}
}

const (
	genlIDCtrl       = 0x10
	netdevCmdNAPIGet = 11
)

func (k *napiKernel) Genl(req ethnl.Request) ([]ethnl.Msg, error) {
	switch {
	case req.Family == genlIDCtrl && req.Key == "nlctrl.netdev":
		return k.family, nil
	case req.Family == genlIDCtrl:
		return nil, unix.ENOENT
	case req.Family == k.napi[0].Type && req.Cmd == netdevCmdNAPIGet && req.Dump: // a reply's type is its family's id
		return slices.Clone(k.napi), nil
	}
	return nil, unix.EOPNOTSUPP
}

func (k *napiKernel) GenlRaw(req ethnl.Request) ([]ethnl.Msg, error) {
	k.sets = append(k.sets, req)
	if req.Cmd != netdevCmdNAPISet || !req.Ack {
		return nil, unix.EOPNOTSUPP
	}
	if k.refuse != nil || k.ignore {
		return nil, k.refuse
	}
	set := map[uint16][]byte{}
	if err := ethnl.Attrs(req.Attrs, func(typ uint16, ad *netlink.AttributeDecoder) error {
		set[typ] = ad.Bytes()
		return nil
	}); err != nil {
		return nil, err
	}
	ae := netlink.NewAttributeEncoder()
	if err := ethnl.Attrs(k.napi[0].Attrs, func(typ uint16, ad *netlink.AttributeDecoder) error {
		if v, ok := set[typ]; ok && typ != netdevNAPIID {
			ae.Bytes(typ, v)
			return nil
		}
		ae.Bytes(typ, ad.Bytes())
		return nil
	}); err != nil {
		return nil, err
	}
	b, err := ae.Encode()
	k.napi[0].Attrs = b
	return nil, err
}

func (k *napiKernel) Ioctl(ethnl.IoctlRequest) ([]byte, error) { return nil, unix.EOPNOTSUPP }
func (k *napiKernel) Where(dir, key string) string             { return dir + "/" + key }
func (k *napiKernel) Close() error                             { return nil }

// napiSetter is a liveSetter asking k, over a root whose eth0 has the
// recorded ifindex.
func napiSetter(t testing.TB, k *napiKernel) *liveSetter {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sys/class/net/eth0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sys/class/net/eth0/ifindex"), []byte("4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := kfile.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return &liveSetter{fsys: fsys, ask: k}
}

// The recorded eth0's one NAPI instance.
const recordedNAPI = 257

// TestSetNAPI sets every setting of the recorded NAPI and reads it back
// through steer's decoder of napi-get: the request is napi-set of the
// recorded family, acknowledged.
func TestSetNAPI(t *testing.T) {
	k := newNAPIKernel(t)
	s := napiSetter(t, k)
	give := NAPISetting{DeferHardIRQs: ptr(uint32(2)), GROFlushTimeout: ptr(uint64(20000)), IRQSuspendTimeout: ptr(uint64(5_000_000_000)), Threaded: ptr(true)}
	if err := s.SetNAPI("eth0", recordedNAPI, give); err != nil {
		t.Fatalf("SetNAPI: %v", err)
	}
	if len(k.sets) != 1 || k.sets[0].Family != k.napi[0].Type || k.sets[0].Version != 1 || k.sets[0].Dump {
		t.Fatalf("requests %+v, want one napi-set to netdev's family", k.sets)
	}
	n, err := s.Read("eth0")
	if err != nil {
		t.Fatal(err)
	}
	got := n.NAPIs[0]
	if *got.DeferHardIRQs != 2 || *got.GROFlushTimeout != 20000 || *got.IRQSuspendTimeout != 5_000_000_000 || !*got.Threaded {
		t.Errorf("napi-get after the set: %+v", got)
	}
	// Back, one setting at a time; the others stay.
	if err := s.SetNAPI("eth0", recordedNAPI, NAPISetting{Threaded: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if n, _ = s.Read("eth0"); *n.NAPIs[0].Threaded || *n.NAPIs[0].DeferHardIRQs != 2 {
		t.Errorf("after threaded off: %+v", n.NAPIs[0])
	}
}

// TestSetNAPIRefusals: each way a set does not happen, and what it says.
func TestSetNAPIRefusals(t *testing.T) {
	two := NAPISetting{DeferHardIRQs: ptr(uint32(2))}
	tests := []struct {
		name    string
		id      uint32
		give    NAPISetting
		kernel  func(k *napiKernel)
		sent    int // napi-set requests sent
		wantErr error
		want    string
	}{
		{"read back differs", recordedNAPI, two, func(k *napiKernel) { k.ignore = true }, 1, ErrReadBack, "defer-hard-irqs is 0, want 2"},
		{"another NIC's id", 8193, two, nil, 0, nil, "eth0 has no NAPI instance 8193"},
		{"nothing to set", recordedNAPI, NAPISetting{}, nil, 0, nil, "sets nothing"},
		{"past S32_MAX", recordedNAPI, NAPISetting{DeferHardIRQs: ptr(uint32(math.MaxInt32 + 1))}, nil, 0, nil, "more than the kernel takes"},
		{"before 6.13: no napi-set", recordedNAPI, two, func(k *napiKernel) { k.family = withoutOp(t, k.family, netdevCmdNAPISet) }, 0, ErrNoNAPISet, "Linux 6.13 added it"},
		{"before 6.13: EOPNOTSUPP", recordedNAPI, two, func(k *napiKernel) { k.refuse = unix.EOPNOTSUPP }, 1, ErrNoNAPISet, "Linux 6.13 added it) (the kernel answered EOPNOTSUPP)"},
		{"before 6.17: no threaded", recordedNAPI, NAPISetting{Threaded: ptr(true)}, func(k *napiKernel) { k.napi[0].Attrs = withoutAttr(t, k.napi[0].Attrs, 8) }, 0, nil, "per-NAPI threaded came in Linux 6.17"},
		{"refused", recordedNAPI, two, func(k *napiKernel) {
			k.refuse = &netlink.OpError{Op: "receive", Err: unix.EPERM, Message: "napi-set needs CAP_NET_ADMIN"}
		}, 1, unix.EPERM, "eth0 napi-set: EPERM (needs CAP_NET_ADMIN): napi-set needs CAP_NET_ADMIN"},
	}
	for _, tt := range tests {
		k := newNAPIKernel(t)
		if tt.kernel != nil {
			tt.kernel(k)
		}
		err := napiSetter(t, k).SetNAPI("eth0", tt.id, tt.give)
		if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
			t.Errorf("%s: SetNAPI = %v, want an error saying %q (is %v)", tt.name, err, tt.want, tt.wantErr)
		}
		if len(k.sets) != tt.sent {
			t.Errorf("%s: %d napi-set requests sent, want %d", tt.name, len(k.sets), tt.sent)
		}
	}
	var se *SetError
	k := newNAPIKernel(t)
	k.refuse = &netlink.OpError{Op: "receive", Err: unix.EINVAL, Message: "napi not found"}
	if err := napiSetter(t, k).SetNAPI("eth0", recordedNAPI, two); !errors.As(err, &se) || se.Message != "napi not found" || se.Op != "napi-set" {
		t.Errorf("a refusal: %v, want a *SetError with the extack message", err)
	}
}

// withoutOp is a family reply whose command op is renumbered 0xee: the
// recorded 6.18 reply as a kernel before 6.13 lists it, without
// napi-set.
func withoutOp(t testing.TB, msgs []ethnl.Msg, op uint32) []ethnl.Msg {
	t.Helper()
	id := nla(1, u32b(op)) // CTRL_ATTR_OP_ID in an op's nest
	if bytes.Count(msgs[0].Attrs, id) != 1 {
		t.Fatalf("the family reply names op %d %d times", op, bytes.Count(msgs[0].Attrs, id))
	}
	out := slices.Clone(msgs)
	out[0].Attrs = bytes.Replace(msgs[0].Attrs, id, nla(1, u32b(0xee)), 1)
	return out
}

// withoutAttr is b without attribute typ: napi-get's reply as a kernel
// without the setting sends it.
func withoutAttr(t testing.TB, b []byte, typ uint16) []byte {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	if err := ethnl.Attrs(b, func(got uint16, ad *netlink.AttributeDecoder) error {
		if got != typ {
			ae.Bytes(got, ad.Bytes())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	out, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCheckNAPIReadBack(t *testing.T) {
	on, zero := true, uint32(0)
	n := &steer.NIC{Name: "eth0", NAPIs: []steer.NAPI{{ID: 257, DeferHardIRQs: &zero, Threaded: &on}}}
	tests := []struct {
		name string
		nic  *steer.NIC
		give NAPISetting
		want string // "" for none
	}{
		{"same", n, NAPISetting{DeferHardIRQs: ptr(uint32(0)), Threaded: ptr(true)}, ""},
		{"threaded differs", n, NAPISetting{Threaded: ptr(false)}, "threaded is enabled, want disabled"},
		{"not reported", n, NAPISetting{GROFlushTimeout: ptr(uint64(1))}, "napi-get reports no gro-flush-timeout"},
		{"instance gone", &steer.NIC{Name: "eth0", NAPIs: []steer.NAPI{}}, NAPISetting{Threaded: ptr(true)}, "no NAPI instance 257"},
		{"napi-get unread", &steer.NIC{Name: "eth0", Unknown: map[steer.Part]unknown.Reason{steer.PartNAPI: {Kind: unknown.KindKernel, Detail: "netdev netlink has no napi-get command"}}},
			NAPISetting{Threaded: ptr(true)}, "napi-get command"},
	}
	for _, tt := range tests {
		err := checkNAPI(tt.nic, 257, tt.give)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: checkNAPI = %v, want nil", tt.name, err)
		case tt.want != "" && (!errors.Is(err, ErrReadBack) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: checkNAPI = %v, want ErrReadBack saying %q", tt.name, err, tt.want)
		}
	}
}

// FuzzSetNAPI: whatever the values, the set the encoder writes reads
// back through steer's decoder of napi-get as the values set.
func FuzzSetNAPI(f *testing.F) {
	f.Add(uint32(2), uint64(20000), uint64(5_000_000_000), true, uint8(0xf))
	f.Add(uint32(0), uint64(0), uint64(0), false, uint8(1))
	f.Fuzz(func(t *testing.T, deferIRQs uint32, gro, suspend uint64, threaded bool, which uint8) {
		var s NAPISetting
		if which&1 != 0 {
			s.DeferHardIRQs = ptr(deferIRQs % (math.MaxInt32 + 1))
		}
		if which&2 != 0 {
			s.GROFlushTimeout = &gro
		}
		if which&4 != 0 {
			s.IRQSuspendTimeout = &suspend
		}
		if which&8 != 0 || which&0xf == 0 {
			s.Threaded = &threaded
		}
		if err := napiSetter(t, newNAPIKernel(t)).SetNAPI("eth0", recordedNAPI, s); err != nil {
			t.Fatalf("SetNAPI(%+v): %v", s, err)
		}
	})
}
