package kfile

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Kept is a file of a root kept open and read again from its start at
// each Read, as mpstat and top read /proc/stat: a pseudo-file of /proc or
// /sys (a seq_file) makes its text anew for a read at offset 0, so a
// watcher pays one pread per buffer and one for the end, not an open
// and a close (and the path walk in them) every interval. A file that
// cannot be read at an offset (ESPIPE, EINVAL: a pipe, a character
// device's stream) is opened again for every Read instead, as a plain
// read would be.
//
// In a tree (not the live root) a file that was removed or replaced
// since it was opened (its link count is 0) is opened again, so a test
// that rewrites a tree between samples is read as the kernel would
// answer; rewritten in place (os.WriteFile) it is read again as it is.
//
// The open is the one Trace reports as OpRead and a Budget charges as
// an open; each read again at offset 0 is OpReread, and its bytes are
// charged. A read that fails closes the file, so the next Read opens it
// again (a thread's stat file answers ESRCH once the thread is gone,
// and the open then says the file is absent).
//
// A Kept is not safe for concurrent use. Close releases it.
type Kept struct {
	fs    FS
	path  string
	limit int64
	fd    int  // -1: not open
	plain bool // the file cannot be read at an offset: opened for every Read
}

// Keep returns the file p, to be read with Read, at most limit bytes a
// read (MaxSize when limit is 0 or past it). Nothing is opened before the
// first Read.
func (f FS) Keep(p string, limit int64) *Kept {
	if limit <= 0 || limit > MaxSize {
		limit = MaxSize
	}
	return &Kept{fs: f, path: p, limit: limit, fd: -1}
}

// Path returns the file's path, as given to Keep.
func (k *Kept) Path() string { return k.path }

// Read reads the whole file into buf (reused when large enough) from
// its start, opening it first if it is not open, and returns what it
// holds now. Its errors are those of the FS's other reads: a file
// absent is one IsNotExist says so of.
func (k *Kept) Read(buf []byte) (b []byte, err error) {
	if k.fd >= 0 && !k.plain && k.stillThere() {
		b, err = k.pread(buf)
		switch {
		case err == nil:
			k.fs.trace(OpReread, k.path, nil)
			if err := k.charge(b); err != nil {
				return nil, err
			}
			return b, nil
		case errors.Is(err, unix.ESPIPE) || errors.Is(err, unix.EINVAL):
			k.plain = true // read as a stream, opened for every Read
		default:
			k.fs.trace(OpReread, k.path, err)
			k.close()
			return nil, err
		}
	}
	k.close()
	defer func() { k.fs.trace(OpRead, k.path, err) }()
	fd, err := k.fs.open(k.path, unix.O_RDONLY)
	if err != nil {
		return nil, pathErr("open", k.path, err)
	}
	k.fd = fd
	if !k.fs.live {
		// A tree's device, FIFO or socket is refused, as by every read.
		if _, _, err := fdInfo(fd, k.path, k.limit, false, false); err != nil {
			k.close()
			return nil, err
		}
	}
	if k.plain {
		b, _, err = readFD(fd, k.path, buf, k.limit, false, true)
		k.close()
	} else if b, err = k.pread(buf); errors.Is(err, unix.ESPIPE) || errors.Is(err, unix.EINVAL) {
		// Not readable at an offset: read as a stream, and so from now
		// on, opened each time.
		k.plain = true
		b, _, err = readFD(fd, k.path, buf, k.limit, false, true)
		k.close()
	}
	if err != nil {
		k.close()
		return nil, err
	}
	if err := k.charge(b); err != nil {
		return nil, err
	}
	return b, nil
}

// stillThere reports whether the open file is still the tree's file: on
// the live root always (a pseudo-file is never replaced; a thread's that
// is gone says so when read), in a tree while it has a link. An fstat
// that fails says no, and the file is opened again.
func (k *Kept) stillThere() bool {
	if k.fs.live {
		return true
	}
	var st unix.Stat_t
	return unix.Fstat(k.fd, &st) == nil && st.Nlink > 0
}

// pread reads the open file from offset 0 to its end into buf, as
// readFD does with read: bounded by the limit, grown as needed.
func (k *Kept) pread(buf []byte) ([]byte, error) {
	if cap(buf) == 0 {
		buf = make([]byte, 0, 512)
	}
	buf = buf[:0]
	var probe [1]byte
	for {
		buf = grown(buf, k.limit)
		dst, probing := buf[len(buf):cap(buf)], len(buf) == cap(buf)
		if probing {
			dst = probe[:]
		}
		n, err := unix.Pread(k.fd, dst, int64(len(buf)))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, readError(k.path, err)
		}
		if n == 0 {
			return buf, nil
		}
		if !probing {
			buf = buf[:len(buf)+n]
		}
		if probing || int64(len(buf)) > k.limit {
			return nil, fmt.Errorf("read %s: %w (over %d bytes)", k.path, ErrTooLarge, k.limit)
		}
	}
}

// charge charges what a read returned to the FS's budget, if any.
func (k *Kept) charge(b []byte) error {
	if k.fs.budget == nil {
		return nil
	}
	if err := k.fs.budget.charge("read", k.path, int64(len(b)), 0); err != nil {
		k.close()
		return fmt.Errorf("read %s: %w", k.path, err)
	}
	return nil
}

func (k *Kept) close() {
	if k.fd >= 0 {
		unix.Close(k.fd)
		k.fd = -1
	}
}

// Close closes the file; a Read after it opens it again.
func (k *Kept) Close() error {
	if k.fd < 0 {
		return nil
	}
	err := unix.Close(k.fd)
	k.fd = -1
	return err
}
