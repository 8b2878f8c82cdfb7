// Package interrupts parses /proc/interrupts and reads what an IRQ's
// action name says of the vector (queue, direction). It sits below
// topology, which infers NICs from the names when a capture has no
// /sys/class/net, and irq, which matches the rows to NICs.
package interrupts

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Interrupts is /proc/interrupts: one column per CPU that was online when
// the kernel printed it, and the rows in the kernel's order.
type Interrupts struct {
	// CPUs holds the CPU id of each count column, from the header:
	// "CPU0 CPU2 CPU3" when CPU1 is offline gives [0 2 3].
	CPUs []int
	Rows []Row
}

// Row is one line of /proc/interrupts.
type Row struct {
	ID string // what stands before the colon: "284", "NMI", "IPI0"
	// IRQ is the IRQ number; not applicable for a named row (NMI, LOC,
	// IPI0, ERR), whose name is ID.
	IRQ unknown.Value[int]
	// Counts holds one count per column of CPUs; a row the kernel printed
	// short (ERR and MIS have a single value) has fewer.
	Counts  []uint64
	Chip    string // "IR-PCI-MSIX-0000:98:00.0", "GICv3", "ITS-MSI"
	HWIRQ   string // "1-edge", "30", "524288"
	Trigger string // "Level" or "Edge" where the architecture prints it
	// Name is the action name(s) of a numbered row ("mlx5_comp0@pci:0000:98:00.0",
	// "PCIe PME, pciehp") or the description of a named row.
	Name string
}

// Total returns the sum of the row's counts, saturated at
// math.MaxUint64: a sum that does not fit says so by being the largest
// value, never by wrapping to a small one.
func (r Row) Total() uint64 { return Sum(r.Counts) }

// Sum returns the sum of counts, saturated at math.MaxUint64.
func Sum(counts []uint64) uint64 {
	var t uint64
	for _, c := range counts {
		if t > math.MaxUint64-c {
			return math.MaxUint64
		}
		t += c
	}
	return t
}

// PerCPU returns the count of each CPU column that has one.
func (in *Interrupts) PerCPU(r Row) map[int]uint64 {
	m := make(map[int]uint64)
	for i, c := range r.Counts {
		if i < len(in.CPUs) && c != 0 {
			m[in.CPUs[i]] += c
		}
	}
	return m
}

// Row returns the row of a numbered IRQ.
func (in *Interrupts) Row(irq int) (Row, bool) {
	for _, r := range in.Rows {
		if unknown.Is(r.IRQ, irq) {
			return r, true
		}
	}
	return Row{}, false
}

// MaxRowText bounds what follows a row's counts (chip, hwirq, action
// names): the kernel prints each action's name, device names of a few
// dozen bytes, joined by ", "; nothing near this.
const MaxRowText = 4096

// MaxIRQ is the largest IRQ number irqnuma takes: far past any kernel's
// nr_irqs (NR_IRQS plus the sparse allocator's slack, a few hundred
// thousand on the biggest configurations), and the largest id a cpuset.Set
// holds, so an IRQ list prints with the CPU-list code.
const MaxIRQ = cpuset.MaxID

// ErrFormat is wrapped by errors about text that is not /proc/interrupts.
// It is kfile.ErrFileParse, as every kernel file that does not parse.
var ErrFormat = kfile.FormatSentinel("not in /proc/interrupts format")

// Read reads and parses root/proc/interrupts.
func Read(fsys kfile.FS) (*Interrupts, error) {
	root := fsys.Root()
	p := filepath.Join(root, "proc/interrupts")
	b, err := fsys.Read(p)
	if err != nil {
		return nil, err
	}
	in, err := Parse(b)
	if err != nil {
		return nil, &kfile.ParseError{Op: "parse", Path: p, Err: err}
	}
	return in, nil
}

// Parse parses the text of /proc/interrupts. It never panics:
// text that is not in the format is an error wrapping ErrFormat, and a
// row the kernel printed short keeps the counts it has.
func Parse(b []byte) (*Interrupts, error) {
	in := &Interrupts{}
	var slab []uint64
	cpus, err := Scan(b, func(r *Row, _ []byte) error {
		// Counts of all rows share one slab: one allocation per ~64 rows.
		if len(slab) < len(r.Counts) {
			slab = make([]uint64, cap(r.Counts)*64)
		}
		n := copy(slab, r.Counts)
		r.Counts, slab = slab[:n:n], slab[n:]
		in.Rows = append(in.Rows, *r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	in.CPUs = cpus
	return in, nil
}

// Scan parses the text of /proc/interrupts as Parse does, keeping
// nothing: it calls fn with each row, in order, and the line the row was
// read from, and returns the CPU id of each column. r and r.Counts are
// reused from one call to the next, so a caller that needs a few rows of
// a file of many keeps only those (a copy of their Counts). An error of
// fn ends the scan and is returned as it is.
func Scan(b []byte, fn func(r *Row, line []byte) error) (cpus []int, err error) {
	header, rest, _ := bytes.Cut(b, []byte("\n"))
	if cpus, err = parseHeader(header); err != nil {
		return nil, err
	}
	seenIRQ := map[int]bool{}
	counts := make([]uint64, 0, len(cpus))
	var r Row
	for lineNo := 2; len(rest) > 0; lineNo++ {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := parseRow(&r, line, lineNo, counts, len(cpus), seenIRQ); err != nil {
			return nil, err
		}
		if err := fn(&r, line); err != nil {
			return nil, err
		}
	}
	return cpus, nil
}

// parseHeader returns the CPU id of each column of the header line.
func parseHeader(header []byte) ([]int, error) {
	var cpus []int
	seen := map[int]bool{}
	for f := range bytes.FieldsSeq(header) {
		id, ok := bytes.CutPrefix(f, []byte("CPU"))
		n, err := strconv.Atoi(string(id))
		if !ok || err != nil || n < 0 || len(id) > 7 {
			return nil, fmt.Errorf("header: %q is not a CPU column: %w", clip(f), ErrFormat)
		}
		if n > cpuset.MaxID {
			return nil, fmt.Errorf("header: CPU%d is past the largest CPU id, %d: %w", n, cpuset.MaxID, ErrFormat)
		}
		if seen[n] {
			return nil, fmt.Errorf("header: CPU%d twice: %w", n, ErrFormat)
		}
		seen[n] = true
		cpus = append(cpus, n)
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("header: no CPU columns: %w", ErrFormat)
	}
	return cpus, nil
}

// parseRow parses the row line (line lineNo of the file) into r, its
// counts into counts' array, of ncol columns. seen holds the IRQ numbers
// of the rows before it.
func parseRow(r *Row, line []byte, lineNo int, counts []uint64, ncol int, seen map[int]bool) error {
	idPart, body, ok := bytes.Cut(line, []byte(":"))
	id := string(bytes.TrimSpace(idPart))
	if !ok || id == "" || bytes.ContainsAny([]byte(id), " \t") {
		return fmt.Errorf("line %d: %q has no row id: %w", lineNo, clip(line), ErrFormat)
	}
	*r = Row{ID: id}
	n, err := rowIRQ(id, seen)
	if err != nil {
		return fmt.Errorf("line %d: %w", lineNo, err)
	}
	numbered := n >= 0
	if numbered {
		r.IRQ = unknown.Of(n)
	} else {
		r.IRQ = namedRow
	}
	var i int
	if r.Counts, i, err = parseCounts(body, counts[:0], ncol); err != nil {
		return fmt.Errorf("line %d: %w", lineNo, err)
	}
	if err := checkAfterCounts(body[i:], len(r.Counts), ncol); err != nil {
		return fmt.Errorf("line %d (%s): %w: %w", lineNo, clip([]byte(id)), err, ErrFormat)
	}
	text := body[i:]
	if len(text) > MaxRowText {
		return fmt.Errorf("line %d (%s): %d bytes after the counts, more than a kernel prints (%d): %w",
			lineNo, clip([]byte(id)), len(text), MaxRowText, ErrFormat)
	}
	if !numbered {
		r.Name = string(bytes.TrimSpace(text))
	} else {
		r.Chip, r.HWIRQ, r.Trigger, r.Name = splitIRQText(text)
	}
	return nil
}

// namedRow is the IRQ of a named row.
var namedRow = unknown.NotAs[int](unknown.KindNotApplicable, "a named row")

// rowIRQ returns the IRQ number of a row's id, -1 for a named row (NMI,
// IPI0), and records it in seen.
func rowIRQ(id string, seen map[int]bool) (int, error) {
	n, err := strconv.Atoi(id)
	switch {
	case err != nil && allDigits(id):
		// Past what Atoi takes (20 digits): a number all the same,
		// never a named row like NMI.
		return 0, fmt.Errorf("IRQ %s is past the largest IRQ number, %d: %w", clip([]byte(id)), MaxIRQ, ErrFormat)
	case err != nil:
		return -1, nil
	case n < 0:
		return 0, fmt.Errorf("negative IRQ %d: %w", n, ErrFormat)
	case n > MaxIRQ:
		return 0, fmt.Errorf("IRQ %d is past the largest IRQ number, %d: %w", n, MaxIRQ, ErrFormat)
	case seen[n]:
		return 0, fmt.Errorf("IRQ %d twice: %w", n, ErrFormat)
	}
	seen[n] = true
	return n, nil
}

// parseCounts appends to counts the decimal counts at the start of body,
// up to ncol of them, and returns them with the index after the last.
// A row the kernel printed short stops at the first word that is not a
// count.
func parseCounts(body []byte, counts []uint64, ncol int) ([]uint64, int, error) {
	i := 0
	for len(counts) < ncol {
		j := skipSpace(body, i)
		k := j
		var v uint64
		for k < len(body) && body[k] >= '0' && body[k] <= '9' {
			d := uint64(body[k] - '0')
			if v > (math.MaxUint64-d)/10 {
				return nil, 0, fmt.Errorf("count %q overflows: %w", clip(body[j:]), ErrFormat)
			}
			v = v*10 + d
			k++
		}
		if k == j || (k < len(body) && body[k] != ' ' && body[k] != '\t' && body[k] != '\r') {
			break // not a count: the row is short, the rest is text
		}
		counts = append(counts, v)
		i = k
	}
	return counts, i, nil
}

// checkAfterCounts refuses a row whose text, after the n counts read of
// ncol, starts with what can only be a count: a negative number (the
// kernel prints unsigned counts), or a number past the header's columns.
// No chip name is a bare number (the kernel prints "-" or "None" for a
// chip without a name), so such a row is malformed, not a name.
func checkAfterCounts(b []byte, n, ncol int) error {
	j := skipSpace(b, 0)
	k := j
	if k < len(b) && b[k] == '-' {
		k++
	}
	d := k
	for d < len(b) && b[d] >= '0' && b[d] <= '9' {
		d++
	}
	if d == k || d < len(b) && b[d] != ' ' && b[d] != '\t' && b[d] != '\r' {
		return nil // not a number: the chip or the name
	}
	if k > j {
		return fmt.Errorf("count %s is negative", clip(b[j:d]))
	}
	if n == ncol {
		return fmt.Errorf("count %s is past the header's %d CPU columns", clip(b[j:d]), ncol)
	}
	return nil // cannot happen: the count loop reads every number up to ncol
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// splitIRQText splits what follows the counts of a numbered row:
// chip, hwirq (with the flow handler, "1-edge"), the Level/Edge word some
// architectures print, and the action names, which may hold spaces.
func splitIRQText(b []byte) (chip, hwirq, trigger, name string) {
	i := skipSpace(b, 0)
	next := func() (string, int) { // token at i and the index after it
		j := i
		for j < len(b) && b[j] != ' ' && b[j] != '\t' {
			j++
		}
		return string(b[i:j]), j
	}
	if i >= len(b) {
		return
	}
	var end int
	chip, end = next()
	i = skipSpace(b, end)
	if i < len(b) && b[i] >= '0' && b[i] <= '9' {
		hwirq, end = next()
		i = skipSpace(b, end)
	}
	if t, e := next(); t == "Level" || t == "Edge" {
		trigger = t
		i = skipSpace(b, e)
		if t2, e2 := next(); len(t2) > 1 && t2[0] == '-' { // "-fasteoi" after the trigger
			i = skipSpace(b, e2)
		}
	}
	name = string(bytes.TrimRight(b[i:], " \t\r"))
	return
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
