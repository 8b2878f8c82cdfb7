package watch

import (
	"context"
	"time"
)

// Frames is where Run sends the intervals: JSON lines, plain blocks, or
// a terminal screen redrawn in place.
type Frames interface {
	// Waiting is called once the first sample is taken, before the
	// first interval.
	Waiting(interval time.Duration) error
	// Frame takes one interval.
	Frame(iv *Interval) error
	// Quit is closed when the user asks to stop; nil when it never is.
	Quit() <-chan struct{}
}

// Run samples every interval and sends each interval to out until count
// intervals are sent (0: no limit), ctx is done, out's Quit is closed or
// a sample fails. A stop is no error.
func (s *Sampler) Run(ctx context.Context, interval time.Duration, count int, out Frames) error {
	prev, err := s.Sample()
	if err != nil {
		return err
	}
	if err := out.Waiting(interval); err != nil {
		return err
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for seq := 1; count == 0 || seq <= count; seq++ {
		select {
		case <-ctx.Done():
			return nil
		case <-out.Quit():
			return nil
		case <-tick.C:
		}
		// A tick ready at the same time as a stop does not win it.
		if stopped(ctx, out) {
			return nil
		}
		cur, err := s.Sample()
		if err != nil {
			return err
		}
		iv, err := diffSamples(s.h, s.nics, prev, cur)
		if err != nil {
			return err
		}
		iv.Seq = seq
		if err := out.Frame(iv); err != nil {
			return err
		}
		prev = cur
	}
	return nil
}

// stopped reports whether ctx is done or out's Quit is closed.
func stopped(ctx context.Context, out Frames) bool {
	select {
	case <-ctx.Done():
		return true
	case <-out.Quit():
		return true
	default:
		return false
	}
}
