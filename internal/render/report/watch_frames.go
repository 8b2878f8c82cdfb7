package report

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/run/watch"
	"github.com/irqnuma/irqnuma/internal/screen"
)

// WatchBlocks writes one WriteWatch block per interval, a blank line
// between blocks: watch's output to a file or pipe.
type WatchBlocks struct {
	W   io.Writer
	n   int
	buf bytes.Buffer // the blank line before a block and the block: one write
}

// Waiting implements watch.Frames.
func (p *WatchBlocks) Waiting(time.Duration) error { return nil }

// Quit implements watch.Frames: a pipe is never asked to quit.
func (p *WatchBlocks) Quit() <-chan struct{} { return nil }

// Frame implements watch.Frames.
func (p *WatchBlocks) Frame(iv *watch.Interval) error {
	p.buf.Reset()
	if p.n > 0 {
		p.buf.WriteByte('\n')
	}
	p.n++
	if err := WriteWatch(&p.buf, iv, 0); err != nil {
		return err
	}
	_, err := p.W.Write(p.buf.Bytes())
	return err
}

// WatchJSON writes one JSON object per interval (JSON lines).
type WatchJSON struct{ w io.Writer }

// NewWatchJSON returns a WatchJSON writing to w.
func NewWatchJSON(w io.Writer) *WatchJSON { return &WatchJSON{w: w} }

// Waiting implements watch.Frames.
func (j *WatchJSON) Waiting(time.Duration) error { return nil }

// Frame implements watch.Frames.
func (j *WatchJSON) Frame(iv *watch.Interval) error {
	return jsondoc.Write(j.w, jsondoc.SchemaWatch, iv, false)
}

// Quit implements watch.Frames.
func (j *WatchJSON) Quit() <-chan struct{} { return nil }

// WatchScreen redraws each interval in place on a terminal, fitted to
// its width.
type WatchScreen struct{ S *screen.Screen }

// Waiting implements watch.Frames: it says when the first interval comes.
func (s WatchScreen) Waiting(interval time.Duration) error {
	return s.S.Draw(fmt.Sprintf("irqnuma watch: first interval in %s; q quits\n", interval))
}

// Frame implements watch.Frames.
func (s WatchScreen) Frame(iv *watch.Interval) error {
	w, _ := s.S.Size()
	var b bytes.Buffer
	if err := WriteWatch(&b, iv, w); err != nil {
		return err
	}
	return s.S.Draw(b.String())
}

// Quit implements watch.Frames: closed on q or Ctrl-C.
func (s WatchScreen) Quit() <-chan struct{} { return s.S.Quit() }
