package kfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestKeptReadsAgain: a kept file of a tree is opened once and read
// again from its start while it stays, rewritten in place longer and
// shorter; one replaced (renamed over) or removed is opened again, its
// absence said as every read says it; a link on its path resolves
// inside the root as every read does.
func TestKeptReadsAgain(t *testing.T) {
	root := tree(t)
	f, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tr traced
	stop := Trace(tr.add(root))
	defer stop()
	p := filepath.Join(root, "proc/cmdline")
	write := func(s string) {
		t.Helper()
		if err := os.Chmod(p, 0o644); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k := f.Keep(f.Path("proc/cmdline"), 0)
	defer k.Close()
	var buf []byte
	read := func(want string) {
		t.Helper()
		b, err := k.Read(buf[:0])
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if string(b) != want {
			t.Fatalf("Read = %q, want %q", b, want)
		}
		buf = b
	}
	read("in the tree\n")
	write(strings.Repeat("longer than the buffer ", 100))
	read(strings.Repeat("longer than the buffer ", 100))
	write("short\n")
	read("short\n")
	tmp := filepath.Join(root, "proc/cmdline.new")
	if err := os.WriteFile(tmp, []byte("renamed over\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	read("renamed over\n")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Read(buf[:0]); !IsNotExist(err) {
		t.Fatalf("Read of a removed file: %v, want one IsNotExist says so of", err)
	}
	write("back\n")
	read("back\n")
	abs := f.Keep(f.Path("proc/abs"), 0) // a link to /proc/cmdline: the tree's
	defer abs.Close()
	if b, err := abs.Read(nil); err != nil || string(b) != "back\n" {
		t.Fatalf("Read through a link = %q, %v, want the tree's file", b, err)
	}
	stop()
	want := []string{
		"read proc/cmdline present",
		"reread proc/cmdline present",
		"reread proc/cmdline present",
		"read proc/cmdline present", // renamed over
		"read proc/cmdline absent",
		"read proc/cmdline present",
		"read proc/abs present",
	}
	if diff := cmp.Diff(want, tr.got); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

// TestKeptLimit: a kept file past its limit fails, at the first read and
// at a read again, and a tree's FIFO is refused without being read.
func TestKeptLimit(t *testing.T) {
	root := tree(t)
	f, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k := f.Keep(f.Path("proc/cmdline"), 12) // "in the tree\n" is 12 bytes
	defer k.Close()
	if b, err := k.Read(nil); err != nil || string(b) != "in the tree\n" {
		t.Fatalf("Read = %q, %v", b, err)
	}
	p := filepath.Join(root, "proc/cmdline")
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, []byte("in the tree!\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Read(nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read past the limit: %v, want ErrTooLarge", err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "proc/fifo"), 0o644); err != nil {
		t.Skip(err)
	}
	fifo := f.Keep(f.Path("proc/fifo"), 0)
	defer fifo.Close()
	if _, err := fifo.Read(nil); !errors.Is(err, ErrSpecial) {
		t.Fatalf("Read of a FIFO: %v, want ErrSpecial", err)
	}
}

// TestKeptLive: on the live root /proc/self/stat is read again at
// offset 0 from the one open file and says what is new (its minor
// faults, field 10, count the pages touched between two reads); a file
// that cannot be read at an offset (a pipe, opened through
// /proc/self/fd) is read as a stream and opened for each read.
func TestKeptLive(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	f, err := Open("/")
	if err != nil {
		t.Fatal(err)
	}
	var tr traced
	stop := Trace(tr.add("/"))
	defer stop()
	k := f.Keep("/proc/self/stat", 0)
	defer k.Close()
	minflt := func() uint64 {
		t.Helper()
		b, err := k.Read(nil)
		if err != nil {
			t.Fatal(err)
		}
		f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:]) // f[0] is field 3
		n, err := strconv.ParseUint(string(f[7]), 10, 64)
		if err != nil {
			t.Fatalf("/proc/self/stat field 10: %v in %q", err, b)
		}
		return n
	}
	before := minflt()
	const pages = 16
	mem, err := unix.Mmap(-1, 0, pages*os.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	for i := 0; i < len(mem); i += os.Getpagesize() {
		mem[i] = 1
	}
	if after := minflt(); after < before+pages {
		t.Errorf("minor faults %d then %d after touching %d new pages: the read again is not fresh", before, after, pages)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.WriteString("in the pipe\n")
	w.Close()
	fd := "/proc/self/fd/" + strconv.Itoa(int(r.Fd()))
	pipe := f.Keep(fd, 0)
	defer pipe.Close()
	if b, err := pipe.Read(nil); err != nil || string(b) != "in the pipe\n" {
		t.Fatalf("Read of a pipe = %q, %v", b, err)
	}
	if b, err := pipe.Read(nil); err != nil || string(b) != "" {
		t.Fatalf("second Read of a pipe = %q, %v, want it empty", b, err)
	}
	stop()
	want := []string{
		"read proc/self/stat present",
		"reread proc/self/stat present",
		"read " + fd[1:] + " present",
		"read " + fd[1:] + " present",
	}
	if diff := cmp.Diff(want, tr.got); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

// TestKeptBudget: a kept file read through a budget's FS is charged one
// file for its open and its bytes at every read, and fails with
// ErrBudget once they pass the bound.
func TestKeptBudget(t *testing.T) {
	root := tree(t)
	f, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := NewBudget(30, 0) // "in the tree\n" is 12 bytes: two reads, not three
	k := f.WithBudget(b).Keep(f.Path("proc/cmdline"), 0)
	defer k.Close()
	for i := range 2 {
		if _, err := k.Read(nil); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if bytes, files := b.Used(); bytes != 24 || files != 1 {
		t.Errorf("after two reads Used() = %d bytes, %d files, want 24 and 1", bytes, files)
	}
	if _, err := k.Read(nil); !errors.Is(err, ErrBudget) {
		t.Fatalf("third read: %v, want ErrBudget", err)
	}
}
