package watch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/testsupport/watchtest"
)

// frames records what Run sends; it fails the frame numbered failAt and
// closes quit after the frame numbered quitAt.
type frames struct {
	waited  time.Duration
	seqs    []int
	failAt  int
	quitAt  int
	quit    chan struct{}
	onFrame func()
	clk     *watchtest.Clock // advanced a second per call, as a ticker would
}

func (f *frames) Waiting(d time.Duration) error {
	f.waited = d
	f.clk.Advance(time.Second)
	return nil
}
func (f *frames) Quit() <-chan struct{} { return f.quit }
func (f *frames) Frame(iv *Interval) error {
	f.seqs = append(f.seqs, iv.Seq)
	f.clk.Advance(time.Second)
	if iv.Seq == f.failAt {
		return errors.New("frame failed")
	}
	if iv.Seq == f.quitAt {
		close(f.quit)
	}
	if f.onFrame != nil {
		f.onFrame()
	}
	return nil
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	t.Run("count", func(t *testing.T) {
		_, s, clk := setup(t, "seed")
		f := &frames{clk: clk, quit: make(chan struct{})}
		if err := s.Run(ctx, time.Millisecond, 3, f); err != nil {
			t.Fatal(err)
		}
		if f.waited != time.Millisecond || len(f.seqs) != 3 || f.seqs[2] != 3 {
			t.Errorf("waited %v, frames %v; want 1ms and 1 2 3", f.waited, f.seqs)
		}
	})
	t.Run("quit", func(t *testing.T) {
		_, s, clk := setup(t, "seed")
		f := &frames{clk: clk, quit: make(chan struct{}), quitAt: 2}
		if err := s.Run(ctx, time.Millisecond, 0, f); err != nil {
			t.Fatal(err)
		}
		if len(f.seqs) != 2 {
			t.Errorf("frames %v after quit at 2", f.seqs)
		}
	})
	t.Run("context", func(t *testing.T) {
		_, s, clk := setup(t, "seed")
		cctx, cancel := context.WithCancel(ctx)
		f := &frames{clk: clk, quit: make(chan struct{}), onFrame: cancel}
		if err := s.Run(cctx, time.Millisecond, 0, f); err != nil {
			t.Fatal(err)
		}
		if len(f.seqs) != 1 {
			t.Errorf("frames %v after a cancel in the first", f.seqs)
		}
	})
	t.Run("frame error", func(t *testing.T) {
		_, s, clk := setup(t, "seed")
		f := &frames{clk: clk, quit: make(chan struct{}), failAt: 2}
		if err := s.Run(ctx, time.Millisecond, 0, f); err == nil || err.Error() != "frame failed" {
			t.Errorf("err %v, want the frame's error", err)
		}
	})
	t.Run("sample error", func(t *testing.T) {
		tree, s, clk := setup(t, "seed")
		f := &frames{clk: clk, quit: make(chan struct{}), onFrame: func() { tree.Write("proc/interrupts", []byte("garbage\n")) }}
		if err := s.Run(ctx, time.Millisecond, 0, f); err == nil {
			t.Errorf("no error after /proc/interrupts became garbage; frames %v", f.seqs)
		}
	})
}
