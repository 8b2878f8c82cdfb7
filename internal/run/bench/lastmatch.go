package bench

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// maxLine is the longest piece of output --regexp is matched against:
// a longer line is matched in pieces this long.
const maxLine = 64 << 10

// headLen is how much of the start of an output lastMatch keeps for its
// error messages: what excerpt quotes, once leading space is trimmed.
const headLen = 4 << 10

// lastMatch reads a command's output for --regexp as it is written: it
// matches each line as it ends and keeps only the last match's value
// and unit, the start of the output and its length. Its memory is
// bounded whatever the output's size (a line of up to maxLine bytes and
// the matches of one line at a time), where keeping the output and every
// match took 60 times the output's size.
//
// The regexp is matched line by line, as grep matches: ^ and $ are a
// line's start and end, and a match cannot span lines.
type lastMatch struct {
	re    *regexp.Regexp
	expr  string // as given
	vi    int    // the index of the group named value, or -1
	ui    int    // of the group named unit, or -1
	line  []byte // the line being read, at most maxLine bytes
	head  []byte // the first headLen bytes of the output
	n     int64  // bytes written
	found bool
	val   []byte // the last match's value group
	unit  []byte // and its unit group
	long  bool   // a line was longer than maxLine
}

// lastMatch returns an empty reader for the parser's regexp.
func (p Parser) lastMatch() *lastMatch {
	return &lastMatch{re: p.re, expr: p.Expr, vi: p.re.SubexpIndex("value"), ui: p.re.SubexpIndex("unit")}
}

// Write implements io.Writer; it never fails.
func (m *lastMatch) Write(p []byte) (int, error) {
	n := len(p)
	m.n += int64(n)
	if room := headLen - len(m.head); room > 0 {
		m.head = append(m.head, p[:min(room, len(p))]...)
	}
	for len(p) > 0 {
		end := bytes.IndexByte(p, '\n')
		if end < 0 {
			end = len(p)
		}
		take := min(end, maxLine-len(m.line))
		m.line = append(m.line, p[:take]...)
		p = p[take:]
		switch {
		case len(p) > 0 && p[0] == '\n':
			p = p[1:]
		case len(m.line) == maxLine:
			m.long = true
		default:
			continue // the line goes on in the next write
		}
		m.match()
	}
	return n, nil
}

// match matches the line read so far and starts the next.
func (m *lastMatch) match() {
	// Most lines do not match: Match says so without allocating.
	if m.re.Match(m.line) {
		ms := m.re.FindAllSubmatchIndex(m.line, -1)
		loc := ms[len(ms)-1]
		group := func(dst []byte, i int) []byte {
			if loc[2*i] < 0 {
				return dst[:0]
			}
			return append(dst[:0], m.line[loc[2*i]:loc[2*i+1]]...)
		}
		switch {
		case m.vi > 0:
			m.val = group(m.val, m.vi)
		case len(loc) > 2:
			m.val = group(m.val, 1)
		default:
			m.val = group(m.val, 0)
		}
		m.unit = m.unit[:0]
		if m.ui > 0 {
			m.unit = group(m.unit, m.ui)
		}
		m.found = true
	}
	m.line = m.line[:0]
}

// value is the result: the last match's group named "value", else its
// first group, else the whole match, as a number; its group named
// "unit", if any, is the unit. The output's last line need not end in
// a newline.
func (m *lastMatch) value() (Value, error) {
	if len(m.line) > 0 {
		m.match()
	}
	if !m.found {
		return Value{}, fmt.Errorf("%w: no match of --regexp %q; %s", ErrParse, m.expr, m.excerpt())
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(string(m.val)), 64)
	if err != nil {
		return Value{}, fmt.Errorf("%w: --regexp %q matched %q, which is not a number", ErrParse, m.expr, m.val)
	}
	return Value{Value: f, Unit: string(m.unit)}, nil
}

// excerpt is excerpt of the whole output, from the start kept of it.
func (m *lastMatch) excerpt() string {
	if m.n <= int64(len(m.head)) {
		return excerpt(m.head)
	}
	head := bytes.TrimLeftFunc(m.head, unicode.IsSpace)
	return fmt.Sprintf("the output (%d bytes) begins %q", m.n, head[:min(len(head), excerptLen)])
}
