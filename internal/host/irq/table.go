package irq

import (
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// IRQ is everything known of one numbered interrupt.
type IRQ struct {
	Info
	Name  string // action name(s), from /proc/interrupts or the action folders
	Chip  string
	HWIRQ string
	// Counts holds the count per column of Table.CPUs; nil when the IRQ
	// is not in /proc/interrupts.
	Counts []uint64
	Owner  *Owner // the NIC it serves; nil for none
}

// Total returns the sum of the IRQ's counts, saturated at
// math.MaxUint64 (interrupts.Sum).
func (q *IRQ) Total() uint64 { return interrupts.Sum(q.Counts) }

// Table is the IRQs of a host, ascending by number.
type Table struct {
	CPUs []int // CPU id of each count column; nil without /proc/interrupts
	IRQs []IRQ
	// Named holds the named rows of /proc/interrupts (NMI, LOC, IPI0...).
	Named []interrupts.Row
	Notes []string
}

// Options selects what Load reads.
type Options struct {
	// All loads every numbered IRQ; otherwise only those of NICs.
	All bool
	// NICs narrows the NIC IRQs to these interfaces; nil means all.
	NICs []string
}

// Read reads the host under root (topology.Read) and loads its IRQs.
func Read(fsys kfile.FS, opt Options) (*topology.Host, *Table, error) {
	h, err := topology.Read(fsys)
	if err != nil {
		return nil, nil, err
	}
	t, err := Load(h, opt)
	if err != nil {
		return nil, nil, err
	}
	return h, t, nil
}

// Load reads the IRQs of host h: /proc/interrupts for names and counts,
// and /proc/irq/N for every IRQ selected. Each file is read once; h is
// not changed. A NIC named in opt that h lacks is an error wrapping
// topology.ErrUnknownNIC.
func Load(h *topology.Host, opt Options) (*Table, error) {
	t := &Table{}
	owners := NewOwners(h)
	wanted := func(o *Owner) bool {
		return opt.All || o != nil && (len(opt.NICs) == 0 || slices.Contains(opt.NICs, o.NIC))
	}
	// Each row is judged as it is read and only the counts of the rows
	// kept are copied: /proc/interrupts of 200,000 rows on 64 CPUs holds
	// 100 MB of counts, of which a NIC's table keeps a few.
	rows, dropped, err := t.readRows(h, func(n int, r *interrupts.Row) *Owner { return owner(owners, n, r.Name, r.Chip) }, wanted)
	if err != nil {
		return nil, err
	}
	for _, name := range opt.NICs {
		if _, err := h.LookupNIC(name); err != nil {
			return nil, err
		}
	}
	folders, err := listIRQs(h.FS())
	if err != nil {
		if !kfile.IsNotExist(err) {
			return nil, err
		}
		t.Notes = append(t.Notes, "no /proc/irq: IRQ affinity unknown")
	}

	numbers, hasFolder := irqNumbers(rows, dropped, folders)
	t.IRQs = make([]IRQ, 0, len(numbers))
	for _, n := range numbers {
		q := IRQ{Info: noFolder(h.FS(), n)}
		r, inInterrupts := rows[n]
		if inInterrupts {
			q.Name, q.Chip, q.HWIRQ, q.Counts = r.name, r.chip, r.hwirq, r.counts
		}
		// Without a name from /proc/interrupts, the action folders name
		// it; the IRQ's files are read only once it is wanted.
		needActions := q.Name == "" && hasFolder[n]
		var actions []string
		if needActions {
			if actions, err = readActions(h.FS(), n); err != nil {
				return nil, err
			}
			q.Name = strings.Join(actions, ", ")
		}
		if inInterrupts && !needActions {
			q.Owner = r.owner
		} else {
			q.Owner = owner(owners, n, q.Name, q.Chip)
		}
		if !wanted(q.Owner) {
			continue
		}
		if hasFolder[n] {
			if q.Info, err = readInfo(h.FS(), h.TakeRead, n, false); err != nil {
				return nil, err
			}
			q.Actions = actions
		}
		t.IRQs = append(t.IRQs, q)
	}
	t.judgeManaged(h.FS(), folders)
	t.checkRanges(h)
	return t, nil
}

// irqNumbers returns, ascending, the numbers of the rows kept and of the
// /proc/irq folders of IRQs /proc/interrupts does not list, and which
// have a folder.
func irqNumbers(rows map[int]row, dropped map[int]bool, folders []int) ([]int, map[int]bool) {
	numbers := make([]int, 0, len(rows)+len(folders))
	for n := range rows {
		numbers = append(numbers, n)
	}
	hasFolder := make(map[int]bool, len(folders))
	for _, n := range folders {
		hasFolder[n] = true
		if _, ok := rows[n]; !ok && !dropped[n] {
			numbers = append(numbers, n)
		}
	}
	slices.Sort(numbers)
	return numbers, hasFolder
}

// row is what Load keeps of a numbered row of /proc/interrupts that may
// be wanted.
type row struct {
	name, chip, hwirq string
	counts            []uint64
	owner             *Owner
}

// readRows reads /proc/interrupts row by row (interrupts.Scan), keeping
// the named rows in t.Named, and by number the numbered rows wanted of
// their owner or without a name (the action folders may name them); of
// the others only the number is kept, in dropped.
func (t *Table) readRows(h *topology.Host, ownerOf func(int, *interrupts.Row) *Owner, wanted func(*Owner) bool) (rows map[int]row, dropped map[int]bool, err error) {
	rows, dropped = map[int]row{}, map[int]bool{}
	p := h.Path("proc/interrupts")
	var b []byte
	b, err = h.TakeInterrupts() // topology may have read it to infer NICs
	if kfile.IsNotExist(err) {
		t.Notes = append(t.Notes, "no /proc/interrupts: IRQ names and counts unknown")
		return rows, dropped, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var slab []uint64
	keep := func(c []uint64) []uint64 {
		if len(slab) < len(c) {
			slab = make([]uint64, cap(c)*64)
		}
		n := copy(slab, c)
		c, slab = slab[:n:n], slab[n:]
		return c
	}
	cpus, err := interrupts.Scan(b, func(r *interrupts.Row, _ []byte) error {
		n, numbered := r.IRQ.Get()
		if !numbered {
			named := *r
			named.Counts = keep(r.Counts)
			t.Named = append(t.Named, named)
			return nil
		}
		var o *Owner
		if r.Name != "" {
			if o = ownerOf(n, r); !wanted(o) {
				dropped[n] = true
				return nil
			}
		}
		rows[n] = row{name: r.Name, chip: r.Chip, hwirq: r.HWIRQ, counts: keep(r.Counts), owner: o}
		return nil
	})
	if err != nil {
		return nil, nil, &kfile.ParseError{Op: "parse", Path: p, Err: err}
	}
	t.CPUs = cpus
	t.checkColumns(h)
	return rows, dropped, nil
}

// checkColumns notes a /proc/interrupts header that disagrees with
// cpu/online: the kernel prints a column per online CPU, so a missing
// one is a file cut short (or a capture of another moment), and its
// counts are unknown, not zero.
func (t *Table) checkColumns(h *topology.Host) {
	if h.Online.IsEmpty() {
		return
	}
	cols := cpuset.New(t.CPUs...)
	if missing := h.Online.Difference(cols); !missing.IsEmpty() {
		t.Notes = append(t.Notes, fmt.Sprintf("/proc/interrupts has no column for online CPUs %s (its header lists %s): their counts are unknown", missing, cols))
	}
	if extra := cols.Difference(h.Online); !extra.IsEmpty() {
		t.Notes = append(t.Notes, fmt.Sprintf("/proc/interrupts has columns for CPUs %s, which cpu/online (%s) does not list", extra, h.Online))
	}
}

// checkRanges notes affinities that name CPUs the host cannot have: the
// kernel never prints one, so the tree was edited or is of another host.
func (t *Table) checkRanges(h *topology.Host) {
	if h.Possible.IsEmpty() {
		return
	}
	var bad []string
	for i := range t.IRQs {
		q := &t.IRQs[i]
		for _, f := range []struct {
			name string
			set  unknown.Value[cpuset.Set]
		}{{"affinity", q.Affinity}, {"effective affinity", q.Effective}} {
			set, has := f.set.Get()
			if extra := set.Difference(h.Possible); has && !extra.IsEmpty() {
				bad = append(bad, fmt.Sprintf("IRQ %d's %s names CPUs %s", q.IRQ, f.name, extra))
			}
		}
	}
	if len(bad) > 3 {
		bad = append(bad[:3], fmt.Sprintf("%d more", len(bad)-3))
	}
	if len(bad) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%s, past the host's possible CPUs %s", strings.Join(bad, "; "), h.Possible))
	}
}

// owner is the owner Owners gives IRQ n, nil when none.
func owner(w *Owners, n int, name, chip string) *Owner {
	if o, ok := w.Of(n, name, chip); ok {
		return &o
	}
	return nil
}

// ForNIC returns the IRQs of one NIC, in table order.
func (t *Table) ForNIC(nic string) []*IRQ {
	var out []*IRQ
	for i := range t.IRQs {
		if o := t.IRQs[i].Owner; o != nil && o.NIC == nic {
			out = append(out, &t.IRQs[i])
		}
	}
	return out
}

// Get returns the IRQ with the given number.
func (t *Table) Get(n int) (*IRQ, bool) {
	i, ok := slices.BinarySearchFunc(t.IRQs, n, func(q IRQ, n int) int { return q.IRQ - n })
	if !ok {
		return nil, false
	}
	return &t.IRQs[i], true
}

// PerCPU returns the non-zero counts of an IRQ by CPU id.
func (t *Table) PerCPU(q *IRQ) map[int]uint64 {
	m := map[int]uint64{}
	for i, c := range q.Counts {
		if i < len(t.CPUs) && c != 0 {
			m[t.CPUs[i]] += c
		}
	}
	return m
}
