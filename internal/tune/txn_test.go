package tune

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// logStep is a step that logs what the transaction asks of it.
type logStep struct {
	name     string
	log      *[]string
	doErr    error // what do returns
	skip     bool  // doErr is a skip, not a failure
	undoErr  error
	isStrict bool
	cancel   func() // called by do, after the change: a stop signal
}

func (s *logStep) do() error {
	*s.log = append(*s.log, "do "+s.name)
	if s.cancel != nil {
		s.cancel()
	}
	return s.doErr
}

func (s *logStep) done(err error) bool {
	switch {
	case err == nil:
		*s.log = append(*s.log, "changed "+s.name)
	case s.skip:
		*s.log = append(*s.log, "skipped "+s.name)
		return false
	default:
		*s.log = append(*s.log, "failed "+s.name)
		return true
	}
	return false
}

func (s *logStep) undo() error {
	*s.log = append(*s.log, "undo "+s.name)
	return s.undoErr
}

func (s *logStep) undone(err error) {
	if err != nil {
		*s.log = append(*s.log, "undo failed "+s.name)
	}
}

func (s *logStep) strict() bool { return s.isStrict }

func TestTxn(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		give      []logStep
		keepGoing bool
		final     bool
		cancelAt  int // cancel ctx in this step's do (1-based; 0: never)
		want      Stop
		wantLog   string
		reached   int
		wantMade  string // what afterUndo is given
	}{
		{name: "all made", give: []logStep{{name: "a"}, {name: "b"}},
			want: StopCompleted, reached: 2,
			wantLog: "do a, changed a, do b, changed b"},
		{name: "a failure undoes the made newest first", give: []logStep{{name: "a"}, {name: "b"}, {name: "c", doErr: boom}, {name: "d"}},
			want: StopFailed, reached: 2, wantMade: "[0 1]",
			wantLog: "do a, changed a, do b, changed b, do c, failed c, undo b, undo a"},
		{name: "a skip is neither made nor a failure", give: []logStep{{name: "a"}, {name: "m", doErr: boom, skip: true}, {name: "c", doErr: boom}},
			want: StopFailed, reached: 2, wantMade: "[0]",
			wantLog: "do a, changed a, do m, skipped m, do c, failed c, undo a"},
		{name: "keep going past a failure", keepGoing: true, give: []logStep{{name: "a"}, {name: "b", doErr: boom}, {name: "c"}},
			want: StopCompleted, reached: 3,
			wantLog: "do a, changed a, do b, failed b, do c, changed c"},
		{name: "a strict step stops even when keeping going", keepGoing: true, give: []logStep{{name: "a"}, {name: "s", doErr: boom, isStrict: true}, {name: "c"}},
			want: StopFailed, reached: 1, wantMade: "[0]",
			wantLog: "do a, changed a, do s, failed s, undo a"},
		{name: "a stop signal ends it between steps and undoes all", cancelAt: 2, give: []logStep{{name: "a"}, {name: "b"}, {name: "c"}},
			want: StopInterrupted, reached: 2, wantMade: "[0 1]",
			wantLog: "do a, changed a, do b, changed b, undo b, undo a"},
		{name: "a failed undo goes on to the older ones", give: []logStep{{name: "a"}, {name: "b", undoErr: boom}, {name: "c", doErr: boom}},
			want: StopFailed, reached: 2, wantMade: "[0 1]",
			wantLog: "do a, changed a, do b, changed b, do c, failed c, undo b, undo failed b, undo a"},
		{name: "the first step failing undoes nothing", give: []logStep{{name: "a", doErr: boom}, {name: "b"}},
			want: StopFailed, reached: 0, wantMade: "[]",
			wantLog: "do a, failed a"},
		{name: "no steps", want: StopCompleted},
		{name: "a final txn tries every step and undoes none", final: true, cancelAt: 1,
			give: []logStep{{name: "a"}, {name: "s", doErr: boom, isStrict: true}, {name: "c"}, {name: "d", doErr: boom}},
			want: StopFailed, reached: 4,
			wantLog: "do a, changed a, do s, failed s, do c, changed c, do d, failed d"},
		{name: "a final txn that fails nothing completes", final: true,
			give: []logStep{{name: "a"}, {name: "m", doErr: boom, skip: true}},
			want: StopCompleted, reached: 2,
			wantLog: "do a, changed a, do m, skipped m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var log []string
			tx := txn{keepGoing: tt.keepGoing, final: tt.final}
			for i := range tt.give {
				s := tt.give[i]
				s.log = &log
				if i+1 == tt.cancelAt {
					s.cancel = cancel
				}
				tx.steps = append(tx.steps, &s)
			}
			made := ""
			tx.afterUndo = func(m []int) { made = fmt.Sprint(m) }
			got := tx.run(ctx)
			if got != tt.want {
				t.Errorf("run = %v, want %v", got, tt.want)
			}
			if diff := cmp.Diff(tt.wantLog, strings.Join(log, ", ")); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
			if tx.reached != tt.reached {
				t.Errorf("reached = %d, want %d", tx.reached, tt.reached)
			}
			if made != tt.wantMade {
				t.Errorf("afterUndo got %q, want %q", made, tt.wantMade)
			}
		})
	}
}

// TestTxnFault: the fault hook fails a transaction before the step it
// names, and every step made before it is undone, newest first.
func TestTxnFault(t *testing.T) {
	for at := range 3 {
		var log []string
		steps := []step{&logStep{name: "a", log: &log}, &logStep{name: "b", log: &log}, &logStep{name: "c", log: &log}}
		txnFault = func(i int) error {
			if i == at {
				return errors.New("fault")
			}
			return nil
		}
		tx := txn{steps: steps}
		stop := tx.run(context.Background())
		txnFault = nil
		if stop != StopFailed || tx.reached != at {
			t.Errorf("fault at %d: stop %v, reached %d", at, stop, tx.reached)
		}
		var want []string
		names := []string{"a", "b", "c"}
		for i := range at {
			want = append(want, "do "+names[i], "changed "+names[i])
		}
		for i := at - 1; i >= 0; i-- {
			want = append(want, "undo "+names[i])
		}
		if strings.Join(log, ",") != strings.Join(want, ",") {
			t.Errorf("fault at %d: %v, want %v", at, log, want)
		}
	}
}
