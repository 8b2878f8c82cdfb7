// Package rsshash computes the receive-side-scaling hash a NIC gives a
// flow, and the indirection-table entry that hash picks: the Toeplitz
// function over the NIC's key, with the input laid out as Microsoft's RSS
// specification ("Verifying the RSS Hash Calculation", the layout the
// kernel's drivers and virtio-net's specification follow) lays it out for
// the fields the NIC hashes. It is pure: no I/O, only the standard library.
//
// Only what is defined exactly is computed. The kernel names two other
// hash functions, "xor" (ETH_RSS_HASH_XOR, mlx5's) and "crc32"
// (ETH_RSS_HASH_CRC32), without defining them: the uapi gives each a bit
// and a name, and mlx5 asks its firmware for MLX5_RX_HASH_FN_INVERTED_XOR8,
// whose definition is in no kernel source or document. Hash says so
// (ErrUndefined) rather than guess.
package rsshash

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// Func is an RSS hash function as the kernel's ethtool string set
// (ETH_SS_RSS_HASH_FUNCS) names it.
type Func string

// The hash functions the kernel names.
const (
	FuncToeplitz Func = "toeplitz"
	FuncXOR      Func = "xor"
	FuncCRC32    Func = "crc32"
)

// ErrUndefined is wrapped by the error for a hash that cannot be computed
// exactly: a function the kernel does not define, or an input layout the
// specification does not give.
var ErrUndefined = errors.New("hash unknown")

// ErrKey is wrapped by the error for a key too short for the input.
var ErrKey = errors.New("rss key too short")

// Undefined returns why f cannot be computed, or nil when it can.
func Undefined(f Func) error {
	switch f {
	case FuncToeplitz:
		return nil
	case FuncXOR:
		return fmt.Errorf("%w: the NIC's xor function is not defined exactly (the kernel names ETH_RSS_HASH_XOR without defining it; mlx5's is its firmware's inverted xor8)", ErrUndefined)
	case FuncCRC32:
		return fmt.Errorf("%w: the NIC's crc32 function is not defined exactly (the kernel names ETH_RSS_HASH_CRC32 without its polynomial, seed or input order)", ErrUndefined)
	case "":
		return fmt.Errorf("%w: the NIC does not say its hash function", ErrUndefined)
	}
	return fmt.Errorf("%w: hash function %q is not one the kernel defines", ErrUndefined, string(f))
}

// Toeplitz returns the Toeplitz hash of input under key: for every input
// bit that is set, most significant bit of the first byte first, the 32
// key bits starting at that bit's position are XORed into the result. The
// key must hold at least len(input)+4 bytes.
func Toeplitz(key, input []byte) (uint32, error) {
	if len(key) < len(input)+4 {
		return 0, fmt.Errorf("%w: %d bytes hash at most %d input bytes, the input has %d", ErrKey, len(key), max(len(key)-4, 0), len(input))
	}
	var h uint32
	// window holds key bits [i, i+64) with bit i at the top.
	window := binary.BigEndian.Uint64(pad8(key, 0))
	for i, b := range input {
		for bit := 7; bit >= 0; bit-- {
			if b&(1<<bit) != 0 {
				h ^= uint32(window >> 32)
			}
			window <<= 1
		}
		// Refill the low byte consumed: key byte i+8, when there is one.
		if i+8 < len(key) {
			window |= uint64(key[i+8])
		}
	}
	return h, nil
}

// pad8 returns the 8 bytes of key from off, zero past its end.
func pad8(key []byte, off int) []byte {
	var b [8]byte
	if off < len(key) {
		copy(b[:], key[off:])
	}
	return b[:]
}

// Table is a Toeplitz hash precomputed for one key: for each input byte
// position, the 256 XORs a byte there contributes, so hashing costs one
// lookup per input byte.
type Table struct {
	pos [][256]uint32
}

// NewTable precomputes key's Toeplitz hash for inputs up to maxInput
// bytes; the key must hold at least maxInput+4 bytes.
func NewTable(key []byte, maxInput int) (*Table, error) {
	if maxInput < 0 || len(key) < maxInput+4 {
		return nil, fmt.Errorf("%w: %d bytes hash at most %d input bytes, %d asked for", ErrKey, len(key), max(len(key)-4, 0), maxInput)
	}
	t := &Table{pos: make([][256]uint32, maxInput)}
	for p := range maxInput {
		var bitWin [8]uint32 // the key window of each bit of byte p
		for bit := range 8 {
			w := binary.BigEndian.Uint64(pad8(key, p))
			bitWin[7-bit] = uint32((w << bit) >> 32)
		}
		for v := 1; v < 256; v++ {
			var h uint32
			for bit := range 8 {
				if v&(1<<bit) != 0 {
					h ^= bitWin[bit]
				}
			}
			t.pos[p][v] = h
		}
	}
	return t, nil
}

// Hash returns the Toeplitz hash of input, which must be no longer than
// the table was made for.
func (t *Table) Hash(input []byte) (uint32, error) {
	if len(input) > len(t.pos) {
		return 0, fmt.Errorf("%w: the table hashes at most %d input bytes, the input has %d", ErrKey, len(t.pos), len(input))
	}
	var h uint32
	for i, b := range input {
		h ^= t.pos[i][b]
	}
	return h, nil
}

// Tuple is a received packet's addresses and ports as the receiving host
// sees them: Src is the peer that sent it, Dst this host.
type Tuple struct {
	Src, Dst netip.AddrPort
}

// Input lays out t for the hash fields fields (ethtool's letters, as
// steer.HashFields holds them) the way the RSS specification does: the
// source address, the destination address, then the source port and the
// destination port, each in network byte order; IPv4 addresses as 4
// bytes, IPv6 as 16. Two layouts are defined: "sd" (the 2-tuple) and
// "sdfn" (the 4-tuple); any other set of fields is ErrUndefined, since
// neither the specification nor the kernel says how a NIC arranges it.
func Input(fields string, t Tuple) ([]byte, error) {
	return AppendInput(make([]byte, 0, 36), fields, t)
}

// AppendInput appends Input(fields, t) to out.
func AppendInput(out []byte, fields string, t Tuple) ([]byte, error) {
	src, dst := t.Src.Addr().Unmap(), t.Dst.Addr().Unmap()
	if !src.IsValid() || !dst.IsValid() {
		return nil, errors.New("rss input: source and destination addresses are needed")
	}
	if src.Is4() != dst.Is4() {
		return nil, fmt.Errorf("rss input: %s and %s are not of one address family", src, dst)
	}
	var ports bool
	switch fields {
	case "sd":
	case "sdfn":
		ports = true
	default:
		return nil, fmt.Errorf("%w: the input layout for hash fields %q is not defined (the RSS specification defines sd and sdfn)", ErrUndefined, fields)
	}
	out = appendAddr(out, src)
	out = appendAddr(out, dst)
	if ports {
		out = binary.BigEndian.AppendUint16(out, t.Src.Port())
		out = binary.BigEndian.AppendUint16(out, t.Dst.Port())
	}
	return out, nil
}

func appendAddr(out []byte, a netip.Addr) []byte {
	if a.Is4() {
		b := a.As4()
		return append(out, b[:]...)
	}
	b := a.As16()
	return append(out, b[:]...)
}

// Index returns the indirection-table entry hash picks in a table of size
// entries, and the rule used to say so. Documentation/networking/
// scaling.rst: the NIC "uses the low order seven bits" of the hash for
// its 128-entry table, i.e. the low bits for a power-of-two table, which
// is hash mod size; virtio-net's specification masks the same way and
// requires a power-of-two table. For other sizes the rule differs between
// drivers and is not documented; hash mod size is used and said to be a
// guess of the rule, not of the hash.
func Index(hash uint32, size int) (int, string, error) {
	if size <= 0 {
		return 0, "", errors.New("rss table is empty")
	}
	if size&(size-1) == 0 {
		bits := 0
		for s := size; s > 1; s >>= 1 {
			bits++
		}
		return int(hash & uint32(size-1)), fmt.Sprintf("hash mod %d: the low %d bits, as the kernel documents for power-of-two tables", size, bits), nil
	}
	return int(hash % uint32(size)), fmt.Sprintf("hash mod %d: the table size is not a power of two, where drivers differ and none documents its rule; mod is the rule used", size), nil
}
