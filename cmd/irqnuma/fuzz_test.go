package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// fuzzTree is a copy of a committed tree that a fuzz target mutates and
// puts back after each input.
type fuzzTree struct {
	root  string
	files []string // every file and link, relative, sorted
}

func newFuzzTree(f *testing.F, name string) *fuzzTree {
	root := hosttest.Copy(f, name)
	ft := &fuzzTree{root: root}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			ft.files = append(ft.files, rel)
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	slices.Sort(ft.files)
	return ft
}

// saved is a file's state before a mutation.
type saved struct {
	path   string
	link   string
	data   []byte
	mode   fs.FileMode
	isLink bool
}

func save(p string) saved {
	s := saved{path: p}
	fi, err := os.Lstat(p)
	if err != nil {
		return s
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		s.isLink = true
		s.link, _ = os.Readlink(p)
		return s
	}
	s.data, _ = os.ReadFile(p)
	s.mode = fi.Mode().Perm()
	return s
}

func (s saved) restore() error {
	if err := os.RemoveAll(s.path); err != nil {
		return err
	}
	if s.isLink {
		return os.Symlink(s.link, s.path)
	}
	if err := os.WriteFile(s.path, s.data, 0o600); err != nil {
		return err
	}
	return os.Chmod(s.path, s.mode)
}

// mutate applies op to the file picked by which, with data.
func (ft *fuzzTree) mutate(which uint16, op uint8, data []byte) (saved, error) {
	rel := ft.files[int(which)%len(ft.files)]
	p := filepath.Join(ft.root, rel)
	s := save(p)
	var err error
	switch op % 6 {
	case 0: // new content
		err = os.WriteFile(p, data, s.mode|0o200)
	case 1: // more content
		err = os.WriteFile(p, append(append([]byte{}, s.data...), data...), s.mode|0o200)
	case 2: // gone
		err = os.Remove(p)
	case 3: // a link to wherever data says
		if err = os.Remove(p); err == nil {
			err = os.Symlink(strings.ReplaceAll(string(data), "\x00", ""), p)
		}
	case 4: // a folder in its place
		if err = os.Remove(p); err == nil {
			err = os.Mkdir(p, 0o755)
		}
	case 5: // cut short
		if len(s.data) > 0 {
			err = os.WriteFile(p, s.data[:len(data)%len(s.data)], s.mode|0o200)
		}
	}
	return s, err
}

// FuzzHostTree mutates a two-node tree (offline-2node: four NICs, offline
// CPUs), two files at a time, and runs every reading command on it: none
// may panic (exit 70), none may call bad input a usage error (exit 2).
func FuzzHostTree(f *testing.F) {
	ft := newFuzzTree(f, "offline-2node")
	idx := func(rel string) uint16 { return uint16(slices.Index(ft.files, rel)) }
	f.Add(idx("proc/interrupts"), uint8(5), []byte("xxxxxxxxxx"), idx("sys/devices/system/node/node1/cpulist"), uint8(0), []byte("8-15,99\n"))
	f.Add(idx("sys/devices/system/cpu/online"), uint8(0), []byte("0-2000000\n"), idx("proc/stat"), uint8(1), []byte("cpu99 1 2 3 4 5 6 7\n"))
	f.Add(idx("sys/devices/system/node/node0/distance"), uint8(0), []byte("-1 0\n"), idx("proc/softirqs"), uint8(5), []byte("abc"))
	f.Add(idx("proc/net/softnet_stat"), uint8(3), []byte("/proc/net/softnet_stat"), idx("sys/devices/system/cpu/possible"), uint8(4), []byte{})
	commands := [][]string{
		{"topology", "-o", "json"},
		{"irq", "list", "--all", "-o", "json"},
		{"irq", "list"},
		{"audit", "--fail-on", "never", "-o", "json"},
		{"map"},
		{"watch", "--count", "2", "--interval", "1ms", "-o", "json"},
	}
	f.Fuzz(func(t *testing.T, w1 uint16, op1 uint8, d1 []byte, w2 uint16, op2 uint8, d2 []byte) {
		var undo []saved
		defer func() {
			for i := len(undo) - 1; i >= 0; i-- {
				if err := undo[i].restore(); err != nil {
					t.Fatalf("restore %s: %v", undo[i].path, err)
				}
			}
		}()
		for _, m := range []struct {
			w  uint16
			op uint8
			d  []byte
		}{{w1, op1, d1}, {w2, op2, d2}} {
			s, err := ft.mutate(m.w, m.op, m.d)
			undo = append(undo, s)
			if err != nil {
				return // a mutation the filesystem refused
			}
		}
		for _, c := range commands {
			args := append([]string{"--root", ft.root}, c...)
			_, stderr, code := runCLI(t, args...)
			if code == cli.ExitInternal || strings.Contains(stderr, "panic") {
				t.Fatalf("irqnuma %s: exit %d: %s", strings.Join(c, " "), code, stderr)
			}
			if code == cli.ExitUsage {
				t.Fatalf("irqnuma %s: exit 2 on a damaged tree: %s", strings.Join(c, " "), stderr)
			}
		}
	})
}
