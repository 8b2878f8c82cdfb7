package topology

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Source says where a fact about the host was read.
type Source string

// String is the source as output prints it.
func (s Source) String() string { return string(s) }

// Sources of a fact; where nothing in the tree says, the fact's source
// is an unknown unknown.Value[Source] with the reason.
const (
	// SourceSysfs: /sys, what the running kernel applied
	// (cpu/isolated, cpu/nohz_full, /sys/class/iommu).
	SourceSysfs Source = "sysfs"
	// SourceCmdline: /proc/cmdline, what the kernel was asked at boot.
	SourceCmdline Source = "cmdline"
)

// IsolationSources says where each of a Host's isolation sets was read;
// a source is unknown, with the reason, when nothing in the tree says
// (then the set is empty and says nothing).
type IsolationSources struct {
	Isolated    unknown.Value[Source] `json:"isolated"`
	NohzFull    unknown.Value[Source] `json:"nohz_full"`
	ManagedIRQ  unknown.Value[Source] `json:"managed_irq"`
	IRQAffinity unknown.Value[Source] `json:"irqaffinity"`
}

// MarshalJSON writes an unknown source as null with its reason.
func (s IsolationSources) MarshalJSON() ([]byte, error) {
	type plain IsolationSources
	return unknown.MarshalObject(plain(s))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (s *IsolationSources) UnmarshalJSON(b []byte) error {
	type plain IsolationSources
	return unknown.UnmarshalObject(b, (*plain)(s))
}

// CmdlineIsolation is what the kernel command line asks of CPU isolation,
// read as the kernel reads it at boot:
//
//   - isolcpus=[flag,...,]LIST (kernel/sched/isolation.c,
//     housekeeping_isolcpus_setup): flags are words ending in a comma
//     before the list. "domain" (also the default when no known flag is
//     given) takes the CPUs out of scheduler load balancing, and is the
//     only flag /sys/devices/system/cpu/isolated shows (drivers/base/cpu.c,
//     print_cpus_isolated: possible CPUs minus housekeeping_cpumask of the
//     domain type), so "isolcpus=managed_irq,1-3" alone leaves that file
//     empty. "managed_irq" keeps kernel-managed IRQs off the CPUs as long
//     as their mask holds an online housekeeping CPU (kernel/irq/manage.c,
//     irq_do_set_affinity). "nohz" is nohz_full=. An unknown word of
//     letters and "_" is skipped; a flag with any other character makes
//     the kernel ignore the whole parameter.
//   - nohz_full=LIST (housekeeping_nohz_full_setup): no scheduler tick.
//   - A LIST the kernel cannot parse (cpulist_parse) is ignored ("incorrect
//     CPU range"); a later isolcpus= or nohz_full= that names other CPUs for
//     a kind an earlier one set is ignored ("nohz_full= must match
//     isolcpus="), as housekeeping_setup does.
//   - irqaffinity=LIST (kernel/irq/irqdesc.c, irq_affinity_setup): the
//     default affinity of IRQs; the kernel adds its boot CPU to it.
//
// Lists are the kernel's cpulist form, "N" included (the last CPU).
type CmdlineIsolation struct {
	Domain     cpuset.Set
	ManagedIRQ cpuset.Set
	NohzFull   cpuset.Set
	// IRQAffinity is the CPUs of irqaffinity=, the empty set when it was
	// not given; unknown when what the kernel made of it is (a list it
	// cannot parse, or none; a note says).
	IRQAffinity unknown.Value[cpuset.Set]
	// Notes says what the kernel skips or ignores, one line each.
	Notes []string
}

// hkKind is one kind of housekeeping isolation the command line sets.
type hkKind int

const (
	hkDomain hkKind = iota
	hkManagedIRQ
	hkNohz
	hkKinds
)

var hkNames = [hkKinds]string{hkDomain: "isolcpus domain", hkManagedIRQ: "isolcpus managed_irq", hkNohz: "nohz_full"}

// Isolation reads isolcpus=, nohz_full= and irqaffinity=, in order, as the
// kernel does. last is the CPU "N" stands for (the highest possible CPU;
// the kernel's is at least that, and CPUs above it are no CPUs), -1 when
// unknown.
func (c *Cmdline) Isolation(last int) CmdlineIsolation {
	ci := CmdlineIsolation{IRQAffinity: unknown.Of(cpuset.Set{})}
	if c == nil {
		return ci
	}
	var set [hkKinds]*cpuset.Set
	var firstParam [hkKinds]string
	for _, p := range c.Params {
		if !p.Set {
			continue // "isolcpus" without "=" is no isolcpus= to the kernel
		}
		word := p.Name + "=" + p.Value
		var kinds []hkKind
		list := p.Value
		switch paramKey(p.Name) {
		case "isolcpus":
			var ok bool
			if kinds, list, ok = ci.isolcpusFlags(word, p.Value); !ok {
				continue
			}
		case "nohz_full":
			kinds = []hkKind{hkNohz}
		case "irqaffinity":
			ci.irqAffinity(word, p.Value, last)
			continue
		default:
			continue
		}
		cpus, err := parseKernelList(list, last)
		switch {
		case err != nil:
			ci.note("%s: %v: the kernel ignores it", word, err)
			continue
		case cpus.IsEmpty():
			ci.note("%s names no CPU: the kernel ignores it", word)
			continue
		}
		if k, clash := firstClash(set, kinds, cpus); clash {
			ci.note("%s: the kernel ignores it, as %s already set the %s CPUs to %s (\"nohz_full= must match isolcpus=\")",
				word, firstParam[k], hkNames[k], set[k])
			continue
		}
		for _, k := range kinds {
			if set[k] == nil {
				set[k], firstParam[k] = &cpus, word
			}
		}
	}
	ci.Domain, ci.ManagedIRQ, ci.NohzFull = deref(set[hkDomain]), deref(set[hkManagedIRQ]), deref(set[hkNohz])
	ci.noteMismatch(set, firstParam)
	return ci
}

// isolcpusFlags splits isolcpus='s value into its kinds and its CPU list
// as housekeeping_isolcpus_setup does; ok is false (with a note) when the
// kernel ignores the parameter.
func (ci *CmdlineIsolation) isolcpusFlags(word, value string) (kinds []hkKind, list string, ok bool) {
	rest := value
	for rest != "" && isLetter(rest[0]) {
		flag, after, comma := strings.Cut(rest, ",")
		if !comma {
			// The kernel wants a comma after every flag; a last word
			// without one is no CPU list.
			ci.note("%s: no CPU list after %q: the kernel ignores it", word, flag)
			return nil, "", false
		}
		rest = after
		switch flag {
		case "domain":
			kinds = append(kinds, hkDomain)
		case "managed_irq":
			kinds = append(kinds, hkManagedIRQ)
		case "nohz":
			kinds = append(kinds, hkNohz)
		default:
			if strings.IndexFunc(flag, func(r rune) bool { return !(r < 0x80 && isLetter(byte(r))) && r != '_' }) >= 0 {
				ci.note("%s: flag %q is not a word: the kernel ignores the parameter", word, flag)
				return nil, "", false
			}
			ci.note("%s: unknown flag %q skipped, as the kernel skips it", word, flag)
		}
	}
	if len(kinds) == 0 {
		kinds = []hkKind{hkDomain} // isolcpus without (known) flags
	}
	return kinds, rest, true
}

// irqAffinity reads irqaffinity=; the last one counts.
func (ci *CmdlineIsolation) irqAffinity(word, value string, last int) {
	cpus, err := parseKernelList(value, last)
	switch {
	case err != nil:
		ci.note("%s: %v: the default IRQ affinity is unknown (the kernel keeps part of the list, and its boot CPU)", word, err)
		ci.IRQAffinity = unknown.NotAs[cpuset.Set](unknown.KindMalformed, fmt.Sprintf("%s: %v", word, err))
	case cpus.IsEmpty():
		ci.note("%s names no CPU: the default IRQ affinity is the kernel's boot CPU alone, which the tree does not say", word)
		ci.IRQAffinity = unknown.NotAs[cpuset.Set](unknown.KindNotReported, word+" names no CPU: the boot CPU alone")
	default:
		ci.IRQAffinity = unknown.Of(cpus)
	}
}

// firstClash returns the first kind that an earlier parameter set to
// other CPUs than cpus.
func firstClash(set [hkKinds]*cpuset.Set, kinds []hkKind, cpus cpuset.Set) (hkKind, bool) {
	for _, k := range kinds {
		if set[k] != nil && !set[k].Equal(cpus) {
			return k, true
		}
	}
	return 0, false
}

// noteMismatch says when kinds set by different parameters name different
// CPUs: kernels with one housekeeping mask for every kind (before it was
// split per kind) keep only the first.
func (ci *CmdlineIsolation) noteMismatch(set [hkKinds]*cpuset.Set, param [hkKinds]string) {
	for a := hkKind(0); a < hkKinds; a++ {
		for b := a + 1; b < hkKinds; b++ {
			if set[a] == nil || set[b] == nil || param[a] == param[b] || set[a].Equal(*set[b]) {
				continue
			}
			ci.note("%s (%s) and %s (%s) name different CPUs: older kernels, with one housekeeping mask for all kinds, ignore the later one",
				param[a], hkNames[a], param[b], hkNames[b])
			return
		}
	}
}

func (ci *CmdlineIsolation) note(format string, args ...any) {
	ci.Notes = append(ci.Notes, fmt.Sprintf(format, args...))
}

func deref(s *cpuset.Set) cpuset.Set {
	if s == nil {
		return cpuset.Set{}
	}
	return *s
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// parseKernelList parses a CPU list as the kernel's cpulist_parse reads
// it (lib/bitmap-str.c, bitmap_parselist): the list form with group
// patterns ("0-15:2/8"), and "N" for the last CPU, which needs last >= 0.
func parseKernelList(s string, last int) (cpuset.Set, error) {
	if !strings.Contains(s, "N") {
		return cpuset.ParseList(s)
	}
	if last < 0 {
		return cpuset.Set{}, fmt.Errorf("cpu list %q: \"N\" (the last CPU) with the CPU count unknown", s)
	}
	n := strconv.Itoa(last)
	parts := strings.Split(s, ",")
	for i, part := range parts {
		rng, pattern, hasPattern := strings.Cut(part, ":")
		lo, hi, isRange := strings.Cut(rng, "-")
		if lo == "N" {
			lo = n
		}
		if hi == "N" {
			hi = n
		}
		part = lo
		if isRange {
			part += "-" + hi
		}
		if hasPattern {
			part += ":" + pattern
		}
		parts[i] = part
	}
	return cpuset.ParseList(strings.Join(parts, ","))
}

// readIsolation fills in the isolation sets: cpu/isolated and
// cpu/nohz_full when the tree has them (what the running kernel applied),
// else what /proc/cmdline asks; isolcpus=managed_irq and irqaffinity=
// only the command line says. Notes say what the kernel ignores on the
// command line, where sysfs and the command line disagree (sysfs is
// used), and when nothing says.
func (h *Host) readIsolation(dir string) error {
	iso, hasIso, err := h.presentList(dir + "/isolated")
	if err != nil {
		return err
	}
	nohz, hasNohz, err := h.presentList(dir + "/nohz_full")
	if err != nil {
		return err
	}
	h.readCmdline()
	var ci CmdlineIsolation
	cmdline, hasCmdline := h.Cmdline.Get()
	if hasCmdline {
		last := -1
		if m, ok := h.Possible.Max(); ok {
			last = m
		}
		ci = cmdline.Isolation(last)
		for _, n := range ci.Notes {
			h.note("/proc/cmdline %s", n)
		}
	}
	h.Isolated, h.IsolationFrom.Isolated = h.isolationSet("cpu/isolated", "isolcpus=", iso, hasIso, ci.Domain)
	h.NohzFull, h.IsolationFrom.NohzFull = h.isolationSet("cpu/nohz_full", "nohz_full=", nohz, hasNohz, ci.NohzFull)
	noCmdline := unknown.Not[Source](h.Cmdline.Why())
	h.IsolationFrom.ManagedIRQ, h.IsolationFrom.IRQAffinity = noCmdline, noCmdline
	if hasCmdline {
		h.ManagedIRQ = h.possibleOnly("isolcpus=managed_irq", ci.ManagedIRQ)
		h.IsolationFrom.ManagedIRQ = unknown.Of(SourceCmdline)
		if cpus, ok := ci.IRQAffinity.Get(); ok {
			h.IRQAffinity = h.possibleOnly("irqaffinity=", cpus)
			h.IsolationFrom.IRQAffinity = unknown.Of(SourceCmdline)
		} else {
			h.IsolationFrom.IRQAffinity = unknown.Not[Source](ci.IRQAffinity.Why())
		}
	}
	if !hasIso && !hasNohz && !hasCmdline {
		h.note("no /sys/devices/system/cpu/isolated, cpu/nohz_full or /proc/cmdline: isolated CPUs unknown")
	}
	return nil
}

// isolationSet chooses between what sysfs says (sys, when hasSys) and
// what the command line asks, and says where it came from.
func (h *Host) isolationSet(file, param string, sys cpuset.Set, hasSys bool, asked cpuset.Set) (cpuset.Set, unknown.Value[Source]) {
	if h.Cmdline.Known() {
		asked = h.possibleOnly(param, asked)
	}
	switch {
	case hasSys:
		if h.Cmdline.Known() && !asked.Equal(sys) {
			h.note("%s says %s but /proc/cmdline's %s asks %s: %s is used, what the running kernel applied",
				file, listOrNone(sys), param, listOrNone(asked), file)
		}
		return sys, unknown.Of(SourceSysfs)
	case h.Cmdline.Known():
		if !asked.IsEmpty() && !h.Online.IsEmpty() && h.Online.IsSubsetOf(asked) {
			h.note("/proc/cmdline %s names every online CPU: the kernel keeps its boot CPU for housekeeping, which the tree does not say", param)
		}
		return asked, unknown.Of(SourceCmdline)
	}
	why := h.absent(h.Path("sys/devices/system", file))
	why.Detail += ", and /proc/cmdline: " + h.Cmdline.Why().String()
	return cpuset.Set{}, unknown.Not[Source](why)
}

// possibleOnly returns the CPUs of a command-line list the host has,
// with a note for those it lacks (the kernel drops them).
func (h *Host) possibleOnly(param string, cpus cpuset.Set) cpuset.Set {
	if h.Possible.IsEmpty() {
		return cpus
	}
	if out := cpus.Difference(h.Possible); !out.IsEmpty() {
		h.note("/proc/cmdline %s names CPUs %s this host does not have (possible: %s): left out", param, out, h.Possible)
	}
	return cpus.Intersection(h.Possible)
}

// readCmdline reads /proc/cmdline into h.Cmdline, unknown when the tree
// lacks it (or it cannot be read: a note says).
func (h *Host) readCmdline() {
	p := h.Path("proc/cmdline")
	s, err := h.fs.String(p)
	switch {
	case err == nil:
		h.Cmdline = unknown.Of(ParseCmdline(s))
	case kfile.IsNotExist(err):
		h.Cmdline = unknown.Not[*Cmdline](h.absent(p))
	default:
		h.note("%v: the kernel command line is unknown", err)
		h.Cmdline = unknown.Not[*Cmdline](readFailed(err))
	}
}

func listOrNone(s cpuset.Set) string {
	if s.IsEmpty() {
		return "none"
	}
	return s.List()
}
