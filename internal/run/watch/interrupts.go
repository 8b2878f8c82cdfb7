package watch

import (
	"bytes"
	"fmt"
	"math"

	"github.com/irqnuma/irqnuma/internal/host/interrupts"
)

// irqShape remembers the layout of the last /proc/interrupts that was
// parsed in full by interrupts.Parse: its header and, for every row in
// order, the bytes before the counts (id and colon) and after them (chip,
// hwirq, names). From one sample to the next only the counts change, so a
// file whose header, row heads and row tails are byte for byte the same
// needs only the counts of the NIC rows parsed. Anything else (a CPU
// coming or going, an IRQ added, removed or renamed, text that does not
// parse) goes back to interrupts.Parse, which is the reference.
//
// This exists because the benchmark says so: on a 512-CPU host with 1,000
// IRQs /proc/interrupts is 5.8 MB and 512,000 counts, and parsing all of
// it took over 80% of a sample's CPU time, while watch needs the counts of
// the NIC rows only.
//
// What it keeps is what the comparison needs and no more: one buffer of
// every row's head and tail, four numbers a row, and the NIC rows'
// classification; a file of 200,000 rows costs a few MB, not hundreds.
type irqShape struct {
	header []byte
	cols   []int
	text   []byte     // the head then the tail of each row, one after the other
	rows   []shapeRow // in file order
	nics   []nicIRQ   // by shapeRow.nic
}

type shapeRow struct {
	head, tail uint32 // lengths in text
	ncounts    uint32
	nic        int32 // index in nics, or -1
}

// readIRQs parses b (the text of /proc/interrupts) into the sample's
// column ids and NIC rows, by the fast path when the shape is unchanged.
// The slow path keeps the counts of the NIC rows only.
func (s *Sampler) readIRQs(b []byte, sm *Sample) error {
	if s.shape != nil && s.fastIRQs(b, sm) {
		s.fast++
		return nil
	}
	shape := &irqShape{header: bytes.Clone(firstLine(b)), rows: make([]shapeRow, 0, bytes.Count(b, []byte("\n")))}
	counts := make([]uint64, 0, 64) // not nil: a NIC row without counts has an empty list, as the fast path gives
	type nicRow struct{ start, end int }
	var at []nicRow
	irqs := sm.irqs[:0]
	cols, err := interrupts.Scan(b, func(r *interrupts.Row, line []byte) error {
		head, tail := splitCounts(line, len(r.Counts))
		if uint64(len(shape.text))+uint64(len(head)+len(tail)) > math.MaxUint32 {
			return fmt.Errorf("row %s: rows longer than 4 GB together: %w", r.ID, interrupts.ErrFormat) // past kfile.MaxSize
		}
		shape.text = append(append(shape.text, head...), tail...)
		sr := shapeRow{head: uint32(len(head)), tail: uint32(len(tail)), ncounts: uint32(len(r.Counts)), nic: -1}
		if n, numbered := r.IRQ.Get(); numbered {
			k, ok := s.known[n]
			if !ok || k.name != r.Name {
				if k, ok = s.classify(n, *r); ok {
					s.known[n] = k
				} else {
					delete(s.known, n)
				}
			}
			if ok {
				sr.nic = int32(len(shape.nics))
				shape.nics = append(shape.nics, k)
				at = append(at, nicRow{len(counts), len(counts) + len(r.Counts)})
				counts = append(counts, r.Counts...)
				irqs = append(irqs, irqRow{nicIRQ: k})
			}
		}
		shape.rows = append(shape.rows, sr)
		return nil
	})
	if err != nil {
		return err
	}
	for i, a := range at {
		irqs[i].counts = counts[a.start:a.end:a.end]
	}
	shape.cols = cols
	sm.irqCols, sm.irqs = cols, irqs
	s.shape = shape
	return nil
}

// fastIRQs parses b when it has the remembered shape, and reports false
// (leaving sm alone) when it does not.
func (s *Sampler) fastIRQs(b []byte, sm *Sample) bool {
	sh := s.shape
	header, rest, _ := bytes.Cut(b, []byte("\n"))
	if !bytes.Equal(header, sh.header) {
		return false
	}
	counts := make([]uint64, 0, len(sh.nics)*len(sh.cols))
	irqs := make([]irqRow, 0, len(sh.nics))
	i, off := 0, 0
	for len(rest) > 0 {
		var line []byte
		if j := bytes.IndexByte(rest, '\n'); j >= 0 {
			line, rest = rest[:j], rest[j+1:]
		} else {
			line, rest = rest, nil
		}
		if i >= len(sh.rows) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			return false
		}
		r := &sh.rows[i]
		hl, tl := int(r.head), int(r.tail)
		head, tail := sh.text[off:off+hl], sh.text[off+hl:off+hl+tl]
		if len(line) < hl+tl || !bytes.HasPrefix(line, head) || !bytes.HasSuffix(line, tail) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			return false
		}
		i++
		off += hl + tl
		if r.nic < 0 {
			// A row of no watched NIC is not read: its counts answer
			// nothing watch says, and checking them on every sample
			// doubled its cost. The full parse, which shaped this path,
			// judged them once; a row whose name or number changed sends
			// the file to it again.
			continue
		}
		start := len(counts)
		var ok bool
		if counts, ok = appendCounts(counts, line[hl:len(line)-tl]); !ok || len(counts)-start != int(r.ncounts) {
			return false
		}
		irqs = append(irqs, irqRow{nicIRQ: sh.nics[r.nic], counts: counts[start:len(counts):len(counts)]})
	}
	if i != len(sh.rows) {
		return false
	}
	sm.irqCols, sm.irqs = sh.cols, irqs
	return true
}

// appendCounts parses b, which must be only decimal counts separated by
// blanks, the way interrupts.Parse reads them.
func appendCounts(dst []uint64, b []byte) ([]uint64, bool) {
	i := 0
	for {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
			i++
		}
		if i == len(b) {
			return dst, true
		}
		var v uint64
		j := i
		for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
			d := uint64(b[j] - '0')
			if v > (1<<64-1-d)/10 {
				return dst, false
			}
			v = v*10 + d
		}
		if j == i || (j < len(b) && b[j] != ' ' && b[j] != '\t' && b[j] != '\r') {
			return dst, false
		}
		dst = append(dst, v)
		i = j
	}
}

// splitCounts returns the part of a row up to its first colon and the
// part after its n counts, as interrupts.Parse splits it.
func splitCounts(line []byte, n int) (head, tail []byte) {
	c := bytes.IndexByte(line, ':')
	if c < 0 {
		return line, nil
	}
	head, body := line[:c+1], line[c+1:]
	i := 0
	for k := 0; k < n; k++ {
		for i < len(body) && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r') {
			i++
		}
		for i < len(body) && body[i] >= '0' && body[i] <= '9' {
			i++
		}
	}
	return head, body[i:]
}

func firstLine(b []byte) []byte {
	l, _, _ := bytes.Cut(b, []byte("\n"))
	return l
}
