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

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// samplerOptions says what a Sampler follows.
type samplerOptions struct {
	// NICs narrows the NICs watched; nil means every NIC of the host.
	NICs []string
	// Processes are followed thread by thread (stat field 39 and CPU time).
	Processes []*proc.Process
	// Comms are looked for again at each sample while no process of
	// theirs runs, and what is found is followed too.
	Comms []string
	// Pods are the PIDs of each --pod (NAMESPACE/NAME) followed, and
	// Resolve finds a pod's containers again (kube.Resolve): a pod that
	// lost a process (a container restarted under a new ID) or has none
	// is resolved again at the next sample, and its new processes are
	// followed. Nil Resolve: the pods' processes are followed as found.
	Pods    map[string][]int
	Resolve func(*proc.Selection) error
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Sampler takes samples of one host. It is not safe for concurrent use.
type Sampler struct {
	h     *topology.Host
	now   func() time.Time
	nics  []*topology.NIC
	owner *irq.Owners    // which NIC an IRQ serves, as irq.Load decides
	known map[int]nicIRQ // NIC IRQs by number, as last seen
	procs []*proc.Process
	// comms are the --comm names to look for again while no process of
	// theirs runs (a benchmark started after the watch).
	comms []string
	uses  map[int]nicuse.Use // which NICs each process uses
	gone  map[int]bool       // processes found gone by the last sample
	// pods and resolve are samplerOptions' Pods and Resolve.
	pods    map[string][]int
	resolve func(*proc.Selection) error
	files   keptFiles
	threads map[int]*proc.Threads // the thread readers of the processes followed, by PID
	buf     []byte                // reused for /proc/interrupts, the largest file
	buf2    []byte                // reused for the other files
	shape   *irqShape             // layout of the last /proc/interrupts parsed in full
	fast    int                   // samples that took the fast path (for tests)
}

// keptFiles are the files read at every sample, kept open and read
// again from their start (kfile.Keep), as mpstat reads /proc/stat: an
// interval costs a pread or two a file, not an open, a path walk and a
// close. Each is made at its first read.
type keptFiles struct {
	online, interrupts, stat, softirqs, softnet *kfile.Kept
}

// read reads the host file rel (proc/stat) through the kept file *k,
// made at the first read, into buf.
func (s *Sampler) read(k **kfile.Kept, rel string, limit int64, buf []byte) ([]byte, error) {
	if *k == nil {
		*k = s.h.FS().Keep(s.h.Path(rel), limit)
	}
	return (*k).Read(buf)
}

// Close closes the files the sampler keeps open; a Sample after it
// opens them again.
func (s *Sampler) Close() error {
	var first error
	for _, k := range []*kfile.Kept{s.files.online, s.files.interrupts, s.files.stat, s.files.softirqs, s.files.softnet} {
		if k == nil {
			continue
		}
		if err := k.Close(); err != nil && first == nil {
			first = err
		}
	}
	for pid, t := range s.threads {
		t.Close()
		delete(s.threads, pid)
	}
	return first
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
	uses    map[int]nicuse.Use // of the processes sampled, by PID
	notes   []string           // what became of the processes followed
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
	s := &Sampler{h: h, now: opt.Now, owner: irq.NewOwners(h), known: map[int]nicIRQ{}, procs: opt.Processes,
		comms: opt.Comms, uses: map[int]nicuse.Use{}, gone: map[int]bool{}, pods: opt.Pods, resolve: opt.Resolve}
	for _, p := range s.procs {
		s.uses[p.PID] = nicuse.Of(h, p)
	}
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
	if sm.Online, err = s.readOnline(); err != nil {
		return nil, fmt.Errorf("online CPUs: %w", err)
	}
	if err := s.readInterrupts(sm); err != nil {
		return nil, err
	}
	p := s.h.Path("proc/stat")
	b, err := s.read(&s.files.stat, "proc/stat", 0, s.buf2[:0])
	if err != nil {
		return nil, err
	}
	s.buf2 = b
	if sm.stat, err = parseStat(b, nil); err != nil {
		return nil, &kfile.ParseError{Op: "parse", Path: p, Err: err}
	}
	p = s.h.Path("proc/softirqs")
	switch b, err = s.read(&s.files.softirqs, "proc/softirqs", 0, s.buf2[:0]); {
	case err == nil:
		s.buf2 = b
		if err := parseSoftirqs(b, &sm.soft); err != nil {
			return nil, &kfile.ParseError{Op: "parse", Path: p, Err: err}
		}
		sm.hasSoft = true
	case !kfile.IsNotExist(err):
		return nil, err
	}
	p = s.h.Path("proc/net/softnet_stat")
	switch b, err = s.read(&s.files.softnet, "proc/net/softnet_stat", 0, s.buf2[:0]); {
	case err == nil:
		s.buf2 = b
		if sm.softnet, err = parseSoftnet(b, sm.Online, nil); err != nil {
			return nil, &kfile.ParseError{Op: "parse", Path: p, Err: err}
		}
		sm.hasNet = true
	case !kfile.IsNotExist(err):
		return nil, err
	}
	if sm.notes, err = s.followProcesses(); err != nil {
		return nil, err
	}
	sm.uses = map[int]nicuse.Use{}
	for _, p := range s.procs {
		ps := procSample{pid: p.PID, comm: p.Comm}
		ps.threads, err = s.threadsOf(p.PID).Read()
		if errors.Is(err, proc.ErrNoProcess) {
			ps.gone = true
			s.gone[p.PID] = true
		} else if err != nil {
			return nil, err
		} else {
			sm.uses[p.PID] = s.uses[p.PID]
		}
		sm.procs = append(sm.procs, ps)
	}
	return sm, nil
}

// readOnline reads the online CPUs (sys/devices/system/cpu/online), as
// kfile's List does, through the kept file.
func (s *Sampler) readOnline() (cpuset.Set, error) {
	b, err := s.read(&s.files.online, "sys/devices/system/cpu/online", 1<<20, s.buf2[:0])
	if err != nil {
		return cpuset.Set{}, err
	}
	s.buf2 = b
	return kfile.ParseListAttr(s.files.online.Path(), b)
}

// threadsOf returns the reader of pid's threads, made at its first use.
func (s *Sampler) threadsOf(pid int) *proc.Threads {
	t := s.threads[pid]
	if t == nil {
		if s.threads == nil {
			s.threads = map[int]*proc.Threads{}
		}
		t = proc.NewThreads(s.h.FS(), pid)
		s.threads[pid] = t
	}
	return t
}

// followProcesses updates the processes followed before a sample: it
// drops those the last sample found gone (their exit was noted), looks
// again for every --comm with no process left and follows what it finds,
// and reads again the sockets of each process whose NIC is not known yet
// (a server accepts its connections after it starts). It returns notes
// on what it found.
func (s *Sampler) followProcesses() ([]string, error) {
	var notes []string
	again := s.podsToResolve()
	kept := make([]*proc.Process, 0, len(s.procs))
	for _, p := range s.procs {
		if s.gone[p.PID] {
			delete(s.gone, p.PID)
			delete(s.uses, p.PID)
			if t := s.threads[p.PID]; t != nil {
				t.Close()
				delete(s.threads, p.PID)
			}
			continue
		}
		kept = append(kept, p)
	}
	s.procs = kept
	for _, pod := range again {
		n, err := s.resolvePod(pod)
		if err != nil {
			return nil, err
		}
		notes = append(notes, n...)
	}
	for _, c := range s.comms {
		if slices.ContainsFunc(s.procs, func(p *proc.Process) bool { return p.Comm == c }) {
			continue
		}
		pids, err := proc.FindByComm(s.h.FS(), c)
		if err != nil {
			return nil, err
		}
		if len(pids) == 0 {
			notes = append(notes, fmt.Sprintf("waiting for --comm %s: no such process yet", c))
		}
		for _, pid := range pids {
			p, err := proc.Read(s.h.FS(), pid)
			if errors.Is(err, proc.ErrNoProcess) {
				continue
			}
			if err != nil {
				return nil, err
			}
			s.procs = append(s.procs, p)
			s.uses[pid] = nicuse.Of(s.h, p)
			notes = append(notes, fmt.Sprintf("--comm %s: process %d started; watching it", c, pid))
		}
	}
	for _, p := range s.procs {
		if s.uses[p.PID].Known() {
			continue
		}
		if n, err := proc.ReadNet(s.h.FS(), p.PID); err == nil {
			p.Net = n
			s.uses[p.PID] = nicuse.Of(s.h, p)
		}
	}
	return notes, nil
}

// readInterrupts reads /proc/interrupts and keeps the rows of the NICs
// watched. A row whose name changed since it was last seen (the IRQ was
// re-registered) or that is new is classified again by its name and chip.
func (s *Sampler) readInterrupts(sm *Sample) error {
	p := s.h.Path("proc/interrupts")
	b, err := s.read(&s.files.interrupts, "proc/interrupts", 0, s.buf[:0])
	if err != nil {
		return err
	}
	s.buf = b
	if err := s.readIRQs(b, sm); err != nil {
		return &kfile.ParseError{Op: "parse", Path: p, Err: err}
	}
	return nil
}

// classify returns the NIC vector row r serves, when that NIC is watched:
// its owner as irq.Owners decides for the IRQ table (msi_irqs first).
func (s *Sampler) classify(n int, r interrupts.Row) (nicIRQ, bool) {
	if len(s.nics) == 0 {
		return nicIRQ{}, false // no NIC watched
	}
	o, ok := s.owner.Of(n, r.Name, r.Chip)
	if !ok || !slices.ContainsFunc(s.nics, func(n *topology.NIC) bool { return n.Name == o.NIC }) {
		return nicIRQ{}, false
	}
	return nicIRQ{n: n, name: r.Name, owner: o}, true
}

// podsToResolve are the pods to resolve again before this sample: those
// that lost a process in the last one, or have none, sorted.
func (s *Sampler) podsToResolve() []string {
	if s.resolve == nil {
		return nil
	}
	var out []string
	for pod, pids := range s.pods {
		if len(pids) == 0 || slices.ContainsFunc(pids, func(pid int) bool { return s.gone[pid] }) {
			out = append(out, pod)
		}
	}
	slices.Sort(out)
	return out
}

// resolvePod finds pod's containers again and follows the processes of
// theirs it does not follow yet. A pod the kubelet no longer names, or
// whose containers run nothing, is waited for, as a --comm is.
func (s *Sampler) resolvePod(pod string) ([]string, error) {
	sel := proc.Selection{Pods: []string{pod}}
	if err := s.resolve(&sel); err != nil {
		s.pods[pod] = nil
		return []string{fmt.Sprintf("waiting for --pod %s: %v", pod, err)}, nil
	}
	procs, _, err := proc.SelectPresent(s.h.FS(), sel)
	if err != nil {
		return nil, err
	}
	var notes []string
	pids := make([]int, 0, len(procs))
	for _, p := range procs {
		pids = append(pids, p.PID)
		if slices.ContainsFunc(s.procs, func(q *proc.Process) bool { return q.PID == p.PID }) {
			continue
		}
		s.procs = append(s.procs, p)
		s.uses[p.PID] = nicuse.Of(s.h, p)
		notes = append(notes, fmt.Sprintf("--pod %s: process %d (%s) started; watching it", pod, p.PID, p.Comm))
	}
	s.pods[pod] = pids
	if len(pids) == 0 {
		notes = append(notes, fmt.Sprintf("waiting for --pod %s: no process of its containers runs", pod))
	}
	return notes, nil
}

// Open reads the host under root and the processes sel names, and returns
// a sampler of the NICs named (nil: every NIC) and those processes. A
// --pid that names no process is an error; a --comm that matches none is
// waited for: each sample looks for it again until it runs, and again
// after it exits, so a benchmark started after the watch is picked up.
// A --pod is resolved again with resolve (kube.Resolve; nil: never)
// when one of its processes exits or none runs, so a container the
// kubelet restarts under a new ID is followed.
func Open(fsys kfile.FS, nics []string, sel proc.Selection, now func() time.Time, resolve func(*proc.Selection) error) (*Sampler, error) {
	h, err := topology.Read(fsys)
	if err != nil {
		return nil, err
	}
	var procs []*proc.Process
	pods := map[string][]int{}
	if sel.Any() {
		var matches []proc.Match
		if procs, matches, err = proc.SelectPresent(fsys, sel); err != nil {
			return nil, err
		}
		for _, m := range matches {
			if m.Selector.Kind == proc.SelectorKindPod {
				pods[m.Selector.Pod] = append(pods[m.Selector.Pod], m.PIDs...)
			}
			// A --pid or --cgroup names what must be there; a --comm
			// may start later.
			if err := m.Err(); err != nil && (m.Selector.Kind == proc.SelectorKindPID || (m.Selector.Kind.Group() && m.Group == nil)) {
				return nil, err
			}
		}
	}
	return newSampler(h, samplerOptions{NICs: nics, Processes: procs, Comms: sel.Comms, Pods: pods, Resolve: resolve, Now: now})
}
