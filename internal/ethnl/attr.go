package ethnl

import (
	"fmt"

	"github.com/mdlayher/netlink"
)

// Attrs walks one level of netlink attributes, calling fn with each
// attribute's type (flags masked off) and decoder. Decoding errors of
// the walk and of fn come back as one error.
func Attrs(b []byte, fn func(typ uint16, ad *netlink.AttributeDecoder) error) error {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return err
	}
	for ad.Next() {
		if err := fn(ad.Type(), ad); err != nil {
			return err
		}
	}
	return ad.Err()
}

// U32 reads a 4-byte attribute.
func U32(ad *netlink.AttributeDecoder, name string) (uint32, error) {
	b := ad.Bytes()
	if len(b) != 4 {
		return 0, fmt.Errorf("%s: %d bytes, want 4", name, len(b))
	}
	return native.Uint32(b), nil
}

// U8 reads a 1-byte attribute.
func U8(ad *netlink.AttributeDecoder, name string) (uint8, error) {
	b := ad.Bytes()
	if len(b) != 1 {
		return 0, fmt.Errorf("%s: %d bytes, want 1", name, len(b))
	}
	return b[0], nil
}

// Uint reads a netlink "uint": 4 or 8 bytes (nla_put_uint).
func Uint(ad *netlink.AttributeDecoder, name string) (uint64, error) {
	b := ad.Bytes()
	switch len(b) {
	case 4:
		return uint64(native.Uint32(b)), nil
	case 8:
		return native.Uint64(b), nil
	}
	return 0, fmt.Errorf("%s: %d bytes, want 4 or 8", name, len(b))
}

// Str reads a NUL-terminated string attribute.
func Str(ad *netlink.AttributeDecoder, name string) (string, error) {
	b := ad.Bytes()
	if len(b) == 0 || b[len(b)-1] != 0 {
		return "", fmt.Errorf("%s: not NUL-terminated", name)
	}
	return string(b[:len(b)-1]), nil
}

// Encode builds request attributes; fn adds them. A nested encoder fn
// starts must return no error: requests are built from their own
// values, never from input, so an error there is a bug and panics.
func Encode(fn func(ae *netlink.AttributeEncoder)) []byte {
	ae := netlink.NewAttributeEncoder()
	fn(ae)
	b, err := ae.Encode()
	if err != nil {
		panic(err)
	}
	return b
}
