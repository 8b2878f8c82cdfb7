package bench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
)

// TestLastMatchStreams: --regexp gives the same last match however the
// output is cut into writes, matches line by line, and says what it
// found nothing in.
func TestLastMatchStreams(t *testing.T) {
	long := strings.Repeat("x", maxLine+10)
	tests := []struct {
		name, re, give string
		want           float64
		unit           string
		wantErr        string
	}{
		{name: "last of several lines", re: `result (\d+)`, give: "result 1\nresult 2\nnoise\n", want: 2},
		{name: "last line without newline", re: `result (\d+)`, give: "result 1\nresult 3", want: 3},
		{name: "last on a line", re: `\d+\.\d+`, give: "x 1.5 y 2.25\nz\n", want: 2.25},
		{name: "value and unit groups", re: `(?P<value>[\d.]+) (?P<unit>\w+)`, give: "9 Mpps\n12.5 Mpps tail\n", want: 12.5, unit: "Mpps"},
		{name: "^ is a line's start", re: `^rate (\d+)`, give: "rate 1\nrate 2\n", want: 2},
		{name: "$ is a line's end", re: `(\d+)$`, give: "7\n8 x\n", want: 7},
		{name: "a match after a line longer than maxLine", re: `r (\d+)`, give: "r 1\n" + long + "\nr 5\n", want: 5},
		{name: "nothing", re: `r (\d+)`, give: "done\n", wantErr: `no match of --regexp "r (\\d+)"; the output was "done"`},
		{name: "nothing in a long output", re: `r (\d+)`, give: "  begin" + long,
			wantErr: `the output (` + strconv.Itoa(len(long)+7) + ` bytes) begins "begin` + strings.Repeat("x", excerptLen-5) + `"`},
		{name: "not a number", re: `rate (\S+)`, give: "rate fast\n", wantErr: `matched "fast", which is not a number`},
	}
	for _, tt := range tests {
		p, err := NewParser([]string{"./bench"}, tt.re, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{1, 3, 4096, len(tt.give) + 1} {
			m := p.lastMatch()
			for b := []byte(tt.give); len(b) > 0; b = b[min(size, len(b)):] {
				if n, err := m.Write(b[:min(size, len(b))]); err != nil || n != min(size, len(b)) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			got, err := m.value()
			switch {
			case tt.wantErr != "":
				if !errors.Is(err, ErrParse) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("%s, writes of %d: %v; want ErrParse saying %s", tt.name, size, err, tt.wantErr)
				}
			case err != nil || got.Value != tt.want || got.Unit != tt.unit:
				t.Errorf("%s, writes of %d: %+v, %v; want %v %q", tt.name, size, got, err, tt.want, tt.unit)
			}
		}
	}
}

// peakRSS resets this process's peak resident size (clear_refs 5) and
// returns a function that says how far it rose above the size at the
// reset.
func peakRSS(t *testing.T) func() int64 {
	t.Helper()
	runtime.GC()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
	kb := func(name string) int64 {
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				return n << 10
			}
		}
		t.Fatalf("no %s in /proc/self/status", name)
		return 0
	}
	base := kb("VmRSS")
	return func() int64 { return kb("VmHWM") - base }
}

// TestHostileRegexpOutput: a benchmark that writes 32 MiB of output
// with a match on every line is read with bounded memory, where keeping
// the output and every match took about 60 times its size (OOM-killed
// at 32 MiB, the IRQs left pinned), and its last match is the result.
func TestHostileRegexpOutput(t *testing.T) {
	if raceBuild {
		t.Skip("race build: the memory bound is the shipped binary's; make test runs this without -race")
	}
	root := hosttest.Copy(t, "seed")
	cells, _ := ParseCells("local")
	command := []string{"./spew"}
	p, err := NewParser(command, `result (\d+)`, "")
	if err != nil {
		t.Fatal(err)
	}
	const size = 32 << 20
	exec := func(ctx context.Context, pl sched.Placement, args []string, s sched.Streams) (int, error) {
		var chunk bytes.Buffer
		for i := 0; chunk.Len() < 64<<10; i++ {
			chunk.WriteString("interval " + strconv.Itoa(i) + " result 1\n")
		}
		for n := 0; n < size; n += chunk.Len() {
			s.Stdout.Write(chunk.Bytes())
		}
		s.Stdout.Write([]byte("done: result 42\n"))
		return 0, nil
	}
	// A tight collector, so the peak measures what is kept, not garbage
	// the test binary's pacing lets pile up meanwhile.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	rose := peakRSS(t)
	res, err := Run(context.Background(), Request{Root: hosttest.Open(t, root), NIC: "eth0", Cells: cells, Repeat: 1, Command: command,
		Parser: p, Writer: tune.FileWriter{}, Exec: exec})
	grew := rose()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r := res.Cells[0].Runs[0]; r.Result == nil || r.Result.Value != 42 {
		t.Errorf("run %+v: want the last match, 42", r)
	}
	if grew > 16<<20 {
		t.Errorf("reading 32 MiB of output raised the peak RSS by %d MiB, want it bounded well under the output's size", grew>>20)
	}
	t.Logf("peak RSS rose by %.1f MiB", float64(grew)/(1<<20))
}
