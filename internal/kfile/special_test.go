package kfile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTreeRefusesSpecialFiles: a tree's file that is a character device
// (/dev/zero's numbers: read to the bound before, 256 MB), a FIFO with no
// writer (read as empty before) or a socket is refused at open by every
// read, naming the file and what it is; a folder and a regular file are
// read as before.
func TestTreeRefusesSpecialFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mknod of a character device needs root")
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(root, "proc/zero")
	if err := unix.Mknod(zero, unix.S_IFCHR|0o444, int(unix.Mkdev(1, 5))); err != nil {
		t.Fatalf("mknod %s: %v", zero, err)
	}
	fifo := filepath.Join(root, "proc/fifo")
	if err := syscall.Mkfifo(fifo, 0o444); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(root, "proc/sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.WriteFile(filepath.Join(root, "proc/plain"), []byte("1\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	fsys := mustOpen(t, root)
	reads := map[string]func(p string) error{
		"Read":      func(p string) error { _, err := fsys.Read(p); return err },
		"ReadLimit": func(p string) error { _, err := fsys.ReadLimit(p, 64<<20); return err },
		"ReadMode":  func(p string) error { _, _, err := fsys.ReadMode(p, nil); return err },
		"ReadInto":  func(p string) error { _, err := fsys.ReadInto(p, nil); return err },
		"ReadBuf":   func(p string) error { _, err := fsys.ReadBuf(p, nil); return err },
		"String":    func(p string) error { _, err := fsys.String(p); return err },
		"OpenFile": func(p string) error {
			f, err := fsys.OpenFile(p, os.O_RDONLY)
			if err == nil {
				f.Close()
			}
			return err
		},
	}
	for _, tt := range []struct{ path, kind string }{{zero, "a character device"}, {fifo, "a FIFO"}} {
		for name, read := range reads {
			start := time.Now()
			err := read(tt.path)
			if !errors.Is(err, ErrSpecial) || !strings.Contains(errText(err), tt.path) || !strings.Contains(errText(err), tt.kind) {
				t.Errorf("%s(%s) = %v, want ErrSpecial naming it and saying %s", name, tt.path, err, tt.kind)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("%s(%s) took %v", name, tt.path, d)
			}
		}
	}
	// A socket cannot be opened (ENXIO): an error either way.
	if _, err := fsys.Read(sock); err == nil {
		t.Errorf("Read(socket) = nil error")
	}
	for name, read := range reads {
		if err := read(filepath.Join(root, "proc/plain")); err != nil {
			t.Errorf("%s(regular file) = %v", name, err)
		}
	}
	// The live root reads its own devices as ever: the check is a tree's.
	if _, err := mustOpen(t, "/").ReadLimit("/dev/null", 16); err != nil {
		t.Errorf("ReadLimit(/dev/null) on the live root = %v", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
