package lab

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type cpioEntry struct {
	Name string
	Mode uint32
	Rdev [2]uint32
	Data string
}

// readCPIO parses a newc archive back, checking the padding as it goes.
func readCPIO(t *testing.T, b []byte) []cpioEntry {
	t.Helper()
	var out []cpioEntry
	off := 0
	field := func(i int) uint32 {
		v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
		if err != nil {
			t.Fatalf("field %d at %d: %v", i, off, err)
		}
		return uint32(v)
	}
	for {
		if string(b[off:off+6]) != "070701" {
			t.Fatalf("magic at %d: %q", off, b[off:off+6])
		}
		mode, size, nsize := field(1), int(field(6)), int(field(11))
		rdev := [2]uint32{field(9), field(10)}
		name := string(b[off+110 : off+110+nsize-1])
		if b[off+110+nsize-1] != 0 {
			t.Fatalf("%s: name not NUL-terminated", name)
		}
		off += 110 + nsize
		off = (off + 3) &^ 3
		data := string(b[off : off+size])
		off = (off + size + 3) &^ 3
		if name == "TRAILER!!!" {
			if off != len(b) {
				t.Fatalf("%d bytes after the trailer", len(b)-off)
			}
			return out
		}
		out = append(out, cpioEntry{Name: name, Mode: mode, Rdev: rdev, Data: data})
	}
}

func TestCPIO(t *testing.T) {
	var buf bytes.Buffer
	c := NewCPIO(&buf)
	for _, err := range []error{
		c.Dir("bin", 0o755),
		c.Dir("dev", 0o755),
		c.CharDev("dev/console", 0o600, 5, 1),
		c.File("/init", 0o755, []byte("#!/bin/sh\n")),
		c.File("bin/x", 0o644, []byte("abcde")),
		c.Symlink("bin/sh", "busybox"),
		c.Close(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len()%4 != 0 {
		t.Errorf("archive length %d is not a multiple of 4", buf.Len())
	}
	want := []cpioEntry{
		{Name: "bin", Mode: 0o40755},
		{Name: "dev", Mode: 0o40755},
		{Name: "dev/console", Mode: 0o20600, Rdev: [2]uint32{5, 1}},
		{Name: "init", Mode: 0o100755, Data: "#!/bin/sh\n"},
		{Name: "bin/x", Mode: 0o100644, Data: "abcde"},
		{Name: "bin/sh", Mode: 0o120777, Data: "busybox"},
	}
	if diff := cmp.Diff(want, readCPIO(t, buf.Bytes())); diff != "" {
		t.Errorf("archive (-want +got):\n%s", diff)
	}
}

func TestCPIORefuses(t *testing.T) {
	tests := []struct {
		give string
	}{{""}, {"../etc"}, {"a/../b"}}
	for _, tt := range tests {
		c := NewCPIO(&bytes.Buffer{})
		if err := c.File(tt.give, 0o644, nil); err == nil {
			t.Errorf("File(%q) = nil, want an error", tt.give)
		}
	}
	c := NewCPIO(&bytes.Buffer{})
	c.File("a", 0o644, nil)
	if err := c.File("a", 0o644, nil); err == nil {
		t.Error("adding a twice: no error")
	}
}
