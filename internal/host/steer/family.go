package steer

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

// family is a generic netlink family as the controller describes it:
// its id, version and the commands it has, with their flags.
type family struct {
	name    string
	id      uint16
	version uint32
	ops     map[uint32]uint32
}

// has reports whether the family has command cmd.
func (f *family) has(cmd uint8) bool {
	_, ok := f.ops[uint32(cmd)]
	return ok
}

// canDump reports whether command cmd can be dumped.
func (f *family) canDump(cmd uint8) bool { return f.ops[uint32(cmd)]&genlCmdCapDump != 0 }

// decodeFamily reads CTRL_CMD_GETFAMILY's reply.
func decodeFamily(name string, msgs []genlMsg) (*family, error) {
	if len(msgs) != 1 {
		return nil, fmt.Errorf("%d messages, want 1", len(msgs))
	}
	f := &family{name: name, ops: map[uint32]uint32{}}
	err := attrs(msgs[0].Attrs, func(typ uint16, ad *netlink.AttributeDecoder) error {
		switch typ {
		case ctrlAttrFamilyID:
			b := ad.Bytes()
			if len(b) != 2 {
				return fmt.Errorf("family id: %d bytes, want 2", len(b))
			}
			f.id = native.Uint16(b)
		case ctrlAttrVersion:
			v, err := u32(ad, "version")
			f.version = v
			return err
		case ctrlAttrOps:
			return attrs(ad.Bytes(), func(_ uint16, op *netlink.AttributeDecoder) error {
				return f.addOp(op.Bytes())
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if f.id == 0 {
		return nil, fmt.Errorf("no family id")
	}
	return f, nil
}

func (f *family) addOp(b []byte) error {
	var id, flags uint32
	var haveID bool
	err := attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		var err error
		switch typ {
		case ctrlAttrOpID:
			id, err = u32(ad, "op id")
			haveID = true
		case ctrlAttrOpFlags:
			flags, err = u32(ad, "op flags")
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
