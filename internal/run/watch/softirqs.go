package watch

import (
	"bytes"
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
)

// softirqs is the NET_RX and NET_TX rows of /proc/softirqs. The kernel
// prints a column per possible CPU; the header names each one.
type softirqs struct {
	cpus         []int // CPU id of each column, from the header
	netRX, netTX []uint64
}

// parseSoftirqs reads /proc/softirqs, keeping the NET_RX and NET_TX rows.
// Columns come from the header, never from position. A NET_RX or NET_TX
// row with a different number of counts than the header has columns is an
// error: it would put counts under the wrong CPUs.
func parseSoftirqs(b []byte, s *softirqs) error {
	s.cpus, s.netRX, s.netTX = s.cpus[:0], s.netRX[:0], s.netTX[:0]
	header, rest, _ := bytes.Cut(b, []byte("\n"))
	for f := range bytes.FieldsSeq(header) {
		id, ok := bytes.CutPrefix(f, []byte("CPU"))
		n, err := atoi(id)
		if !ok || err != nil {
			return fmt.Errorf("header: %q is not a CPU column: %w", clip(f), ErrFormat)
		}
		if n > cpuset.MaxID {
			return fmt.Errorf("header: CPU%d is past the largest CPU id, %d: %w", n, cpuset.MaxID, ErrFormat)
		}
		if len(s.cpus) > 0 && s.cpus[len(s.cpus)-1] >= n {
			return fmt.Errorf("header: CPU%d after CPU%d: %w", n, s.cpus[len(s.cpus)-1], ErrFormat)
		}
		s.cpus = append(s.cpus, n)
	}
	if len(s.cpus) == 0 {
		return fmt.Errorf("header: no CPU columns: %w", ErrFormat)
	}
	var haveRX, haveTX bool
	for lineNo := 2; len(rest) > 0; lineNo++ {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		name, counts, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			return fmt.Errorf("line %d: %q has no row name: %w", lineNo, clip(line), ErrFormat)
		}
		var dst *[]uint64
		switch string(bytes.TrimSpace(name)) {
		case "NET_RX":
			dst, haveRX = &s.netRX, true
		case "NET_TX":
			dst, haveTX = &s.netTX, true
		default:
			continue
		}
		for f := range bytes.FieldsSeq(counts) {
			v, err := atou(f)
			if err != nil {
				return fmt.Errorf("line %d (%s): %q is not a count: %w", lineNo, bytes.TrimSpace(name), clip(f), ErrFormat)
			}
			*dst = append(*dst, v)
		}
		if len(*dst) != len(s.cpus) {
			return fmt.Errorf("line %d (%s): %d counts for %d CPU columns: %w", lineNo, bytes.TrimSpace(name), len(*dst), len(s.cpus), ErrFormat)
		}
	}
	if !haveRX || !haveTX {
		return fmt.Errorf("no NET_RX or NET_TX row: %w", ErrFormat)
	}
	return nil
}
