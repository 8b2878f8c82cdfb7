package kube

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// FuzzWireMatchesProtowire: kube's own wire decoding takes a message
// field by field exactly as google.golang.org/protobuf's protowire does
// (the library it replaced in the binary): the same fields, numbers,
// wire types and values, and an error exactly where protowire has one.
func FuzzWireMatchesProtowire(f *testing.F) {
	f.Add([]byte{0x0a, 0x08, 0x0a, 0x01, 'a', 0x22, 0x02, 0x02, 0x03, 0x1a, 0x00})
	f.Add([]byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})       // max uint64
	f.Add([]byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02})       // overflow
	f.Add([]byte{0x0b, 0x10, 0x01, 0x1d, 1, 2, 3, 4, 0x0c, 0x21, 1, 2, 3, 4, 5, 6, 7, 8}) // group, fixed32, fixed64
	f.Add([]byte{0x0b, 0x14})                                                             // group ended by another number
	f.Add([]byte{0x00, 0x01})                                                             // field 0
	f.Add([]byte{0x0e})                                                                   // reserved wire type 6
	f.Add([]byte{0x0a, 0x05, 'a'})                                                        // bytes past the end
	f.Fuzz(func(t *testing.T, b []byte) {
		type field struct {
			num fieldNum
			typ wireType
			v   string
			x   uint64
		}
		var got []field
		err := eachField(b, func(n fieldNum, typ wireType, v []byte, x uint64) error {
			got = append(got, field{n, typ, string(v), x})
			return nil
		})
		var want []field
		rest, ok := b, true
		for len(rest) > 0 && ok {
			num, typ, n := protowire.ConsumeTag(rest)
			if n < 0 {
				ok = false
				break
			}
			rest = rest[n:]
			fl := field{num: fieldNum(num), typ: wireType(typ)}
			switch typ {
			case protowire.BytesType:
				var v []byte
				v, n = protowire.ConsumeBytes(rest)
				fl.v = string(v)
			case protowire.VarintType:
				fl.x, n = protowire.ConsumeVarint(rest)
			default:
				n = protowire.ConsumeFieldValue(num, typ, rest)
			}
			if n < 0 {
				ok = false
				break
			}
			rest = rest[n:]
			want = append(want, fl)
		}
		if (err == nil) != ok {
			t.Fatalf("eachField(% x): error %v, protowire ok %v", b, err, ok)
		}
		if len(got) != len(want) {
			t.Fatalf("eachField(% x) = %d fields, protowire %d: %+v, want %+v", b, len(got), len(want), got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("eachField(% x) field %d = %+v, protowire %+v", b, i, got[i], want[i])
			}
		}
	})
}
