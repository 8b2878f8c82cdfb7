package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/irqnuma/irqnuma/internal/rootpath"
)

// errLeavesRoot is wrapped by resolution errors for a path or link that
// points outside the root.
var errLeavesRoot = rootpath.ErrLeavesRoot

// abs returns the host path of rel (slash-separated, relative to root).
func (c *capturer) abs(rel string) string {
	return filepath.Join(c.root, filepath.FromSlash(rel))
}

// resolve follows the symlinks of a logical path inside the tree and
// returns the real path, relative to the root. Every link met on the way
// is recorded, so the archive resolves the same way. A link that would
// leave the root is an error wrapping errLeavesRoot.
func (c *capturer) resolve(rel string) (string, error) {
	real, err := rootpath.Resolve(c, "", rel)
	if errors.Is(err, rootpath.ErrLeavesRoot) || errors.Is(err, rootpath.ErrTooManyLinks) {
		return "", fmt.Errorf("%s: %w", rel, err)
	}
	return real, err
}

// Readlink makes the capturer a rootpath.Links: a link is recorded in the
// archive when resolution meets it.
func (c *capturer) Readlink(rel string) (string, bool, error) {
	fi, err := os.Lstat(c.abs(rel))
	if err != nil {
		return "", false, err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return "", false, nil
	}
	target, err := c.recordLink(rel)
	return target, err == nil, err
}

// parent returns the folder of a root-relative path, "" for the root.
func parent(rel string) string { return rootpath.Parent(rel) }

// recordLink adds the symlink at real path rel to the archive once, and
// returns its target relative to the link's folder. An absolute target is
// taken from the root and rewritten relative, so the archive holds no
// absolute link; one that leaves the root is refused.
func (c *capturer) recordLink(rel string) (string, error) {
	if t, ok := c.links[rel]; ok {
		return t, nil
	}
	target, err := os.Readlink(c.abs(rel))
	if err != nil {
		return "", err
	}
	dir := parent(rel)
	if path.IsAbs(target) {
		r, err := filepath.Rel("/"+dir, path.Clean(target))
		if err != nil {
			return "", fmt.Errorf("link %s -> %s: %w", rel, target, err)
		}
		target = filepath.ToSlash(r)
	}
	if rootpath.Escapes(path.Join(dir, target)) {
		return "", fmt.Errorf("link %s -> %s: %w", rel, target, errLeavesRoot)
	}
	if err := c.addDir(dir); err != nil {
		return "", err
	}
	if err := c.w.link(rel, target); err != nil {
		return "", err
	}
	c.links[rel] = target
	return target, nil
}

// expand returns the logical paths that match pattern: slash-separated,
// each component a path.Match pattern. Folders on the way may be links.
// Matches are in directory order, which is sorted.
func (c *capturer) expand(pattern string) []string {
	cur := []string{""}
	for p := range strings.SplitSeq(pattern, "/") {
		var next []string
		if !strings.ContainsAny(p, `*?[\`) {
			for _, d := range cur {
				next = append(next, path.Join(d, p))
			}
			cur = next
			continue
		}
		for _, d := range cur {
			real, err := c.resolve(d)
			if err != nil {
				c.skip(d, err)
				continue
			}
			ents, err := os.ReadDir(c.abs(real))
			if err != nil {
				c.skip(d, err)
				continue
			}
			for _, e := range ents {
				if ok, _ := path.Match(p, e.Name()); ok {
					next = append(next, path.Join(d, e.Name()))
				}
			}
		}
		cur = next
	}
	return cur
}

// skip notes a path that exists but could not be captured. Absent paths
// are not noted: absence is what the archive says of them too.
func (c *capturer) skip(rel string, err error) {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return
	}
	c.note(fmt.Sprintf("/%s not captured: %v", rel, stripRoot(err, c.root)))
}

// note adds a line to the notes once.
func (c *capturer) note(s string) {
	if !c.noted[s] {
		c.noted[s] = true
		c.notes = append(c.notes, s)
	}
}

// stripRoot removes the root from an error's text, so notes name paths
// as they are on the host.
func stripRoot(err error, root string) string {
	s := err.Error()
	if root == "/" || root == "" {
		return s
	}
	return strings.ReplaceAll(s, filepath.Clean(root), "")
}
