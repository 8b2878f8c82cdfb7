package lab

import (
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// CPIO writes an uncompressed newc ("070701") archive, the format the
// kernel unpacks into its initramfs. Entries are written as added; the
// caller adds a folder before what it holds. Close writes the trailer.
type CPIO struct {
	w    io.Writer
	ino  uint32
	err  error
	seen map[string]bool
	rdev [2]uint32 // major, minor of the device being added
}

// NewCPIO returns a writer of a newc archive to w.
func NewCPIO(w io.Writer) *CPIO { return &CPIO{w: w, ino: 1, seen: map[string]bool{}} }

// Dir adds a folder.
func (c *CPIO) Dir(name string, perm fs.FileMode) error {
	return c.entry(name, 0o040000|uint32(perm.Perm()), nil)
}

// File adds a regular file with data.
func (c *CPIO) File(name string, perm fs.FileMode, data []byte) error {
	return c.entry(name, 0o100000|uint32(perm.Perm()), data)
}

// CharDev adds a character device node, such as dev/console (5, 1),
// which the kernel opens for init before anything is mounted.
func (c *CPIO) CharDev(name string, perm fs.FileMode, major, minor uint32) error {
	if c.err != nil {
		return c.err
	}
	c.rdev = [2]uint32{major, minor}
	err := c.entry(name, 0o020000|uint32(perm.Perm()), nil)
	c.rdev = [2]uint32{}
	return err
}

// Symlink adds a symbolic link name -> target.
func (c *CPIO) Symlink(name, target string) error {
	return c.entry(name, 0o120777, []byte(target))
}

// Close writes the trailer entry; the writer is then done.
func (c *CPIO) Close() error {
	if c.err != nil {
		return c.err
	}
	c.header("TRAILER!!!", 0, 0, 0)
	return c.err
}

func (c *CPIO) entry(name string, mode uint32, data []byte) error {
	if c.err != nil {
		return c.err
	}
	name = strings.TrimPrefix(name, "/")
	if name == "" || strings.Contains(name, "..") {
		return fmt.Errorf("cpio: bad name %q", name)
	}
	if c.seen[name] {
		return fmt.Errorf("cpio: %s added twice", name)
	}
	c.seen[name] = true
	c.ino++
	c.header(name, c.ino, mode, len(data))
	c.write(data)
	c.pad(len(data))
	return c.err
}

// header writes one newc header and the padded name: 6 bytes of magic,
// 13 fields of 8 hex digits, the name with its NUL, padded to 4 bytes.
func (c *CPIO) header(name string, ino, mode uint32, size int) {
	nlink := uint32(1)
	if mode&0o170000 == 0o040000 {
		nlink = 2
	}
	fields := []uint32{ino, mode, 0, 0, nlink, 0, uint32(size), 0, 0, c.rdev[0], c.rdev[1], uint32(len(name) + 1), 0}
	var sb strings.Builder
	sb.WriteString("070701")
	for _, f := range fields {
		fmt.Fprintf(&sb, "%08x", f)
	}
	sb.WriteString(name)
	sb.WriteByte(0)
	c.write([]byte(sb.String()))
	c.pad(110 + len(name) + 1)
}

func (c *CPIO) pad(n int) {
	if r := n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

func (c *CPIO) write(b []byte) {
	if c.err == nil && len(b) > 0 {
		_, c.err = c.w.Write(b)
	}
}
