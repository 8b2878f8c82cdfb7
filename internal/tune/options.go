package tune

import (
	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// usagef is an option refusal: its message is the user's, and it is
// usage.ErrUsage.
func usagef(format string, args ...any) error {
	return usage.Errorf(format, args...)
}

// PickOptions are the CPU selection of mask and exec as the user gave
// it (their --nic, --node, --cpus, --exclude, --exclude-irq-cpus,
// --one-per-core and --count): a nil pointer or an empty set is not
// given.
type PickOptions struct {
	NIC           *string
	Node          *int
	CPUs, Exclude cpuset.Set
	ExcludeIRQ    bool
	OnePerCore    bool
	Count         *int
	// Within is the group the CPUs must stay inside (--cgroup); alone it
	// is the candidates.
	Within *Within
}

// Request checks the options and turns them into a pick request. Every
// refusal is usage.ErrUsage and names the flag.
func (o PickOptions) Request() (PickRequest, error) {
	r := PickRequest{ExcludeIRQCPUs: o.ExcludeIRQ, OnePerCore: o.OnePerCore, CPUs: o.CPUs, Exclude: o.Exclude, Within: o.Within}
	sources := 0
	for _, given := range []bool{o.NIC != nil, o.Node != nil, !o.CPUs.IsEmpty()} {
		if given {
			sources++
		}
	}
	switch {
	case sources > 1 || (sources == 0 && o.Within == nil):
		return r, usagef("choose the candidate CPUs with exactly one of --nic, --node or --cpus (or --cgroup alone)")
	case o.Node != nil && *o.Node < 0:
		return r, usagef("--node %d: want a node id", *o.Node)
	case o.NIC != nil && *o.NIC == "":
		return r, usagef("--nic: empty NIC name")
	case o.ExcludeIRQ && o.NIC == nil:
		return r, usagef("--exclude-irq-cpus needs --nic: it drops the CPUs where that NIC's queue IRQs land")
	case o.Count != nil && *o.Count < 1:
		return r, usagef("--count %d: want at least 1", *o.Count)
	}
	if o.NIC != nil {
		r.NIC = *o.NIC
	}
	if o.Node != nil {
		node := *o.Node
		r.Node = &node
	}
	if o.Count != nil {
		r.Count = *o.Count
	}
	return r, nil
}
