package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/promslog"

	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/run/exporter"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestLogLines: each line of the scrape log is one message, escaped,
// its prefix trimmed, a scrape's failure and a stack's lines errors and
// the rest warnings, in logfmt and in JSON (which would pass a
// terminal's escapes as they are).
func TestLogLines(t *testing.T) {
	tests := []struct {
		give, level, msg, msgJSON string
	}{
		{"irqnuma: scrape: read /x/sys/class/net/eth0\n", "ERROR", `msg="scrape: read /x/sys/class/net/eth0"`, `"msg":"scrape: read /x/sys/class/net/eth0"`},
		{"irqnuma: scrape: read /x/\x1b[31mred\n", "ERROR", `msg="scrape: read /x/\\x1b[31mred"`, `"msg":"scrape: read /x/\\x1b[31mred"`},
		{"irqnuma: scrape: a\nirqnuma: forged\n", "ERROR", `msg="scrape: a\\x0airqnuma: forged"`, `"msg":"scrape: a\\x0airqnuma: forged"`},
		{"irqnuma:     main.go:12\n", "ERROR", `msg="    main.go:12"`, `"msg":"    main.go:12"`},
		{"irqnuma-exporter: series left out: x\n", "WARN", `msg="series left out: x"`, `"msg":"series left out: x"`},
	}
	for _, tt := range tests {
		for format, want := range map[string][]string{"logfmt": {"level=" + tt.level + " ", tt.msg}, "json": {`"level":"` + tt.level + `"`, tt.msgJSON}} {
			f := promslog.NewFormat()
			if err := f.Set(format); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			n, err := logLines{promslog.New(&promslog.Config{Format: f, Writer: &b})}.Write([]byte(tt.give))
			if err != nil || n != len(tt.give) || !strings.Contains(b.String(), want[0]) || !strings.Contains(b.String(), want[1]) || strings.Count(b.String(), "\n") != 1 || strings.ContainsRune(b.String(), '\x1b') {
				t.Errorf("%s: Write(%q) = %d, %v, wrote %q; want %d, one line with %q", format, tt.give, n, err, b.String(), len(tt.give), want)
			}
		}
	}
}

// hostileMark is the file whose presence in a tree makes panicOnMark's
// read panic.
const hostileMark = "irqnuma-test-panic"

// panicOnMark makes every scrape's read panic, as a reader meeting a
// hostile tree might, while the tree holds hostileMark, until the test
// ends (after the exporters it started have stopped).
func panicOnMark(t *testing.T) {
	old := auditRead
	auditRead = func(fsys kfile.FS, sel audit.Selection) (*audit.State, error) {
		if _, err := fsys.Stat(fsys.Path(hostileMark)); err == nil {
			panic("ring count 2147483648")
		}
		return old(fsys, sel)
	}
	t.Cleanup(func() { auditRead = old })
}

// hostile is a way of making a copy of a host tree hostile to a scrape,
// and of mending it.
type hostile struct {
	name   string
	args   []string
	make   func(t *testing.T, root string) (mend func())
	wantIn []string // in the log of a scrape of the hostile tree
}

var hostiles = []hostile{
	{
		name: "panic",
		make: func(t *testing.T, root string) func() {
			p := filepath.Join(root, hostileMark)
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return func() { os.Remove(p) }
		},
		wantIn: []string{`msg="scrape: panic: ring count 2147483648 (a bug in irqnuma`, `msg="  goroutine `},
	},
	{
		name: "bytes",
		args: []string{"--scrape-max-bytes", "1MiB"},
		// /proc/interrupts of 2 MiB: more than the scrape may read.
		make: func(t *testing.T, root string) func() {
			return replaceFile(t, filepath.Join(root, "proc/interrupts"), func(b []byte) []byte {
				return append(b, strings.Repeat(" ", 2<<20)...)
			})
		},
		wantIn: []string{"msg=\"scrape: over its read budget (--scrape-max-bytes 1MiB, --scrape-max-files 200000): read " +
			"ROOT/proc/interrupts: read budget exceeded: more than 1048576 bytes read"},
	},
	{
		name: "files",
		args: []string{"--scrape-max-files", "1500"},
		// 2,000 processes in /proc: more entries than the scrape may list.
		make: func(t *testing.T, root string) func() {
			var dirs []string
			for i := range 2000 {
				d := filepath.Join(root, "proc", fmt.Sprint(100000+i))
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
				dirs = append(dirs, d)
			}
			return func() {
				for _, d := range dirs {
					os.Remove(d)
				}
			}
		},
		wantIn: []string{"msg=\"scrape: over its read budget (--scrape-max-bytes 64MiB, --scrape-max-files 1500): read " +
			"ROOT/proc: read budget exceeded: more than 1500 files (paths opened and folder entries listed)"},
	},
}

// replaceFile writes edit's answer over the file p and returns what puts
// the file back.
func replaceFile(t *testing.T, p string, edit func([]byte) []byte) func() {
	t.Helper()
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	write := func(b []byte) {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	write(edit(append([]byte(nil), orig...)))
	return func() { write(orig) }
}

// scrapeWants scrapes the exporter at addr and wants irqnuma_scrape_error
// 1 when failed, else 0, and the host's series when host, else none.
func scrapeWants(t *testing.T, addr, when string, failed, host bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	wantLine := map[bool]string{true: "irqnuma_scrape_error 1\n", false: "irqnuma_scrape_error 0\n"}[failed]
	if !strings.Contains(string(b), wantLine) || families(t, string(b))[exporter.MetricIRQEffective] != host {
		t.Errorf("%s: want %q and host series %v:\n%s", when, wantLine, host, irqnumaPart(string(b)))
	}
}

// TestRunSurvivesHostile: an exporter started on a tree whose scrape
// panics or passes its read budget listens all the same and answers
// irqnuma_scrape_error 1, its first scrape (before it listened) and the
// next logged; once the tree is mended a scrape answers 0 and the host's
// series; made hostile again while it runs, that scrape alone fails, and
// the next after the tree is mended answers in full again.
func TestRunSurvivesHostile(t *testing.T) {
	panicOnMark(t)
	for _, h := range hostiles {
		t.Run(h.name, func(t *testing.T) {
			root := hosttest.Copy(t, "seed")
			mend := h.make(t, root)
			addr, log := startLog(t, append([]string{"--root", root}, h.args...)...)
			want := func(when string, failed bool) {
				t.Helper()
				scrapeWants(t, addr, when, failed, !failed)
			}
			want("started hostile", true)
			first := log.String()
			for _, w := range h.wantIn {
				w = strings.ReplaceAll(w, "ROOT", root)
				i := strings.Index(first, w)
				if i < 0 || i > strings.Index(first, "msg=serving ") {
					t.Errorf("log lacks %q before it serves:\n%s", w, first)
				}
			}
			if !strings.Contains(first, `msg="the first scrape failed (above)`) {
				t.Errorf("no warning of the first scrape's failure:\n%s", first)
			}
			mend()
			want("mended", false)
			mend = h.make(t, root)
			want("made hostile while it runs", true)
			mend()
			want("mended again", false)
		})
	}
}

// TestRunMalformedCounts: an exporter started on a snapshot whose eth0
// reply claims 2^24 or 2^31-1 RSS rings, or 2^31-1 or 2^32-1 combined
// channels, listens, serves the host's series judged without the count,
// and answers irqnuma_scrape_error 1 naming the count in its log; once
// the reply is mended a scrape answers 0, and made hostile again while
// it runs, that scrape alone says 1.
func TestRunMalformedCounts(t *testing.T) {
	const (
		rxringsData      = 8    // ioctl.rxrings: ethtool_rxnfc.data, a __u64
		channelsCombined = 0x68 // ethtool.channels: ETHTOOL_A_CHANNELS_COMBINED_COUNT's value
	)
	tests := []struct {
		name, key string
		off, size int
		v         uint64
		want      string // in the log
	}{
		{"ring-2^24", "ioctl.rxrings", rxringsData, 8, 1 << 24, "/irqnuma/steer/eth0/ioctl.rxrings claims 16777216 rx rings"},
		{"ring-2^31", "ioctl.rxrings", rxringsData, 8, 1<<31 - 1, "claims 2147483647 rx rings"},
		{"channels-2^31", "ethtool.channels", channelsCombined, 4, 1<<31 - 1, "eth0 channels: malformed (claims 2147483647 combined channels"},
		{"channels-2^32", "ethtool.channels", channelsCombined, 4, 1<<32 - 1, "claims 4294967295 combined channels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := hosttest.Copy(t, "seed")
			hosttest.Overlay(t, root, filepath.Join("..", "irqnuma", "testdata", "flow", "seed-steer"))
			reply := filepath.Join(root, "irqnuma/steer/eth0", tt.key)
			mend := hosttest.PutNative(t, reply, tt.off, tt.size, tt.v)
			addr, log := startLog(t, "--root", root)
			scrape := func(when string, failed bool) {
				t.Helper()
				scrapeWants(t, addr, when, failed, true)
			}
			scrape("started on the malformed reply", true)
			for _, w := range []string{tt.want, `msg="the first scrape failed (above)`} {
				if !strings.Contains(log.String(), w) {
					t.Errorf("log does not say %q:\n%s", w, log.String())
				}
			}
			mend()
			scrape("mended", false)
			mend = hosttest.PutNative(t, reply, tt.off, tt.size, tt.v)
			scrape("malformed again while it runs", true)
			mend()
			scrape("mended again", false)
		})
	}
}
