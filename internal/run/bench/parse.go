package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Value is one run's result as its parser read it.
type Value struct {
	Value float64 `json:"value"`
	// Unit is "bit/s" for iperf3; for a regexp the match's group named
	// unit, or ""; for a JSON path its last key.
	Unit string `json:"unit"`
	// What iperf3 says besides: the sums of bits/s sent and received,
	// TCP retransmits, and UDP's lost percent; null when it does not.
	SentBitsPerSec     *float64 `json:"sent_bits_per_sec"`
	ReceivedBitsPerSec *float64 `json:"received_bits_per_sec"`
	Retransmits        *int64   `json:"retransmits"`
	LostPercent        *float64 `json:"lost_percent"`
}

// Parser kinds.
const (
	ParseIperf3 = "iperf3"
	ParseRegexp = "regexp"
	ParseJSON   = "json"
)

// Parser reads a run's result from the command's standard output.
type Parser struct {
	Kind string `json:"kind"` // ParseIperf3, ParseRegexp or ParseJSON
	Expr string `json:"expr"` // the regular expression or the JSON path
	// Unit is the unit of every result: "bit/s" for iperf3, a JSON
	// path's last key; "" for a regexp, whose matches may name theirs.
	Unit string `json:"unit"`
	re   *regexp.Regexp
	path []pathStep
}

// NewParser is the parser for a command: the regular expression or the
// JSON path when one is given (not both), else iperf3's -J document when
// the command is iperf3 run with -J (or --json). Anything else is a
// usage error that says what to give.
func NewParser(command []string, re, jsonPath string) (Parser, error) {
	switch {
	case re != "" && jsonPath != "":
		return Parser{}, usagef("--regexp and --json-path are alternatives; give one")
	case re != "":
		c, err := regexp.Compile(re)
		if err != nil {
			return Parser{}, usagef("--regexp: %v", err)
		}
		return Parser{Kind: ParseRegexp, Expr: re, re: c}, nil
	case jsonPath != "":
		steps, err := parsePath(jsonPath)
		if err != nil {
			return Parser{}, usagef("--json-path %q: %v", jsonPath, err)
		}
		unit := ""
		for _, st := range steps {
			if !st.isIdx {
				unit = st.key
			}
		}
		return Parser{Kind: ParseJSON, Expr: jsonPath, Unit: unit, path: steps}, nil
	}
	if len(command) == 0 || filepath.Base(command[0]) != "iperf3" {
		return Parser{}, usagef("say how to read the command's result: --regexp RE (a number in its output) or --json-path PATH (a number in its JSON); iperf3 -J is read without either")
	}
	if !slices.Contains(command[1:], "-J") && !slices.Contains(command[1:], "--json") {
		return Parser{}, usagef("iperf3 without -J: add -J, whose JSON bench reads, or give --regexp")
	}
	return Parser{Kind: ParseIperf3, Unit: "bit/s"}, nil
}

// String says what the parser reads: "iperf3 -J (bits/s received)".
func (p Parser) String() string {
	switch p.Kind {
	case ParseIperf3:
		return "iperf3 -J (bits/s received)"
	case ParseRegexp:
		return "regexp " + strconv.Quote(p.Expr)
	}
	return "JSON path " + p.Expr
}

// Parse reads the result from out. Every failure wraps ErrParse and says
// what was looked for and what the output began with.
func (p Parser) Parse(out []byte) (Value, error) {
	switch p.Kind {
	case ParseIperf3:
		return parseIperf3(out)
	case ParseRegexp:
		m := p.lastMatch()
		_, _ = m.Write(out)
		return m.value()
	case ParseJSON:
		return p.parseJSON(out)
	}
	return Value{}, fmt.Errorf("%w: parser %q unknown", ErrParse, p.Kind)
}

// excerptLen is how much of an output an error message quotes.
const excerptLen = 120

// excerpt quotes the start of an output for an error message.
func excerpt(out []byte) string {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return "the output was empty"
	}
	if len(out) > excerptLen {
		return fmt.Sprintf("the output (%d bytes) begins %q", len(out), out[:excerptLen])
	}
	return fmt.Sprintf("the output was %q", out)
}

// iperf3Sum is one of iperf3's end sums.
type iperf3Sum struct {
	BitsPerSecond *float64 `json:"bits_per_second"`
	Retransmits   *int64   `json:"retransmits"`
	LostPercent   *float64 `json:"lost_percent"`
}

// iperf3Doc is what bench reads of iperf3's -J document.
type iperf3Doc struct {
	End struct {
		SumSent     *iperf3Sum `json:"sum_sent"`
		SumReceived *iperf3Sum `json:"sum_received"`
		Sum         *iperf3Sum `json:"sum"` // UDP before iperf 3.11
	} `json:"end"`
	Error string `json:"error"`
}

// iperf3Error returns the error iperf3 wrote into its -J document, ""
// when there is none or no document.
func iperf3Error(out []byte) string {
	var doc iperf3Doc
	if json.Unmarshal(out, &doc) != nil {
		return ""
	}
	return doc.Error
}

// parseIperf3 reads iperf3's -J document: the sums of bits/s sent and
// received (received is the result), retransmits (TCP) and lost percent
// (UDP). An "error" iperf3 wrote into the document is the error.
func parseIperf3(out []byte) (Value, error) {
	var doc iperf3Doc
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&doc); err != nil {
		return Value{}, fmt.Errorf("%w: iperf3 -J output is not JSON (%v); %s", ErrParse, err, excerpt(out))
	}
	if _, err := dec.Token(); err == nil {
		return Value{}, fmt.Errorf("%w: iperf3 -J output holds more than one JSON document (--json-stream is not read; use -J)", ErrParse)
	}
	if doc.Error != "" {
		return Value{}, fmt.Errorf("%w: iperf3: %s", ErrParse, doc.Error)
	}
	e := doc.End
	v := Value{Unit: "bit/s"}
	recv := e.SumReceived
	if recv == nil || recv.BitsPerSecond == nil {
		recv = e.Sum
	}
	if recv == nil || recv.BitsPerSecond == nil {
		return Value{}, fmt.Errorf("%w: iperf3's JSON has no end.sum_received.bits_per_second (did the test run?); %s", ErrParse, excerpt(out))
	}
	v.Value, v.ReceivedBitsPerSec = *recv.BitsPerSecond, recv.BitsPerSecond
	v.LostPercent = recv.LostPercent
	if s := e.SumSent; s != nil {
		v.SentBitsPerSec, v.Retransmits = s.BitsPerSecond, s.Retransmits
	}
	return v, nil
}

// pathStep is one step of a JSON path: an object key, or an array index
// (negative counts from the end).
type pathStep struct {
	key   string
	index int
	isIdx bool
}

func (s pathStep) String() string {
	if s.isIdx {
		return "[" + strconv.Itoa(s.index) + "]"
	}
	return "." + s.key
}

// parsePath reads a JSON path: keys separated by dots, each maybe
// followed by [N] indexes (end.sum_received.bits_per_second,
// .results[0].rate, intervals[-1].sum.bits_per_second). A leading dot is
// allowed, as jq writes it; a key cannot hold "." or "[".
func parsePath(s string) ([]pathStep, error) {
	rest := strings.TrimPrefix(s, ".")
	if rest == "" {
		return nil, errors.New("empty path")
	}
	var steps []pathStep
	for i := 0; i < len(rest); {
		switch rest[i] {
		case '[':
			end := strings.IndexByte(rest[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed [ at byte %d", i+1)
			}
			n, err := strconv.Atoi(rest[i+1 : i+end])
			if err != nil {
				return nil, fmt.Errorf("index %q: want an integer", rest[i+1:i+end])
			}
			steps = append(steps, pathStep{index: n, isIdx: true})
			i += end + 1
		case '.':
			return nil, fmt.Errorf("empty key at byte %d", i+1)
		case ']':
			return nil, fmt.Errorf("] without [ at byte %d", i+1)
		default:
			end := strings.IndexAny(rest[i:], ".[]")
			if end < 0 {
				end = len(rest) - i
			}
			steps = append(steps, pathStep{key: rest[i : i+end]})
			i += end
		}
		if i < len(rest) && rest[i] == '.' {
			if i++; i == len(rest) {
				return nil, errors.New("ends with a dot")
			}
		}
	}
	return steps, nil
}

// parseJSON follows the path in the command's JSON output to a number.
func (p Parser) parseJSON(out []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Value{}, fmt.Errorf("%w: the output is not JSON (%v); %s", ErrParse, err, excerpt(out))
	}
	at := ""
	for _, st := range p.path {
		var ok bool
		v, ok = step(v, st)
		if !ok {
			return Value{}, fmt.Errorf("%w: JSON path %s: no %s in %s", ErrParse, p.Expr, st, describe(at, v))
		}
		at += st.String()
	}
	n, ok := v.(json.Number)
	if !ok {
		return Value{}, fmt.Errorf("%w: JSON path %s leads to %s, not a number", ErrParse, p.Expr, kindOf(v))
	}
	f, err := n.Float64()
	if err != nil {
		return Value{}, fmt.Errorf("%w: JSON path %s: %v", ErrParse, p.Expr, err)
	}
	return Value{Value: f, Unit: p.Unit}, nil
}

// step takes one step into v; on failure it returns v itself, to be
// described.
func step(v any, st pathStep) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		if e, ok := x[st.key]; ok && !st.isIdx {
			return e, true
		}
	case []any:
		i := st.index
		if i < 0 {
			i += len(x)
		}
		if st.isIdx && i >= 0 && i < len(x) {
			return x[i], true
		}
	}
	return v, false
}

// describe says what is at a point of the document a path step failed on.
func describe(at string, v any) string {
	where := "the document"
	if at != "" {
		where = at
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if len(keys) > 12 {
			keys = append(keys[:12], "...")
		}
		return fmt.Sprintf("%s (an object with keys %s)", where, strings.Join(keys, ", "))
	case []any:
		return fmt.Sprintf("%s (an array of %d)", where, len(x))
	}
	return fmt.Sprintf("%s (%s)", where, kindOf(v))
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a number"
}
