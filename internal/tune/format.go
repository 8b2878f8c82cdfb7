package tune

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// MaskFormats lists the output forms of Pick.Format.
var MaskFormats = []string{"list", "taskset", "mask", "numactl", "docker", "systemd", "cgroup"}

// ErrUnknownMaskFormat is wrapped by the error for a format not in MaskFormats.
var ErrUnknownMaskFormat = errors.New("unknown format")

// Format writes the pick in one of MaskFormats, as people paste it, without
// a final newline:
//
//	list     16-31,48-63
//	taskset  0xffff0000ffff0000
//	mask     ffff0000,ffff0000 (the kernel's form, Width bits wide)
//	numactl  --physcpubind=16-31,48-63 --membind=1
//	docker   --cpuset-cpus=16-31,48-63 --cpuset-mems=1
//	systemd  CPUAffinity=16-31,48-63 (with mem, then NUMAPolicy=bind and
//	         NUMAMask=1 on their own lines)
//	cgroup   16-31,48-63 (the value for cpuset.cpus)
//
// mem applies to systemd only: numactl and docker always carry the
// nodes. A format that needs nodes fails with ErrLocalityUnknown when a
// picked CPU's node is unknown, rather than leave the memory out.
func (p *Pick) Format(format string, mem bool) (string, error) {
	if !slices.Contains(MaskFormats, format) {
		return "", fmt.Errorf("%w %q (want one of %s)", ErrUnknownMaskFormat, format, strings.Join(MaskFormats, ", "))
	}
	if mem && format != "systemd" {
		return "", fmt.Errorf("memory binding is added to the systemd format only (numactl and docker always carry the nodes), not %s", format)
	}
	needNodes := format == "numactl" || format == "docker" || (format == "systemd" && mem)
	pn, nodesKnown := p.Nodes.Get()
	if needNodes && !nodesKnown {
		return "", localityErrorf(false, "NUMA nodes unknown for CPUs %s: the %s format needs them; use --format list", p.CPUs, format)
	}
	cpus, nodes := p.CPUs.List(), pn.List()
	switch format {
	case "taskset":
		return p.CPUs.Taskset(), nil
	case "mask":
		return p.CPUs.Mask(p.Width), nil
	case "numactl":
		return "--physcpubind=" + cpus + " --membind=" + nodes, nil
	case "docker":
		return "--cpuset-cpus=" + cpus + " --cpuset-mems=" + nodes, nil
	case "systemd":
		if mem {
			return "CPUAffinity=" + cpus + "\nNUMAPolicy=bind\nNUMAMask=" + nodes, nil
		}
		return "CPUAffinity=" + cpus, nil
	default: // list, cgroup
		return cpus, nil
	}
}

// PickDoc is the JSON document of `irqnuma mask -o json`. Fields are added,
// never renamed or re-typed.
type PickDoc struct {
	CPUs       string               `json:"cpus"`
	Nodes      unknown.Value[[]int] `json:"nodes"` // unknown when a picked CPU's node is
	Taskset    string               `json:"taskset"`
	Mask       string               `json:"mask"`
	Count      int                  `json:"count"`
	Excluded   string               `json:"excluded"` // candidates the filters removed
	Source     string               `json:"source"`
	Candidates string               `json:"candidates"`
	// IRQCPUs is where the NIC's IRQs land; null unless IRQ CPUs were
	// excluded (not asked: a request's option, not an unknown).
	IRQCPUs *string  `json:"irq_cpus"`
	Dropped []Drop   `json:"dropped"`
	Notes   []string `json:"notes"`
}

// MarshalJSON writes each unknown field's reason beside it.
func (d PickDoc) MarshalJSON() ([]byte, error) {
	type plain PickDoc
	return unknown.MarshalObject(plain(d))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (d *PickDoc) UnmarshalJSON(b []byte) error {
	type plain PickDoc
	return unknown.UnmarshalObject(b, (*plain)(d))
}

// Doc returns the JSON document of the pick.
func (p *Pick) Doc() PickDoc {
	d := PickDoc{
		CPUs: p.CPUs.List(), Taskset: p.CPUs.Taskset(), Mask: p.CPUs.Mask(p.Width),
		Count: p.CPUs.Len(), Excluded: p.Excluded.List(), Source: p.Source,
		Candidates: p.Candidates.List(), Dropped: append([]Drop{}, p.Drops...),
		Notes: append([]string{}, p.Notes...),
	}
	if n, ok := p.Nodes.Get(); ok {
		d.Nodes = unknown.Of(n.IDs())
	} else {
		d.Nodes = unknown.Not[[]int](p.Nodes.Why())
	}
	if p.IRQsChecked {
		s := p.IRQCPUs.List()
		d.IRQCPUs = &s
	}
	return d
}

// Describe says where the CPUs are for a person: "CPUs 16-31 (node 1)",
// "CPUs 0-3,16-19 (nodes 0-1)", "CPU 3 (node unknown)".
func (p *Pick) Describe() string {
	word := "CPUs "
	if p.CPUs.Len() == 1 {
		word = "CPU "
	}
	return word + p.CPUs.List() + " (" + pickDescribeNodes(p.Nodes.Or(cpuset.Set{}), p.Nodes.Known()) + ")"
}

func pickDescribeNodes(nodes cpuset.Set, known bool) string {
	switch {
	case !known:
		return "node unknown"
	case nodes.Len() == 1:
		return "node " + nodes.List()
	default:
		return "nodes " + nodes.List()
	}
}
