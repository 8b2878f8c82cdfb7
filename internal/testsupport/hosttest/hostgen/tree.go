// Package hostgen builds the host trees under testdata/hosts and the
// synthetic trees of hosttest.Synthetic: a Host model (CPUs, NUMA nodes, PCI
// functions, NICs, IRQs) rendered into the files a Linux kernel shows under
// /proc and /sys, in the kernel's exact formats.
//
// A Host is rendered into a Tree, an in-memory list of files, symlinks and
// modes, which Write puts on disk.
package hostgen

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// KeepFile is the file written into directories that must exist but hold
// nothing (the /proc/irq/N/<action> folders), so that git keeps them.
// Readers look only at directory names there.
const KeepFile = ".gitkeep"

// Tree is a file tree in memory. Paths are slash-separated and relative to
// the tree's root (the folder holding proc/ and sys/).
type Tree struct {
	files []file
	links []link
	dirs  []string
	// modes holds the modes that differ from DefaultMode.
	modes map[string]fs.FileMode
}

type file struct {
	path string
	data []byte
}

type link struct{ path, target string }

// NewTree returns an empty tree.
func NewTree() *Tree { return &Tree{modes: map[string]fs.FileMode{}} }

// File adds a regular file.
func (t *Tree) File(p string, data []byte) { t.files = append(t.files, file{p, data}) }

// Line adds a file holding s and the kernel's trailing newline.
func (t *Tree) Line(p, s string) { t.File(p, []byte(s+"\n")) }

// Linef adds a file holding the formatted text and a trailing newline.
func (t *Tree) Linef(p, format string, args ...any) { t.Line(p, fmt.Sprintf(format, args...)) }

// Symlink adds a symlink at p pointing at target, which is kept verbatim
// (relative targets stay relative).
func (t *Tree) Symlink(p, target string) { t.links = append(t.links, link{p, target}) }

// Dir adds a directory that exists even when nothing else is put in it.
func (t *Tree) Dir(p string) { t.dirs = append(t.dirs, p) }

// Mode records that p has mode m on a real host where that differs from
// DefaultMode(p).
func (t *Tree) Mode(p string, m fs.FileMode) {
	if m == DefaultMode(p) {
		delete(t.modes, p)
		return
	}
	t.modes[p] = m
}

// Len returns the number of files and symlinks in t.
func (t *Tree) Len() int { return len(t.files) + len(t.links) }

// Snapshot maps every path Write(root, o) would create below root to the
// file's content, or to "-> target" for a symlink; directories are left
// out. Tests compare it with a tree on disk without writing one.
func (t *Tree) Snapshot(o WriteOptions) map[string]string {
	m := make(map[string]string, len(t.files)+len(t.links)+1)
	for _, f := range t.files {
		m[f.path] = string(f.data)
	}
	for _, l := range t.links {
		m[l.path] = "-> " + l.target
	}
	if o.KeepEmpty {
		for _, d := range t.dirs {
			m[d+"/"+KeepFile] = ""
		}
	}
	if o.ModesFile {
		m["modes"] = string(t.Modes())
	}
	return m
}

// DefaultMode is the mode of a file unless the modes file says otherwise:
// 0644 for /proc/irq/N/smp_affinity and smp_affinity_list, which an
// administrator writes, and 0444 for everything else.
func DefaultMode(rel string) fs.FileMode {
	if strings.HasPrefix(rel, "proc/irq/") {
		switch path.Base(rel) {
		case "smp_affinity", "smp_affinity_list":
			return 0o644
		}
	}
	return 0o444
}

// Modes returns the text of the modes file: one "path octal-mode" line per
// file whose mode differs from DefaultMode, sorted by path.
func (t *Tree) Modes() []byte {
	keys := make([]string, 0, len(t.modes))
	for k := range t.modes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sb strings.Builder
	sb.WriteString("# Modes git cannot keep: path (relative to this folder) and octal mode.\n")
	sb.WriteString("# Files not listed: proc/irq/*/smp_affinity{,_list} 0644, everything else 0444.\n")
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s %04o\n", k, t.modes[k])
	}
	return []byte(sb.String())
}

// WriteOptions say how Write lays the tree out on disk.
type WriteOptions struct {
	// ApplyModes creates each file with its real-host mode (DefaultMode or
	// the recorded exception). Without it files are 0644 and the modes are
	// only recorded in the modes file.
	ApplyModes bool
	// ModesFile writes the modes file "modes" at the root.
	ModesFile bool
	// KeepEmpty writes KeepFile into the directories added with Dir.
	KeepEmpty bool
}

// Write puts t on disk under root, which must exist.
func (t *Tree) Write(root string, o WriteOptions) error {
	dirs := map[string]bool{}
	addParents := func(p string) {
		for d := path.Dir(p); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for _, f := range t.files {
		addParents(f.path)
	}
	for _, l := range t.links {
		addParents(l.path)
	}
	for _, d := range t.dirs {
		addParents(d + "/x")
	}
	sorted := make([]string, 0, len(dirs))
	for d := range dirs {
		sorted = append(sorted, d)
	}
	slices.Sort(sorted) // parents sort before their children
	for _, d := range sorted {
		if err := os.Mkdir(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	files := t.files
	if o.KeepEmpty {
		files = slices.Clip(files)
		for _, d := range t.dirs {
			files = append(files, file{d + "/" + KeepFile, nil})
		}
	}
	if o.ModesFile {
		files = append(slices.Clip(files), file{"modes", t.Modes()})
	}
	if err := t.writeFiles(root, files, o.ApplyModes); err != nil {
		return err
	}
	for _, l := range t.links {
		if err := os.Symlink(l.target, filepath.Join(root, filepath.FromSlash(l.path))); err != nil {
			return fmt.Errorf("symlink %s: %w", l.path, err)
		}
	}
	return nil
}

// writeFiles writes files in parallel: a synthetic tree has tens of
// thousands of small files, and one goroutine spends most of its time in
// system calls.
func (t *Tree) writeFiles(root string, files []file, apply bool) error {
	workers := min(runtime.GOMAXPROCS(0), 16)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	chunk := (len(files) + workers - 1) / workers
	for lo := 0; lo < len(files); lo += chunk {
		part := files[lo:min(lo+chunk, len(files))]
		wg.Go(func() {
			for _, f := range part {
				mode := fs.FileMode(0o644)
				if apply {
					mode = DefaultMode(f.path)
					if m, ok := t.modes[f.path]; ok {
						mode = m
					}
				}
				if err := writeFile(filepath.Join(root, filepath.FromSlash(f.path)), f.data, mode); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

func writeFile(name string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
