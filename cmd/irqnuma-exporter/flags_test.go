package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestOldSpellings: the spellings Go's flag package took (one dash, and
// --listen for --web.listen-address) still set their flag, each with a
// warning naming its new spelling; a value that starts with a dash is
// still a value, and today's spellings warn of nothing.
func TestOldSpellings(t *testing.T) {
	tests := []struct {
		give       []string
		wantListen string
		wantRoot   string
		wantComms  []string
		wantWarn   []string
	}{
		{give: []string{"-listen", "127.0.0.1:1"}, wantListen: "127.0.0.1:1", wantRoot: "/",
			wantWarn: []string{"-listen is an old spelling, taken in this release only: use --web.listen-address"}},
		{give: []string{"--listen=127.0.0.1:2", "-root=/host"}, wantListen: "127.0.0.1:2", wantRoot: "/host",
			wantWarn: []string{"--listen is an old spelling, taken in this release only: use --web.listen-address", "-root is an old spelling, taken in this release only: use --root"}},
		{give: []string{"-comm", "-weird", "-root", "/r"}, wantListen: "127.0.0.1:9143", wantRoot: "/r", wantComms: []string{"-weird"},
			wantWarn: []string{"-comm is an old spelling, taken in this release only: use --comm", "-root is an old spelling, taken in this release only: use --root"}},
		{give: []string{"--web.listen-address", "127.0.0.1:3", "--root", "/x", "--comm", "-listen"}, wantListen: "127.0.0.1:3", wantRoot: "/x", wantComms: []string{"-listen"}},
	}
	for _, tt := range tests {
		o, done, err := parse(tt.give, io.Discard)
		if err != nil || done {
			t.Errorf("parse(%q): %v, done %v", tt.give, err, done)
			continue
		}
		if o.listen != tt.wantListen || o.root != tt.wantRoot || !slices.Equal(o.sel.Comms, tt.wantComms) || !slices.Equal(o.deprecated, tt.wantWarn) {
			t.Errorf("parse(%q) = listen %q, root %q, comms %q, warnings %q; want %q, %q, %q, %q",
				tt.give, o.listen, o.root, o.sel.Comms, o.deprecated, tt.wantListen, tt.wantRoot, tt.wantComms, tt.wantWarn)
		}
	}
	if o, _, err := parse([]string{"-version"}, io.Discard); err != nil || !o.version || len(o.deprecated) != 1 {
		t.Errorf("parse(-version) = %+v, %v; want version, one warning", o, err)
	}
}

// TestOldSpellingsRun: the exporter started with today's deprecated
// spellings serves, and its log warns of each, naming the new one.
func TestOldSpellingsRun(t *testing.T) {
	addr, log := startLog(t, "-listen", "127.0.0.1:0", "-root", hosttest.Root("seed"))
	if v, ok := scrapeValue(t, addr, "irqnuma_scrape_error", nil); !ok || v != 0 {
		t.Errorf("irqnuma_scrape_error = %v (%v), want 0", v, ok)
	}
	for _, w := range []string{
		`level=WARN`, `msg="-listen is an old spelling, taken in this release only: use --web.listen-address"`,
		`msg="-root is an old spelling, taken in this release only: use --root"`,
	} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("log lacks %s:\n%s", w, log.String())
		}
	}
}
