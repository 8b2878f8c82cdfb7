package exporter

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Family is one metric of the text exposition format: a gauge with its
// help text, label names and samples.
type Family struct {
	Name    string
	Help    string
	Labels  []string // label names, in the order of each Sample's values
	Samples []Sample
}

// Sample is one series of a Family: its label values and its value.
type Sample struct {
	Values []string
	Value  float64
}

// add appends a sample to f.
func (f *Family) add(v float64, values ...string) {
	f.Samples = append(f.Samples, Sample{Values: values, Value: v})
}

// WriteText writes fams in the Prometheus text exposition format 0.0.4,
// in the order Prometheus' own client writes it: families by name, label
// pairs by label name, samples by their label values compared in that
// order. A family with no samples is left out. A sample whose label value
// is not valid UTF-8 (an interface name may hold any byte but '/', ':'
// and blanks) is left out too and named in skipped; everything else is
// written regardless. err is a write error.
func WriteText(w io.Writer, fams []Family) (skipped, err error) {
	bw := bufio.NewWriter(w)
	sorted := slices.Clone(fams)
	slices.SortStableFunc(sorted, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	var bad []error
	var line []byte
	for _, f := range sorted {
		// order[i] is the index in f.Labels of the i-th label by name.
		order := make([]int, len(f.Labels))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(f.Labels[a], f.Labels[b]) })
		samples := make([]Sample, 0, len(f.Samples))
		for _, s := range f.Samples {
			if len(s.Values) != len(f.Labels) {
				bad = append(bad, fmt.Errorf("%s: %d label values for %d labels", f.Name, len(s.Values), len(f.Labels)))
				continue
			}
			if i := slices.IndexFunc(s.Values, func(v string) bool { return !utf8.ValidString(v) }); i >= 0 {
				bad = append(bad, fmt.Errorf("%s: label %s=%q is not valid UTF-8", f.Name, f.Labels[i], s.Values[i]))
				continue
			}
			samples = append(samples, s)
		}
		if len(samples) == 0 {
			continue
		}
		slices.SortStableFunc(samples, func(a, b Sample) int {
			for _, i := range order {
				if c := strings.Compare(a.Values[i], b.Values[i]); c != 0 {
					return c
				}
			}
			return 0
		})
		line = append(line[:0], "# HELP "...)
		line = append(line, f.Name...)
		line = append(line, ' ')
		line = appendEscaped(line, f.Help, false)
		line = append(line, "\n# TYPE "...)
		line = append(line, f.Name...)
		line = append(line, " gauge\n"...)
		for _, s := range samples {
			line = append(line, f.Name...)
			if len(order) > 0 {
				line = append(line, '{')
				for k, i := range order {
					if k > 0 {
						line = append(line, ',')
					}
					line = append(line, f.Labels[i]...)
					line = append(line, `="`...)
					line = appendEscaped(line, s.Values[i], true)
					line = append(line, '"')
				}
				line = append(line, '}')
			}
			line = append(line, ' ')
			line = appendFloat(line, s.Value)
			line = append(line, '\n')
		}
		if _, err := bw.Write(line); err != nil {
			return errors.Join(bad...), err
		}
		line = line[:0]
	}
	return errors.Join(bad...), bw.Flush()
}

// appendEscaped escapes a HELP text (backslash, newline) or a label value
// (also the double quote), as the text format requires.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendFloat formats a sample value as the text format does: the
// shortest representation, and +Inf, -Inf, NaN.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, +1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
