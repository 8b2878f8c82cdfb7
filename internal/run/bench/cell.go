package bench

import (
	"slices"
	"strings"
)

// Side is where a cell puts the NIC's queue IRQs or the command,
// relative to the NIC.
type Side string

// Sides.
const (
	SideLocal  Side = "local"  // the NIC's own node
	SideRemote Side = "remote" // another node (Plan.RemoteNode)
)

// Cell is one named placement of the matrix.
type Cell struct {
	Name string `json:"name"`
	IRQs Side   `json:"irqs"` // where the queue IRQs are pinned
	App  Side   `json:"app"`  // where the command runs
	// Shared runs the command on the CPUs that take the queue IRQs (and
	// run their softirq) instead of the other cores of that node.
	Shared bool `json:"shared"`
	// Membind binds the command's memory to its node (MPOL_BIND).
	Membind bool `json:"membind"`
	// Flow, for a flow placement, is where the command runs relative to
	// the core C that takes the flow's queue IRQ (FlowSameCore,
	// FlowSibling, FlowOtherCore); "" for the others.
	Flow string `json:"flow,omitempty"`
	Doc  string `json:"doc"`
}

// MembindSuffix turns a cell's name into its variant with memory bound
// to the command's node.
const MembindSuffix = "+membind"

// baseCells are the placements, each also available with MembindSuffix.
var baseCells = []Cell{
	{Name: "local", IRQs: SideLocal, App: SideLocal,
		Doc: "IRQs on the NIC's node, the command on other cores of that node: the placement irqnuma recommends"},
	{Name: "shared", IRQs: SideLocal, App: SideLocal, Shared: true,
		Doc: "IRQs on the NIC's node, the command on the very CPUs that take them, sharing the cores with the softirq"},
	{Name: "app-remote", IRQs: SideLocal, App: SideRemote,
		Doc: "IRQs on the NIC's node, the command on the remote node"},
	{Name: "irq-remote", IRQs: SideRemote, App: SideLocal,
		Doc: "IRQs on the remote node, the command on the NIC's node"},
	{Name: "remote", IRQs: SideRemote, App: SideRemote,
		Doc: "IRQs and the command on the remote node, on different cores: everything one node away from the NIC"},
}

// DefaultCells are the placements bench runs unless told otherwise:
// the published matrices, on the user's host.
var DefaultCells = []string{"local", "local+membind", "shared", "app-remote", "irq-remote", "remote"}

// Cells returns every placement bench knows: each base cell, then its
// membind variant; then the flow placements, which need --flow.
func Cells() []Cell {
	var out []Cell
	for _, c := range baseCells {
		out = append(out, c)
		m := c
		m.Name += MembindSuffix
		m.Membind = true
		m.Doc = "as " + c.Name + ", with the command's memory bound to its node (MPOL_BIND)"
		out = append(out, m)
	}
	return append(out, flowCells...)
}

// cellNames returns the names of every placement, in catalogue order.
func cellNames() []string {
	var names []string
	for _, c := range Cells() {
		names = append(names, c.Name)
	}
	return names
}

// ParseCells turns --placements into cells: a comma-separated list of
// names, "default" for DefaultCells, "all" for every cell but the flow
// placements, which need --flow and are asked for by name. Each cell is
// kept once, in the order given.
func ParseCells(s string) ([]Cell, error) {
	all := Cells()
	byName := map[string]Cell{}
	for _, c := range all {
		byName[c.Name] = c
	}
	var names []string
	for _, f := range strings.Split(s, ",") {
		switch f = strings.TrimSpace(f); f {
		case "":
			return nil, usagef("--placements %q: empty name", s)
		case "default":
			names = append(names, DefaultCells...)
		case "all":
			for _, c := range all {
				if c.Flow == "" { // the flow placements need --flow: named only
					names = append(names, c.Name)
				}
			}
		default:
			if _, ok := byName[f]; !ok {
				return nil, usagef("--placements: unknown placement %q (known: %s, default, all)", f, strings.Join(cellNames(), ", "))
			}
			names = append(names, f)
		}
	}
	var out []Cell
	for _, n := range names {
		if !slices.ContainsFunc(out, func(c Cell) bool { return c.Name == n }) {
			out = append(out, byName[n])
		}
	}
	return out, nil
}
