package ethnl

import (
	"errors"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestGuardedFaults: a write past the ioctl buffer, as an old kernel's
// GSTATS makes when the driver's count grew, faults on the guard page
// (EFAULT) instead of landing in memory the program owns. The kernel
// writes here as the ioctl would: a read(2) into the buffer's address
// with a length past its end.
func TestGuardedFaults(t *testing.T) {
	var g guarded
	defer g.release()
	for _, n := range []int{8, 4096, 5000} {
		buf, err := g.buffer(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(buf) != n || cap(buf) != n {
			t.Fatalf("buffer(%d): len %d cap %d", n, len(buf), cap(buf))
		}
		p := make([]int, 2)
		if err := unix.Pipe(p); err != nil {
			t.Fatal(err)
		}
		data := make([]byte, n+64)
		for i := range data {
			data[i] = byte(i)
		}
		if _, err := unix.Write(p[1], data); err != nil {
			t.Fatal(err)
		}
		// Exactly the buffer: fits.
		if got, err := unix.Read(p[0], buf); err != nil || got != n {
			t.Fatalf("read %d into %d bytes: %d, %v", n, n, got, err)
		}
		if _, err := unix.Write(p[1], data); err != nil {
			t.Fatal(err)
		}
		// Past it: the kernel stops at the guard.
		past := unsafe.Slice(&buf[0], n+64)
		got, err := unix.Read(p[0], past)
		unix.Close(p[0])
		unix.Close(p[1])
		// The kernel faults on the guard: EFAULT, or (a pipe's copy
		// of whole pages) a short read ending at it. Nothing lands
		// beyond the buffer either way.
		if !errors.Is(err, unix.EFAULT) && (err != nil || got > n) {
			t.Fatalf("read %d bytes into a %d-byte guarded buffer: %d, %v; want EFAULT or at most %d", n+64, n, got, err, n)
		}
	}
}
