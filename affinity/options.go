package affinity

import (
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// ErrUsage is what the refusals of PickOptions are: the user's to fix
// (usage.ErrUsage too).
var ErrUsage = usage.New("bad option")

// usagef is an option refusal: its message is the user's, and it is
// ErrUsage.
func usagef(format string, args ...any) error {
	return usage.Kind(ErrUsage, fmt.Errorf(format, args...))
}

// PickOptions are the CPU selection of mask and exec as their flags give
// it: --nic, --node, --cpus, --exclude, --exclude-irq-cpus,
// --one-per-core, --count.
type PickOptions struct {
	NIC           string
	Node          int
	CPUs, Exclude cpuset.ListFlag
	ExcludeIRQ    bool
	OnePerCore    bool
	Count         int
}

// Request checks the options and turns them into a pick request; given
// reports whether a flag ("nic", "node", "cpus", "count") was given.
// Every refusal wraps ErrUsage and names the flag.
func (o PickOptions) Request(given func(flag string) bool) (PickRequest, error) {
	r := PickRequest{NIC: o.NIC, ExcludeIRQCPUs: o.ExcludeIRQ, OnePerCore: o.OnePerCore,
		Count: o.Count, CPUs: o.CPUs.CPUs, Exclude: o.Exclude.CPUs}
	sources := 0
	for _, name := range []string{"nic", "node", "cpus"} {
		if given(name) {
			sources++
		}
	}
	switch {
	case sources != 1:
		return r, usagef("choose the candidate CPUs with exactly one of --nic, --node or --cpus")
	case given("node") && o.Node < 0:
		return r, usagef("--node %d: want a node id", o.Node)
	case given("nic") && o.NIC == "":
		return r, usagef("--nic: empty NIC name")
	case o.ExcludeIRQ && o.NIC == "":
		return r, usagef("--exclude-irq-cpus needs --nic: it drops the CPUs where that NIC's queue IRQs land")
	case given("count") && o.Count < 1:
		return r, usagef("--count %d: want at least 1", o.Count)
	}
	if given("node") {
		node := o.Node
		r.Node = &node
	}
	return r, nil
}
