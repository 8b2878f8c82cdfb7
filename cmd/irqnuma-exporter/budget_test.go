package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/usage"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		give string
		want int64 // -1: refused
	}{
		{"0", 0},
		{"4096", 4096},
		{"1B", 1},
		{"64KiB", 64 << 10},
		{"100MiB", 100 << 20},
		{"2GiB", 2 << 30},
		{"1TiB", 1 << 40},
		{"8388607TiB", 8388607 << 40},
		{"8388608TiB", -1}, // 2^63
		{"", -1},
		{"MiB", -1},
		{"1.5GiB", -1},
		{"-1", -1},
		{"+1", -1},
		{"1 MiB", -1},
		{"1MB", -1},
		{"1mib", -1},
		{"0x10", -1},
		{"1_000", -1},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.give)
		if tt.want < 0 {
			if err == nil {
				t.Errorf("parseSize(%q) = %d, want an error", tt.give, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tt.give, got, err, tt.want)
		}
		if back, err := parseSize(formatSize(got)); err != nil || back != got {
			t.Errorf("parseSize(formatSize(%d) = %q) = %d, %v", got, formatSize(got), back, err)
		}
	}
}

// TestParseBudget: the budget's and the memory limit's flags, their
// defaults, and the values refused as usage errors.
func TestParseBudget(t *testing.T) {
	tests := []struct {
		give    []string
		want    budget
		wantMem int64
		wantSet bool
		wantErr string
	}{
		{give: nil, want: budget{64 << 20, 200000}, wantMem: 100 << 20},
		{give: []string{"--scrape-max-bytes", "1MiB", "--scrape-max-files", "0"}, want: budget{1 << 20, 0}, wantMem: 100 << 20},
		{give: []string{"--memory-limit", "0"}, want: budget{64 << 20, 200000}, wantMem: 0, wantSet: true},
		{give: []string{"--memory-limit", "100MiB"}, want: budget{64 << 20, 200000}, wantMem: 100 << 20, wantSet: true},
		{give: []string{"--scrape-max-files", "-1"}, wantErr: "--scrape-max-files -1: want 0 (no bound) or more"},
		{give: []string{"--scrape-max-bytes", "64MB"}, wantErr: "--scrape-max-bytes: want a whole number of bytes"},
		{give: []string{"--scrape-max-bytes", "-1"}, wantErr: "--scrape-max-bytes: want a whole number of bytes"},
		{give: []string{"--memory-limit", "-1"}, wantErr: "--memory-limit: want a whole number of bytes"},
	}
	for _, tt := range tests {
		o, _, err := parse(tt.give, io.Discard)
		if tt.wantErr != "" {
			if !usage.Is(err) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parse(%q) error %v, want a usage error with %q", tt.give, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("parse(%q): %v", tt.give, err)
		}
		if o.budget != tt.want || o.memoryLimit != tt.wantMem || o.memoryLimitSet != tt.wantSet {
			t.Errorf("parse(%q) = budget %+v, memory %d (set %v); want %+v, %d (%v)", tt.give, o.budget, o.memoryLimit, o.memoryLimitSet, tt.want, tt.wantMem, tt.wantSet)
		}
	}
}

// TestHelpStatesDefaults: the help text names the defaults the flags
// have.
func TestHelpStatesDefaults(t *testing.T) {
	text := strings.Join(strings.Fields(description), " ")
	for _, want := range []string{
		fmt.Sprintf("%d MiB (--scrape-max-bytes)", defaultMaxBytes>>20),
		fmt.Sprintf("%d files (--scrape-max-files", defaultMaxFiles),
		fmt.Sprintf("soft memory limit is %d MiB (--memory-limit", defaultMemoryLimit>>20),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("description does not say %q", want)
		}
	}
}

// TestSetMemoryLimit: --memory-limit is the runtime's limit while the
// exporter runs (0: none), GOMEMLIMIT's stays when the flag is not
// given, the default otherwise; and it is put back after.
func TestSetMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	tests := []struct {
		give []string
		env  string
		want int64
	}{
		{give: nil, want: defaultMemoryLimit},
		{give: nil, env: "1GiB", want: before}, // the runtime read it at start
		{give: []string{"--memory-limit", "64MiB"}, env: "1GiB", want: 64 << 20},
		{give: []string{"--memory-limit", "0"}, want: math.MaxInt64},
	}
	for _, tt := range tests {
		o, _, err := parse(tt.give, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		restore := setMemoryLimit(o, func(k string) string {
			if k == "GOMEMLIMIT" {
				return tt.env
			}
			return ""
		})
		got := debug.SetMemoryLimit(-1)
		restore()
		if got != tt.want {
			t.Errorf("%q with GOMEMLIMIT=%q: limit %d, want %d", tt.give, tt.env, got, tt.want)
		}
		if after := debug.SetMemoryLimit(-1); after != before {
			t.Errorf("%q: limit %d after, want %d as before", tt.give, after, before)
		}
	}
}

// TestRunMemoryLimit: the running exporter's limit is --memory-limit, as
// its own go_gc_gomemlimit_bytes says.
func TestRunMemoryLimit(t *testing.T) {
	addr := start(t, "--root", hosttest.Root("seed"), "--memory-limit", "77MiB")
	if v, ok := scrapeValue(t, addr, "go_gc_gomemlimit_bytes", nil); !ok || v != 77<<20 {
		t.Errorf("go_gc_gomemlimit_bytes = %v (%v), want %d", v, ok, 77<<20)
	}
}

// TestReaderBudgetSwallowed: a read that passed its budget fails with the
// budget's error even when the reader made nothing of its own (took the
// failed read for a file the host lacks and answered); within the budget
// the reader's answer is the scrape's.
func TestReaderBudgetSwallowed(t *testing.T) {
	old := auditRead
	t.Cleanup(func() { auditRead = old })
	auditRead = func(fsys kfile.FS, sel audit.Selection) (*audit.State, error) {
		fsys.Read(fsys.Path("proc/interrupts")) // its error dropped
		return &audit.State{}, nil
	}
	fsys := hosttest.Open(t, hosttest.Root("seed"))
	st, err := reader(context.Background(), fsys, audit.Selection{}, budget{bytes: 1 << 10})()
	if !errors.Is(err, kfile.ErrBudget) || st != nil {
		t.Fatalf("read = %v, %v; want no state and kfile.ErrBudget", st, err)
	}
	if want := "over its read budget (--scrape-max-bytes 1KiB, --scrape-max-files 0): read " + fsys.Path("proc/interrupts") + ": read budget exceeded: more than 1024 bytes read"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if st, err := reader(context.Background(), fsys, audit.Selection{}, budget{bytes: 1 << 20})(); err != nil || st == nil {
		t.Errorf("within the budget: %v, %v; want the reader's state", st, err)
	}
}

// TestReaderGivesMemoryBack: a read that passed its budget, or read more
// than freeAfter, ends with a collection that gives its memory back; one
// that read little leaves it to the collector.
func TestReaderGivesMemoryBack(t *testing.T) {
	big := hosttest.Copy(t, "seed")
	replaceFile(t, filepath.Join(big, "proc/interrupts"), func(b []byte) []byte {
		return append(b, strings.Repeat(" ", freeAfter+1)...)
	})
	tests := []struct {
		name string
		root string
		give budget
		want bool // a forced collection
	}{
		{"little read", hosttest.Root("seed"), budget{defaultMaxBytes, defaultMaxFiles}, false},
		{"over the budget", hosttest.Root("seed"), budget{bytes: 1 << 10}, true},
		{"over freeAfter", big, budget{defaultMaxBytes, defaultMaxFiles}, true},
	}
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	for _, tt := range tests {
		fsys := hosttest.Open(t, tt.root)
		before := forced()
		reader(context.Background(), fsys, audit.Selection{}, tt.give)()
		if got := forced() > before; got != tt.want {
			t.Errorf("%s: forced a collection %v, want %v", tt.name, got, tt.want)
		}
	}
}
