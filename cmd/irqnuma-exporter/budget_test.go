package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/audit"
	"github.com/irqnuma/irqnuma/internal/hosttest"
	"github.com/irqnuma/irqnuma/internal/kfile"
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

// TestParseBudget: the budget's flags, their defaults, and the values
// refused as usage errors.
func TestParseBudget(t *testing.T) {
	tests := []struct {
		give    []string
		want    budget
		wantErr string
	}{
		{give: nil, want: budget{64 << 20, 200000}},
		{give: []string{"--scrape-max-bytes", "1MiB", "--scrape-max-files", "0"}, want: budget{1 << 20, 0}},
		{give: []string{"--scrape-max-files", "-1"}, wantErr: "--scrape-max-files -1: want 0 (no bound) or more"},
		{give: []string{"--scrape-max-bytes", "64MB"}, wantErr: `invalid value "64MB" for flag -scrape-max-bytes`},
		{give: []string{"--scrape-max-bytes", "-1"}, wantErr: `invalid value "-1" for flag -scrape-max-bytes`},
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
		if o.budget != tt.want {
			t.Errorf("parse(%q) = budget %+v, want %+v", tt.give, o.budget, tt.want)
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
	} {
		if !strings.Contains(text, want) {
			t.Errorf("description does not say %q", want)
		}
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
