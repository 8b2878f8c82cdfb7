package hosttest

import (
	"encoding/binary"
	"os"
	"testing"
)

// PutNative writes v, of size bytes (2, 4 or 8, in the machine's byte
// order, as the kernel writes its netlink and ioctl answers), at off of
// the file p (a recorded reply), and returns what puts the file back.
func PutNative(t testing.TB, p string, off, size int, v uint64) (undo func()) {
	t.Helper()
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 || off+size > len(orig) {
		t.Fatalf("%s: %d bytes, no room for %d at %d", p, len(orig), size, off)
	}
	b := append([]byte(nil), orig...)
	switch size {
	case 2:
		binary.NativeEndian.PutUint16(b[off:], uint16(v))
	case 4:
		binary.NativeEndian.PutUint32(b[off:], uint32(v))
	case 8:
		binary.NativeEndian.PutUint64(b[off:], v)
	default:
		t.Fatalf("PutNative: a field of %d bytes", size)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.WriteFile(p, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
