// Package rootpath follows symbolic links inside a host tree without ever
// leaving it: /sys/class/net/eth0 is a link into /sys/devices, and a
// captured or copied tree must resolve the same way while a link that
// climbs out of it (or points at an absolute path on the machine reading
// it) is refused. It is the one resolver the readers, the write path, the
// snapshot writer and the snapshot unpacker share.
package rootpath

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// MaxLinks bounds the links followed while resolving one path, as the
// kernel's own limit (40) does.
const MaxLinks = 40

// Errors of Resolve; callers add the path.
var (
	ErrLeavesRoot   = errors.New("leaves the root")
	ErrTooManyLinks = errors.New("goes through too many links")
	ErrTooCostly    = errors.New("takes too many steps to resolve")
)

// MaxSteps bounds the path components one Resolve walks, links followed
// included: MaxLinks targets of at most 4096 bytes each.
const MaxSteps = (MaxLinks + 1) * 2048

// Links says which paths of a tree are symbolic links.
type Links interface {
	// Readlink returns the target of the link at rel (slash-separated,
	// relative to the root) and true, or false when rel is no link.
	Readlink(rel string) (target string, isLink bool, err error)
}

// Resolve follows rel, taken from folder dir ("" is the root), through
// every link on the way and returns the real path relative to the root.
// A relative target is taken from its link's folder, an absolute one from
// the root. Leaving the root is ErrLeavesRoot; more than MaxLinks links is
// ErrTooManyLinks; errors of l are returned as they are.
func Resolve(l Links, dir, rel string) (string, error) {
	budget := MaxSteps
	return ResolveBudget(l, dir, rel, &budget)
}

// ResolveBudget is Resolve that spends one unit of *budget per path
// component walked and fails with ErrTooCostly when it runs out, so that
// resolving many links costs at most what the caller allows in all.
func ResolveBudget(l Links, dir, rel string, budget *int) (string, error) {
	cur := strings.Trim(path.Clean("/"+dir), "/")
	if path.IsAbs(rel) {
		cur = ""
	}
	parts := strings.Split(rel, "/")
	for hops := 0; len(parts) > 0; {
		p := parts[0]
		parts = parts[1:]
		if *budget--; *budget < 0 {
			return "", ErrTooCostly
		}
		switch p {
		case "", ".":
			continue
		case "..":
			if cur == "" {
				return "", ErrLeavesRoot
			}
			cur = Parent(cur)
			continue
		}
		next := path.Join(cur, p)
		target, isLink, err := l.Readlink(next)
		if err != nil {
			return "", err
		}
		if !isLink {
			cur = next
			continue
		}
		if hops++; hops > MaxLinks {
			return "", ErrTooManyLinks
		}
		if path.IsAbs(target) {
			cur = ""
		}
		parts = append(strings.Split(target, "/"), parts...)
	}
	return cur, nil
}

// Escapes reports whether a relative path, once cleaned, leaves its
// root: "..", "../x", or an absolute path.
func Escapes(rel string) bool {
	rel = path.Clean(rel)
	return rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel)
}

// Parent returns the folder of a root-relative path, "" for the root.
func Parent(rel string) string {
	d := path.Dir(rel)
	if d == "." || d == "/" {
		return ""
	}
	return d
}

// Dir is a tree on disk, rooted at the folder it names.
type Dir string

// Readlink reads the link at rel under the folder, if it is one.
func (d Dir) Readlink(rel string) (string, bool, error) {
	full := filepath.Join(string(d), filepath.FromSlash(rel))
	fi, err := os.Lstat(full)
	if err != nil {
		return "", false, err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return "", false, nil
	}
	target, err := os.Readlink(full)
	return target, err == nil, err
}
