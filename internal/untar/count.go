package untar

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/irqnuma/irqnuma/internal/rootpath"
)

// Count reads the headers of tr to its end without writing anything and
// refuses, as Unpack would, an archive over opt's bounds: more entries
// than MaxEntries, counting every folder an entry's name implies (each is
// an inode Unpack makes) and empty files, a file or a total over its
// size bound, or names over MaxNameBytes. Reading a header costs a few
// microseconds and making an inode tens, so a caller that can read its
// archive twice counts it first, and an archive of a million empty
// entries is refused before the first inode is made. Count does not check
// names or links; Unpack does. It returns the entries counted.
func Count(ctx context.Context, tr *tar.Reader, opt Options) (int, error) {
	c := counter{opt: opt.withDefaults(), dirs: map[string]struct{}{}}
	for n := 0; ; n++ {
		if n%256 == 0 && ctx.Err() != nil {
			return c.entries, context.Cause(ctx)
		}
		h, err := tr.Next()
		if err == io.EOF {
			return c.entries, nil
		}
		if err != nil {
			return c.entries, fmt.Errorf("%w: %w", ErrFormat, err)
		}
		if err := c.add(h); err != nil {
			return c.entries, err
		}
	}
}

// counter is what Count has seen.
type counter struct {
	opt          Options
	dirs         map[string]struct{} // folders listed or implied
	entries      int
	total, names int64
}

// add counts the entry h and the folders its name implies, and checks
// the bounds.
func (c *counter) add(h *tar.Header) error {
	if h.Typeflag == tar.TypeXGlobalHeader || h.Typeflag == tar.TypeDir && (h.Name == "./" || h.Name == ".") {
		return nil
	}
	name := strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/")
	if c.names += int64(len(name) + len(h.Linkname)); c.names > c.opt.MaxNameBytes {
		return tooLarge(h, "names and link targets take more than %d bytes", c.opt.MaxNameBytes)
	}
	if h.Typeflag == tar.TypeDir {
		if _, ok := c.dirs[name]; ok {
			return nil // listed again, or implied before: no new inode
		}
		c.dirs[name] = struct{}{}
	}
	c.entries++
	for p := rootpath.Parent(name); p != "" && c.entries <= c.opt.MaxEntries; p = rootpath.Parent(p) {
		if _, ok := c.dirs[p]; ok {
			break
		}
		c.dirs[p] = struct{}{}
		c.entries++
	}
	if c.entries > c.opt.MaxEntries {
		return tooLarge(h, "more than %d entries with the folders they imply", c.opt.MaxEntries)
	}
	if h.Typeflag != tar.TypeReg {
		return nil
	}
	if h.Size > c.opt.MaxFileSize {
		return tooLarge(h, "%d bytes, more than %d", h.Size, c.opt.MaxFileSize)
	}
	if c.total += h.Size; c.total > c.opt.MaxTotalSize {
		return tooLarge(h, "archive holds more than %d bytes", c.opt.MaxTotalSize)
	}
	return nil
}
