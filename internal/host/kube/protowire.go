package kube

import (
	"errors"
	"math"
)

// The protobuf wire format (protobuf.dev/programming-guides/encoding),
// as much of it as decoding the pod resources API's answer takes: kube
// decodes that answer itself rather than link google.golang.org/protobuf,
// whose internal/detrand hashes the running binary (reading it through
// /proc/self/exe) in its package initialisation, at every start of every
// irqnuma command.

// fieldNum is a field's number; wireType how its value is encoded.
type (
	fieldNum int32
	wireType int8
)

// The wire types.
const (
	varintType     wireType = 0
	fixed64Type    wireType = 1
	bytesType      wireType = 2
	startGroupType wireType = 3
	endGroupType   wireType = 4
	fixed32Type    wireType = 5
)

// maxGroupDepth bounds the nesting of groups skipped (protowire's
// DefaultRecursionLimit).
const maxGroupDepth = 10000

var (
	errTruncated = errors.New("unexpected end of message")
	errOverflow  = errors.New("varint overflows 64 bits")
	errFieldNum  = errors.New("invalid field number")
	errWireType  = errors.New("invalid wire type")
	errEndGroup  = errors.New("mismatching end group marker")
	errDepth     = errors.New("groups nested too deep")
)

// consumeVarint decodes the varint at the head of b: its value and
// length.
func consumeVarint(b []byte) (uint64, int, error) {
	var x uint64
	for i := 0; i < 10; i++ {
		if i >= len(b) {
			return 0, 0, errTruncated
		}
		c := b[i]
		if i == 9 && c > 1 {
			return 0, 0, errOverflow
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, i + 1, nil
		}
	}
	return 0, 0, errOverflow
}

// consumeTag decodes the tag at the head of b: field number, wire type
// and length.
func consumeTag(b []byte) (fieldNum, wireType, int, error) {
	x, n, err := consumeVarint(b)
	if err != nil {
		return 0, 0, 0, err
	}
	num := x >> 3
	if num < 1 || num > math.MaxInt32 { // as protowire: 0 and past int32 are no numbers
		return 0, 0, 0, errFieldNum
	}
	return fieldNum(num), wireType(x & 7), n, nil
}

// consumeBytes decodes the length-delimited value at the head of b: its
// bytes and the length consumed.
func consumeBytes(b []byte) ([]byte, int, error) {
	l, n, err := consumeVarint(b)
	if err != nil {
		return nil, 0, err
	}
	if l > uint64(len(b)-n) {
		return nil, 0, errTruncated
	}
	return b[n : n+int(l)], n + int(l), nil
}

// skipValue is the length of the value of field num, of wire type typ, at
// the head of b: a group up to its end marker, depth groups deep at most.
func skipValue(num fieldNum, typ wireType, b []byte, depth int) (int, error) {
	switch typ {
	case varintType:
		_, n, err := consumeVarint(b)
		return n, err
	case bytesType:
		_, n, err := consumeBytes(b)
		return n, err
	case fixed32Type, fixed64Type:
		size := 4
		if typ == fixed64Type {
			size = 8
		}
		if len(b) < size {
			return 0, errTruncated
		}
		return size, nil
	case startGroupType:
		return skipGroup(num, b, depth)
	case endGroupType:
		return 0, errEndGroup
	}
	return 0, errWireType
}

// skipGroup is the length of group num's fields and end marker at the
// head of b.
func skipGroup(num fieldNum, b []byte, depth int) (int, error) {
	if depth == 0 {
		return 0, errDepth
	}
	total := 0
	for {
		n2, t2, n, err := consumeTag(b[total:])
		if err != nil {
			return 0, err
		}
		total += n
		if t2 == endGroupType {
			if n2 != num {
				return 0, errEndGroup
			}
			return total, nil
		}
		n, err = skipValue(n2, t2, b[total:], depth-1)
		if err != nil {
			return 0, err
		}
		total += n
	}
}
