package steer

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// The recorded form: a root's irqnuma/steer/ folder holds, per
// interface, a folder named after it with one file per request the
// reading made (see the request keys in request.go): the reply's
// messages framed as ethnl.EncodeMsgs writes them, or the ioctl's structure
// as the kernel filled it. A request the kernel refused has instead
// <key>.errno holding the errno's name ("EOPNOTSUPP\n"). What belongs to
// no interface (the families, the string sets) is in irqnuma/steer/:kernel/.
// A snapshot of a live host holds this folder (snapshot calls Record),
// and reading the snapshot replays it: the same decoders run on the same
// bytes.

func init() {
	registerTree(treeSource{rank: 10, open: openRecorded})
}

// openRecorded is the recorded source when the root has the folder.
func openRecorded(fsys kfile.FS) (source, bool) {
	fi, err := fsys.Stat(fsys.Path(recordDir))
	if err != nil || !fi.IsDir() {
		return nil, false
	}
	return newNLSource(&replayer{fsys: fsys}, SourceRecorded), true
}

// recorder asks the live kernel and hands each answer to put.
type recorder struct {
	live ethnl.Asker
	put  func(rel string, data []byte) error
	err  error // the first error put returned
}

func (r *recorder) save(dir, key string, data []byte, err error) {
	if r.err != nil {
		return
	}
	rel := recordDir + "/" + dir + "/" + key
	var errno unix.Errno
	switch {
	case err == nil:
		r.err = r.put(rel, data)
	case errors.As(err, &errno):
		r.err = r.put(rel+errnoSuffix, kfile.FormatErrno(errno))
	}
	// Any other error (no socket) is not the kernel's answer: nothing
	// to record, and reading the snapshot says it was not captured.
}

func (r *recorder) Genl(req ethnl.Request) ([]ethnl.Msg, error) {
	msgs, err := r.live.Genl(req)
	r.save(req.Dir, req.Key, ethnl.EncodeMsgs(msgs), err)
	return msgs, err
}

func (r *recorder) Ioctl(req ethnl.IoctlRequest) ([]byte, error) {
	b, err := r.live.Ioctl(req)
	r.save(req.IfName, req.Key, b, err)
	return b, err
}

func (r *recorder) Where(dir, key string) string { return r.live.Where(dir, key) }

func (r *recorder) Close() error { return r.live.Close() }

// replayer answers from a root's recorded files, read through the root
// (so kfile.Trace sees every one).
type replayer struct{ fsys kfile.FS }

// answer returns the recorded bytes of dir/key, or the recorded errno.
func (r *replayer) answer(dir, key string) ([]byte, error) {
	p := r.fsys.Path(recordDir, dir, key)
	b, err := r.fsys.ReadLimit(p, maxAnswer)
	if err == nil {
		return b, nil
	}
	if !kfile.IsNotExist(err) {
		return nil, &unreadableError{what: p, err: err}
	}
	ep := p + errnoSuffix
	eb, err := r.fsys.ReadLimit(ep, 64)
	if kfile.IsNotExist(err) {
		return nil, &notCapturedError{file: p}
	}
	if err != nil {
		return nil, &unreadableError{what: ep, err: err}
	}
	errno, err := kfile.ParseErrno(eb)
	if err != nil {
		return nil, &unreadableError{what: ep, err: err}
	}
	return nil, errno
}

func (r *replayer) Genl(req ethnl.Request) ([]ethnl.Msg, error) {
	b, err := r.answer(req.Dir, req.Key)
	if err != nil {
		return nil, err
	}
	msgs, err := ethnl.DecodeMsgs(b)
	if err != nil {
		return nil, &unreadableError{what: r.fsys.Path(recordDir, req.Dir, req.Key), err: err}
	}
	return msgs, nil
}

func (r *replayer) Ioctl(req ethnl.IoctlRequest) ([]byte, error) {
	b, err := r.answer(req.IfName, req.Key)
	if err != nil {
		return nil, err
	}
	if len(b) != len(req.Buf) {
		return nil, unreadable(r.fsys.Path(recordDir, req.IfName, req.Key), "%d bytes, the request's structure is %d", len(b), len(req.Buf))
	}
	return b, nil
}

func (r *replayer) Where(dir, key string) string { return r.fsys.Path(recordDir, dir, key) }

func (r *replayer) Close() error { return nil }
