package audit

import (
	"path/filepath"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/irqbalance"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Selection is what an audit looks at beyond the host: the NICs named
// (none: every NIC that has IRQs) and the processes to watch. audit,
// serve, map and the textfile writer all take one.
type Selection struct {
	NICs []string
	proc.Selection
	// ZC asks for the zero-copy prerequisites of each audited NIC too:
	// ZCModeReceive or ZCModeSend; "" for none.
	ZC ZCMode
	// AppCPUs are CPUs kept for the application (tune --app-cpus,
	// --reserve): like isolated CPUs, no place for queue IRQs, so they
	// neither count in an even spread nor are offered as free.
	AppCPUs cpuset.Set
}

// State is one reading of a host and its audit: the topology, the
// selected NICs' IRQs, the watched processes and the findings.
type State struct {
	Host     *topology.Host
	IRQs     *irq.Table
	Procs    []*proc.Process
	Findings []Finding
	// NICs are the NICs named by the selection; nil means every NIC.
	NICs []string
	// Matches says what each --pid, --comm and --cgroup of the selection
	// found; a --cgroup's Match holds its group (Groups).
	Matches []proc.Match
	// Uses says which NICs each of Procs uses (nicuse), in Procs' order.
	Uses []nicuse.Use
	// Processes says which NICs each of Procs uses and which the audit
	// judged it against (Processes); set by Read, nil after ReadHost.
	Processes []ProcessNIC
	// Steer is the audited NICs' steering (ReadSteer), read once by
	// ReadHost; NAPIThreads the napi kthreads of threaded NAPI, by PID.
	Steer       *steer.Host
	NAPIThreads map[int]*proc.Process
	// Irqbalance is what irqbalance.Read found for the checks; set by
	// Audit, nil after ReadHost.
	Irqbalance *irqbalance.Settings
}

// Groups are the control groups the selection's --cgroup found, in its
// order: their processes, CPUs and memory nodes and whether the CPUs are
// theirs alone. A --cgroup the root does not hold has none (its Match
// says so).
func (st *State) Groups() []*proc.Cgroup {
	var out []*proc.Cgroup
	for _, m := range st.Matches {
		if m.Group != nil {
			out = append(out, m.Group)
		}
	}
	return out
}

// Absent returns an error naming the first selector that matched no
// running process (proc.Match.Err: ErrZombie when it has exited), for
// commands that cannot do without it; nil when every one matched.
func (st *State) Absent() error {
	for _, m := range st.Matches {
		if err := m.Err(); err != nil {
			return err
		}
	}
	return nil
}

// ReadHost reads what an audit looks at under root: the topology, the
// selected NICs' IRQs and steering, and the watched processes, without
// auditing.
func ReadHost(fsys kfile.FS, s Selection) (*State, error) {
	h, t, err := irq.Read(fsys, irq.Options{NICs: s.NICs})
	if err != nil {
		return nil, err
	}
	st := &State{Host: h, IRQs: t, NICs: s.NICs}
	if st.Steer, st.NAPIThreads, err = ReadSteer(fsys, h, t, s.NICs); err != nil {
		return nil, err
	}
	if s.Any() {
		if st.Procs, st.Matches, err = proc.SelectPresent(fsys, s.Selection); err != nil {
			return nil, err
		}
	}
	st.Uses = nicuse.All(h, st.Procs)
	return st, nil
}

// Read reads the host under root as ReadHost does, reads what the checks
// need beyond it (irqbalance, the kernel command line, the IOMMU, the
// NICs' drivers, cpufreq governors) and runs every check.
func Read(fsys kfile.FS, s Selection) (*State, error) {
	st, err := ReadHost(fsys, s)
	if err != nil {
		return nil, err
	}
	if err := st.Audit(fsys, s); err != nil {
		return nil, err
	}
	return st, nil
}

// Audit reads what the checks need beyond st's reading of the host under
// fsys (ReadOptions) and runs every check on that reading, filling in
// Findings and Processes: one reading, judged once, for every command
// that shows the findings (audit, map, the exporter).
func (st *State) Audit(fsys kfile.FS, s Selection) error {
	opts, err := readOptions(st.Host, fsys, s.NICs)
	if err != nil {
		return err
	}
	for _, m := range st.Matches {
		if len(m.Partial) > 0 {
			opts.Partial = append(opts.Partial, m)
		}
		if m.Selector.Kind.Group() {
			opts.Cgroups = append(opts.Cgroups, m)
		}
		if len(m.PIDs) == 0 && len(m.Partial) == 0 {
			opts.Absent = append(opts.Absent, m.Selector)
		}
	}
	opts.ProcRoot = filepath.Join(fsys.Root(), "proc")
	opts.AppCPUs = s.AppCPUs
	opts.Uses = st.Uses
	opts.Steer, opts.NAPIThreads = st.Steer, st.NAPIThreads
	if s.ZC != "" {
		opts.ZC, opts.ZCErr = readZC(fsys, st, s)
	}
	st.Irqbalance = opts.Irqbalance
	st.Findings = Run(st.Host, st.IRQs, st.Procs, opts)
	st.Processes = Processes(AuditedNICs(st.Host, st.IRQs, s.NICs), st.Procs, opts)
	return nil
}

// readOptions reads irqbalance and each NIC's PCI driver under fsys, and
// takes the kernel command line and the IOMMU state from h. What a tree
// lacks stays nil, and the checks that need it say so.
func readOptions(h *topology.Host, fsys kfile.FS, nics []string) (Options, error) {
	opts := Options{NICs: nics, Governor: h.Governor}
	ib, err := irqbalance.ReadWith(fsys, irqbalance.ReadOptions{KernelIsolated: kernelIsolated(h)})
	if err != nil {
		return opts, err
	}
	opts.Irqbalance = ib
	// The command line and the IOMMU are the host's, read once by
	// topology.Read; what it could not read is nil or unknown there, with
	// a note, and the checks that need it say so.
	opts.Cmdline, opts.IOMMU = h.Cmdline.Or(nil), h.IOMMU
	opts.IOMMUGroups = map[string]topology.IOMMUGroup{}
	opts.PCIDrivers = map[string]string{}
	for _, n := range h.NICs {
		if n.PCI == "" {
			continue
		}
		g, err := h.DeviceIOMMUGroup(n.PCI)
		if err != nil {
			return opts, err
		}
		opts.IOMMUGroups[n.PCI] = g
		if opts.PCIDrivers[n.PCI], err = h.PCIDriver(n.PCI); err != nil {
			return opts, err
		}
	}
	return opts, nil
}

// kernelIsolated is the union of cpu/isolated and cpu/nohz_full as
// topology.Read read them, for irqbalance's default ban: a set h took
// from the command line instead (the file absent) adds nothing.
func kernelIsolated(h *topology.Host) *cpuset.Set {
	var set cpuset.Set
	if unknown.Is(h.IsolationFrom.Isolated, topology.SourceSysfs) {
		set = set.Union(h.Isolated)
	}
	if unknown.Is(h.IsolationFrom.NohzFull, topology.SourceSysfs) {
		set = set.Union(h.NohzFull)
	}
	return &set
}
