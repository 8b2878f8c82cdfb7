package topology

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// ErrNotANIC is wrapped by IfaceNICs' error for an interface that has no
// NIC of this host below it: a virtual one (a veth, a tunnel, a bridge
// without ports), loopback, or a name /sys/class/net does not hold (an
// interface of another network namespace).
var ErrNotANIC = errors.New("not a NIC of this host")

// maxStack bounds how deep IfaceNICs follows lower_* links (a VLAN on a
// bond on two ports is two deep).
const maxStack = 8

// IfaceNICs returns the NICs whose traffic an interface carries: the NIC
// itself, or for a stacked interface (a VLAN, a bond, a team, a bridge,
// a macvlan) the NICs below it, found through the lower_<name> links of
// /sys/class/net/<name>/, by name. An interface with no NIC below it is
// an error wrapping ErrNotANIC.
func (h *Host) IfaceNICs(name string) ([]*NIC, error) {
	var out []*NIC
	seen := map[string]bool{}
	var walk func(name string, depth int) error
	walk = func(name string, depth int) error {
		if seen[name] {
			return nil
		}
		seen[name] = true
		if n, ok := h.NICByName(name); ok {
			out = append(out, n)
			return nil
		}
		if depth == maxStack {
			return fmt.Errorf("interface %s: more than %d interfaces stacked", name, maxStack)
		}
		lower, err := h.lowerIfaces(name)
		if err != nil {
			return err
		}
		for _, l := range lower {
			if err := walk(l, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(name, 0); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("interface %s: %w", name, ErrNotANIC)
	}
	slices.SortFunc(out, func(a, b *NIC) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// lowerIfaces lists the interfaces below name: its lower_* entries.
func (h *Host) lowerIfaces(name string) ([]string, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, nil
	}
	ents, err := h.fs.ReadDir(h.Path("sys/class/net", name))
	if err != nil {
		if kfile.IsNotExist(err) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		return nil, fmt.Errorf("interface %s: %w", name, err)
	}
	var out []string
	for _, e := range ents {
		if l, ok := strings.CutPrefix(e.Name(), "lower_"); ok && l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}
