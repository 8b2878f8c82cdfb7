// Package watch samples, interval after interval, which CPUs take a
// host's NIC interrupts and softirq load and where watched threads run:
// /proc/interrupts, /proc/softirqs, the per-CPU lines of /proc/stat,
// /proc/net/softnet_stat and the threads' stat files. It turns two samples
// into per-second rates and percentages and says in words, per NIC,
// whether its softirq CPU is the bottleneck.
//
// Time comes from an injected clock and files from a host root, so tests
// rewrite a copied host tree between samples instead of sleeping. Counters
// that go backwards and CPUs that come or go between two samples never
// give a negative or misattributed rate: the value is unknown for that
// interval and a note says why.
package watch

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/procfs"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/interrupts"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/irq"
	"github.com/irqnuma/irqnuma/proc"
	"github.com/irqnuma/irqnuma/topology"
)

// samplerOptions says what a Sampler follows.
type samplerOptions struct {
	// NICs narrows the NICs watched; nil means every NIC of the host.
	NICs []string
	// Processes are followed thread by thread (stat field 39 and CPU time).
	Processes []*proc.Process
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Sampler takes samples of one host. It is not safe for concurrent use.
type Sampler struct {
	h     *topology.Host
	fs    procfs.FS
	now   func() time.Time
	nics  []*topology.NIC
	known map[int]nicIRQ // NIC IRQs by number, as last seen
	procs []*proc.Process
	buf   []byte    // reused for /proc/interrupts, the largest file
	buf2  []byte    // reused for /proc/stat and /proc/softirqs
	shape *irqShape // layout of the last /proc/interrupts parsed in full
	fast  int       // samples that took the fast path (for tests)
}

// nicIRQ is an IRQ and the NIC vector it serves.
type nicIRQ struct {
	n     int
	name  string
	owner irq.Owner
}

// Sample is one reading of the host's counters.
type Sample struct {
	Time    time.Time
	Online  cpuset.Set
	irqCols []int    // CPU id of each /proc/interrupts column
	irqs    []irqRow // NIC IRQs, ascending by number
	stat    []statCPU
	soft    softirqs
	hasSoft bool
	softnet []softnetCPU
	hasNet  bool
	procs   []procSample
}

type irqRow struct {
	nicIRQ
	counts []uint64 // by irqCols column
}

type procSample struct {
	pid     int
	comm    string
	gone    bool
	threads []proc.ThreadStat
}

// newSampler prepares sampling of host h: it checks the NIC names and
// learns which IRQs serve which NIC (irq.Load: names, msi_irqs, PCI
// addresses).
func newSampler(h *topology.Host, opt samplerOptions) (*Sampler, error) {
	t, err := irq.Load(h, irq.Options{NICs: opt.NICs})
	if err != nil {
		return nil, err
	}
	fs, err := procfs.NewFS(h.Path("proc"))
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	s := &Sampler{h: h, fs: fs, now: opt.Now, known: map[int]nicIRQ{}, procs: opt.Processes}
	if s.now == nil {
		s.now = time.Now
	}
	for i := range h.NICs {
		if len(opt.NICs) == 0 || slices.Contains(opt.NICs, h.NICs[i].Name) {
			s.nics = append(s.nics, &h.NICs[i])
		}
	}
	for _, q := range t.IRQs {
		if q.Owner != nil {
			s.known[q.IRQ] = nicIRQ{n: q.IRQ, name: q.Name, owner: *q.Owner}
		}
	}
	return s, nil
}

// Host returns the host the sampler reads.
func (s *Sampler) Host() *topology.Host { return s.h }

// NICs returns the NICs watched, by name.
func (s *Sampler) NICs() []*topology.NIC { return s.nics }

// Sample reads every counter once.
func (s *Sampler) Sample() (*Sample, error) {
	sm := &Sample{Time: s.now()}
	var err error
	online := s.h.Path("sys/devices/system/cpu/online")
	if sm.Online, err = s.h.FS().List(online); err != nil {
		return nil, fmt.Errorf("online CPUs: %w", err)
	}
	if err := s.readInterrupts(sm); err != nil {
		return nil, err
	}
	p := s.h.Path("proc/stat")
	b, err := s.h.FS().ReadBuf(p, s.buf2[:0])
	if err != nil {
		return nil, err
	}
	s.buf2 = b
	if sm.stat, err = parseStat(b, nil); err != nil {
		return nil, fmt.Errorf("parse %s: %w", p, err)
	}
	p = s.h.Path("proc/softirqs")
	switch b, err = s.h.FS().ReadBuf(p, s.buf2[:0]); {
	case err == nil:
		s.buf2 = b
		if err := parseSoftirqs(b, &sm.soft); err != nil {
			return nil, fmt.Errorf("parse %s: %w", p, err)
		}
		sm.hasSoft = true
	case !kfile.IsNotExist(err):
		return nil, err
	}
	switch rows, err := s.softnet(); {
	case err == nil:
		if sm.softnet, err = softnetByCPU(rows, sm.Online, nil); err != nil {
			return nil, fmt.Errorf("parse %s: %w", s.h.Path("proc/net/softnet_stat"), err)
		}
		sm.hasNet = true
	case !kfile.IsNotExist(err):
		return nil, fmt.Errorf("read %s: %w", s.h.Path("proc/net/softnet_stat"), err)
	}
	for _, p := range s.procs {
		ps := procSample{pid: p.PID, comm: p.Comm}
		ps.threads, err = proc.ReadThreadStats(s.h.Root, p.PID)
		if errors.Is(err, proc.ErrNoProcess) {
			ps.gone = true
		} else if err != nil {
			return nil, err
		}
		sm.procs = append(sm.procs, ps)
	}
	return sm, nil
}

// readInterrupts reads /proc/interrupts and keeps the rows of the NICs
// watched. A row whose name changed since it was last seen (the IRQ was
// re-registered) or that is new is classified again by its name and chip.
func (s *Sampler) readInterrupts(sm *Sample) error {
	p := s.h.Path("proc/interrupts")
	b, err := s.h.FS().ReadBuf(p, s.buf[:0])
	if err != nil {
		return err
	}
	s.buf = b
	if err := s.readIRQs(b, sm); err != nil {
		return fmt.Errorf("parse %s: %w", p, err)
	}
	return nil
}

func (s *Sampler) classify(r interrupts.Row) (nicIRQ, bool) {
	for _, nic := range s.nics {
		if o, ok := irq.Classify(r.Name, r.Chip, nic); ok {
			return nicIRQ{n: r.IRQ, name: r.Name, owner: o}, true
		}
	}
	return nicIRQ{}, false
}

// softnet reads /proc/net/softnet_stat with procfs, after checking that
// in a tree the file is a plain file of the tree (procfs opens it
// itself, following any link).
func (s *Sampler) softnet() ([]procfs.SoftnetStat, error) {
	p := s.h.Path("proc/net/softnet_stat")
	if err := s.h.FS().Plain(p); err != nil {
		return nil, err
	}
	return s.fs.NetSoftnetStat()
}

// Open reads the host under root and the processes sel names, and returns
// a sampler of the NICs named (nil: every NIC) and those processes.
func Open(root string, nics []string, sel proc.Selection, now func() time.Time) (*Sampler, error) {
	h, err := topology.Read(root)
	if err != nil {
		return nil, err
	}
	var procs []*proc.Process
	if sel.Any() {
		if procs, err = proc.Select(root, sel); err != nil {
			return nil, err
		}
	}
	return newSampler(h, samplerOptions{NICs: nics, Processes: procs, Now: now})
}
