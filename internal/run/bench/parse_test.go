package bench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/usage"
)

func ptr[T any](v T) *T { return &v }

func iperf3Sample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "iperf3", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseIperf3 reads real iperf3 3.12 -J documents: the received sum
// is the result, with what was sent, retransmits and UDP's loss.
func TestParseIperf3(t *testing.T) {
	p, err := NewParser([]string{"iperf3", "-c", "127.0.0.1", "-J"}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		give string
		want Value
	}{
		{"tcp.json", Value{Value: 10901652520.948277, Unit: "bit/s", SentBitsPerSec: ptr(11009321384.788605),
			ReceivedBitsPerSec: ptr(10901652520.948277), Retransmits: ptr(int64(13))}},
		{"tcp-reverse.json", Value{Value: 12100083036.678532, Unit: "bit/s", SentBitsPerSec: ptr(12091824650.777487),
			ReceivedBitsPerSec: ptr(12100083036.678532), Retransmits: ptr(int64(12))}},
		{"tcp-p2.json", Value{Value: 9827101900.450693, Unit: "bit/s", SentBitsPerSec: ptr(9881368741.684687),
			ReceivedBitsPerSec: ptr(9827101900.450693), Retransmits: ptr(int64(1))}},
		{"udp.json", Value{Value: 95043770.81634335, Unit: "bit/s", SentBitsPerSec: ptr(99295778.8145181),
			ReceivedBitsPerSec: ptr(95043770.81634335), LostPercent: ptr(3.6939313984168867)}},
	}
	for _, tt := range tests {
		got, err := p.Parse(iperf3Sample(t, tt.give))
		if err != nil {
			t.Errorf("Parse(%s): %v", tt.give, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%s) (-want +got):\n%s", tt.give, diff)
		}
	}
}

// TestParseErrors: garbage, an error iperf3 reports inside its JSON, a
// regexp or path that finds nothing: each is ErrParse with a message
// saying what was looked for and what came.
func TestParseErrors(t *testing.T) {
	iperf := []string{"iperf3", "-J"}
	tests := []struct {
		name      string
		re, path  string
		give      []byte
		wantInMsg string
	}{
		{"iperf3 error in its JSON", "", "", iperf3Sample(t, "refused.json"), "iperf3: unable to connect to server: Connection refused"},
		{"iperf3 text, not JSON", "", "", iperf3Sample(t, "tcp-text.txt"), `not JSON`},
		{"empty output", "", "", nil, "the output was empty"},
		{"iperf3 JSON cut short", "", "", iperf3Sample(t, "tcp.json")[:400], "not JSON"},
		{"two documents", "", "", []byte(`{"end":{}} {"end":{}}`), "more than one JSON document"},
		{"iperf3 JSON without sums", "", "", []byte(`{"start":{},"end":{}}`), "no end.sum_received.bits_per_second"},
		{"regexp finds nothing", `(\d+) ops/s`, "", []byte("done\n"), `no match of --regexp "(\\d+) ops/s"; the output was "done"`},
		{"regexp finds no number", `rate (\S+)`, "", []byte("rate fast\n"), `matched "fast", which is not a number`},
		{"json path: no such key", "", "end.sum_recieved.bits_per_second", iperf3Sample(t, "tcp.json"),
			`no .sum_recieved in .end (an object with keys cpu_utilization_percent, receiver_tcp_congestion, sender_tcp_congestion, streams, sum_received, sum_sent)`},
		{"json path: index out of range", "", "end.streams[5].sender", iperf3Sample(t, "tcp.json"), "no [5] in .end.streams (an array of 1)"},
		{"json path: not a number", "", "start.version", iperf3Sample(t, "tcp.json"), "leads to a string, not a number"},
		{"json path: garbage", "", "rate", []byte("\x00\x01binary"), "the output is not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := iperf
			if tt.re != "" || tt.path != "" {
				cmd = []string{"./bench"}
			}
			p, err := NewParser(cmd, tt.re, tt.path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Parse(tt.give)
			if !errors.Is(err, ErrParse) {
				t.Fatalf("Parse = %v, want ErrParse", err)
			}
			if !strings.Contains(err.Error(), tt.wantInMsg) {
				t.Errorf("Parse error %q\ndoes not say %q", err, tt.wantInMsg)
			}
		})
	}
}

// TestParseRegexpAndPath: the last match wins, a group named value
// before the first group; a JSON path reaches into objects and arrays,
// negative indexes counting from the end.
func TestParseRegexpAndPath(t *testing.T) {
	text := iperf3Sample(t, "tcp-text.txt")
	tests := []struct {
		re, path string
		give     []byte
		want     float64
		unit     string
	}{
		{re: `([\d.]+) Gbits/sec`, give: text, want: 15.6}, // the receiver line is the last
		{re: `(\d+)\s+sender`, give: text, want: 4},
		{re: `([\d.]+)\s+sec\s+[\d.]+ GBytes\s+(?P<value>[\d.]+) Gbits/sec\s+\d+\s+sender`, give: text, want: 15.7},
		{re: `(?P<value>[\d.]+) (?P<unit>\w+/sec)\s+receiver`, give: text, want: 15.6, unit: "Gbits/sec"},
		{re: `\d+\.\d+`, give: []byte("x 1.5 y 2.25"), want: 2.25},
		{path: "end.sum_received.bits_per_second", give: iperf3Sample(t, "tcp.json"), want: 10901652520.948277, unit: "bits_per_second"},
		{path: ".end.streams[0].sender.retransmits", give: iperf3Sample(t, "tcp.json"), want: 13, unit: "retransmits"},
		{path: "end.streams[-1].receiver.bytes", give: iperf3Sample(t, "tcp-p2.json"), want: 602931200, unit: "bytes"},
		{path: "[1].ops", give: []byte(`[{"ops":1},{"ops":2.5e3}]`), want: 2500, unit: "ops"},
	}
	for _, tt := range tests {
		p, err := NewParser([]string{"./bench"}, tt.re, tt.path)
		if err != nil {
			t.Fatalf("NewParser(%q, %q): %v", tt.re, tt.path, err)
		}
		got, err := p.Parse(tt.give)
		if err != nil || got.Value != tt.want || got.Unit != tt.unit {
			t.Errorf("Parse with %q%q = %+v, %v; want %v %q", tt.re, tt.path, got, err, tt.want, tt.unit)
		}
	}
}

func TestNewParserRefuses(t *testing.T) {
	tests := []struct {
		name     string
		cmd      []string
		re, path string
	}{
		{"both", []string{"x"}, "a", "b"},
		{"neither, not iperf3", []string{"netperf", "-H", "x"}, "", ""},
		{"iperf3 without -J", []string{"iperf3", "-c", "x"}, "", ""},
		{"bad regexp", []string{"x"}, "(", ""},
		{"empty path", []string{"x"}, "", "."},
		{"trailing dot", []string{"x"}, "", "a."},
		{"bad index", []string{"x"}, "", "a[x]"},
		{"unclosed index", []string{"x"}, "", "a[1"},
		{"double dot", []string{"x"}, "", "a..b"},
	}
	for _, tt := range tests {
		if _, err := NewParser(tt.cmd, tt.re, tt.path); !usage.Is(err) {
			t.Errorf("%s: NewParser = %v, want usage.ErrUsage", tt.name, err)
		}
	}
	if p, err := NewParser([]string{"/usr/bin/iperf3", "--json", "-c", "h"}, "", ""); err != nil || p.Kind != ParseIperf3 {
		t.Errorf("iperf3 --json by path: %+v, %v", p, err)
	}
}

// FuzzParse: no output makes a parser panic, and every failure is
// ErrParse.
func FuzzParse(f *testing.F) {
	for _, n := range []string{"tcp.json", "udp.json", "refused.json", "tcp-text.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", "iperf3", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	ps := []Parser{}
	for _, a := range [][2]string{{"", ""}, {`([\d.]+) Gbits`, ""}, {"", "end.streams[-1].sender.bytes"}} {
		p, err := NewParser([]string{"iperf3", "-J"}, a[0], a[1])
		if err != nil {
			f.Fatal(err)
		}
		ps = append(ps, p)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, p := range ps {
			if _, err := p.Parse(b); err != nil && !errors.Is(err, ErrParse) {
				t.Errorf("%s: %v is not ErrParse", p, err)
			}
		}
	})
}
