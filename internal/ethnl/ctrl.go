package ethnl

import (
	"fmt"

	"github.com/mdlayher/netlink"
)

// Generic netlink's controller (linux/genetlink.h).
const (
	genlIDCtrl         = 0x10 // GENL_ID_CTRL
	ctrlCmdGetFamily   = 3
	ctrlVersion        = 2
	ctrlAttrFamilyID   = 1
	ctrlAttrFamilyName = 2
	ctrlAttrVersion    = 3
	ctrlAttrOps        = 6
	ctrlAttrOpID       = 1
	ctrlAttrOpFlags    = 2
	genlCmdCapDump     = 0x04
)

// Family is a generic netlink family as the controller describes it:
// its id, version and the commands it has, with their flags.
type Family struct {
	// ID is the family's id, which a request to it carries.
	ID      uint16
	name    string
	version uint32
	ops     map[uint32]uint32
}

// Has reports whether the family has command cmd.
func (f *Family) Has(cmd uint8) bool {
	_, ok := f.ops[uint32(cmd)]
	return ok
}

// CanDump reports whether command cmd can be dumped.
func (f *Family) CanDump(cmd uint8) bool { return f.ops[uint32(cmd)]&genlCmdCapDump != 0 }

// FamilyRequest is CTRL_CMD_GETFAMILY for the family name, its answer
// kept as KernelDir's "nlctrl.NAME". A kernel without the family
// answers ENOENT.
func FamilyRequest(name string) Request {
	return Request{
		Dir: KernelDir, Key: "nlctrl." + name, Family: genlIDCtrl, Cmd: ctrlCmdGetFamily, Version: ctrlVersion,
		Attrs: Encode(func(ae *netlink.AttributeEncoder) { ae.String(ctrlAttrFamilyName, name) }),
	}
}

// DecodeFamily reads CTRL_CMD_GETFAMILY's reply.
func DecodeFamily(name string, msgs []Msg) (*Family, error) {
	if len(msgs) != 1 {
		return nil, fmt.Errorf("%d messages, want 1", len(msgs))
	}
	f := &Family{name: name, ops: map[uint32]uint32{}}
	err := Attrs(msgs[0].Attrs, func(typ uint16, ad *netlink.AttributeDecoder) error {
		switch typ {
		case ctrlAttrFamilyID:
			b := ad.Bytes()
			if len(b) != 2 {
				return fmt.Errorf("family id: %d bytes, want 2", len(b))
			}
			f.ID = native.Uint16(b)
		case ctrlAttrVersion:
			v, err := U32(ad, "version")
			f.version = v
			return err
		case ctrlAttrOps:
			return Attrs(ad.Bytes(), func(_ uint16, op *netlink.AttributeDecoder) error {
				return f.addOp(op.Bytes())
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if f.ID == 0 {
		return nil, fmt.Errorf("no family id")
	}
	return f, nil
}

func (f *Family) addOp(b []byte) error {
	var id, flags uint32
	var haveID bool
	err := Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		var err error
		switch typ {
		case ctrlAttrOpID:
			id, err = U32(ad, "op id")
			haveID = true
		case ctrlAttrOpFlags:
			flags, err = U32(ad, "op flags")
		}
		return err
	})
	if err != nil {
		return err
	}
	if !haveID {
		return fmt.Errorf("an operation without an id")
	}
	f.ops[id] = flags
	return nil
}
