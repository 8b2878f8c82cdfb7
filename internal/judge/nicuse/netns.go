package nicuse

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/nslink"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// away is a process's network namespace when it is not PID 1's: its
// links (nslink) and the host's routes, which a veth's traffic takes
// once it reaches the host.
type away struct {
	inode string // the namespace's inode, "4026532281"
	links *nslink.Links
	host  *proc.Net // PID 1's namespace's routes; nil until needed
	read  func() (*proc.Net, error)
	err   error
}

// maxFollow bounds a chain of interfaces inside one namespace (a macvlan
// on a VLAN on a veth …).
const maxFollow = 8

// newAway reads the links of p's namespace: from the kernel on the live
// root, from the root's recording otherwise.
func newAway(h *topology.Host, p *proc.Process) *away {
	n := p.Net
	a := &away{inode: strings.TrimSuffix(strings.TrimPrefix(n.Namespace, "net:["), "]")}
	ls, err := nslink.Read(h.FS(), p.PID, n.Namespace)
	if err != nil {
		ls = &nslink.Links{Namespace: n.Namespace, Links: unknown.NotAs[[]nslink.Link](unknown.KindFailed, err.Error()), InitNSID: unknown.NotAs[int](unknown.KindFailed, err.Error())}
	}
	a.links = ls
	a.read = func() (*proc.Net, error) { return proc.ReadNet(h.FS(), 1) }
	return a
}

// hostNet returns PID 1's namespace's routes, read once.
func (a *away) hostNet() (*proc.Net, error) {
	if a.host == nil && a.err == nil {
		a.host, a.err = a.read()
	}
	return a.host, a.err
}

// follow says which NICs of the host an interface of the process's
// namespace leads to, and how: a veth through its peer on the host and
// the host's route to remote (its default route when remote is not
// valid: a wildcard socket), a macvlan or ipvlan through its lower
// device, a VF through its PCI function to the PF. ok is false, and why
// says so, when it leads to none that can be told.
func (r resolver) follow(iface string, remote netip.Addr) (nics []string, how string, ok bool) {
	ls := r.away.links
	if !ls.Links.Known() {
		return nil, fmt.Sprintf("where %s leads on the host is unknown: %s", iface, ls.Links.Why().Detail), false
	}
	var hops []string
	name := iface
	for range maxFollow {
		l, found := ls.ByName(name)
		if !found {
			return nil, fmt.Sprintf("%s is not among the links of netns %s", name, r.away.inode), false
		}
		switch {
		case l.Kind == "veth":
			return r.viaVeth(l, remote, hops)
		case l.Kind == "macvlan" || l.Kind == "macvtap" || l.Kind == "ipvlan" || l.Kind == "ipvtap" || l.Kind == "vlan":
			if !l.LinkNetNSID.Known() {
				lower, found := ls.ByIndex(l.Link)
				if !found {
					return nil, fmt.Sprintf("%s is a %s on link %d, which netns %s does not list", l.Name, l.Kind, l.Link, r.away.inode), false
				}
				hops = append(hops, fmt.Sprintf("%s %s on %s", l.Kind, l.Name, lower.Name))
				name = lower.Name
				continue
			}
			return r.onHost(l, fmt.Sprintf("%s %s on", l.Kind, l.Name), hops)
		case l.ParentBus == "pci" && l.ParentDev != "":
			return r.viaPCI(l, hops)
		case l.Loopback():
			return nil, l.Name + " is loopback", false
		}
		kind := l.Kind
		if kind == "" {
			// A VF's device is named by IFLA_PARENT_DEV_NAME, which
			// kernels before 5.17 do not send.
			kind = "a device with no parent device named (IFLA_PARENT_DEV_NAME, Linux 5.17 and later)"
		}
		return nil, fmt.Sprintf("%s (%s) leads to no interface of the host that can be followed", chain(hops, l.Name), kind), false
	}
	return nil, fmt.Sprintf("more than %d interfaces stacked below %s", maxFollow, iface), false
}

// chain is the hops so far and the last name.
func chain(hops []string, last string) string {
	if len(hops) == 0 {
		return last
	}
	return strings.Join(hops, " → ") + " → " + last
}

// hostIface names the host interface l.Link is, when it is on the
// host's side.
func (r resolver) hostIface(l nslink.Link) (string, string, bool) {
	ls := r.away.links
	switch {
	case !l.LinkNetNSID.Known():
		return "", fmt.Sprintf("%s's link %d is in netns %s itself", l.Name, l.Link, r.away.inode), false
	case !ls.InitNSID.Known():
		return "", fmt.Sprintf("whether %s's link is the host's is unknown: %s", l.Name, ls.InitNSID.Why().Detail), false
	case !ls.InHost(l):
		return "", fmt.Sprintf("%s's link %d is in netns id %s, not the host's (id %s)", l.Name, l.Link, l.LinkNetNSID, ls.InitNSID), false
	}
	name, err := r.h.IfaceByIndex(l.Link)
	if err != nil {
		return "", fmt.Sprintf("%s's link on the host: %v", l.Name, err), false
	}
	return name, "", true
}

// onHost follows a macvlan or ipvlan to its lower device on the host.
func (r resolver) onHost(l nslink.Link, lead string, hops []string) ([]string, string, bool) {
	lower, why, ok := r.hostIface(l)
	if !ok {
		return nil, why, false
	}
	hops = append(hops, fmt.Sprintf("%s the host's %s", lead, lower))
	return r.hostNICs(lower, hops)
}

// viaVeth follows a veth to its peer on the host and on through the
// host's route to remote (its default route when remote is not valid).
func (r resolver) viaVeth(l nslink.Link, remote netip.Addr, hops []string) ([]string, string, bool) {
	peer, why, ok := r.hostIface(l)
	if !ok {
		return nil, why, false
	}
	hops = append(hops, fmt.Sprintf("%s → host peer %s", l.Name, peer))
	hn, err := r.away.hostNet()
	if err != nil {
		return nil, fmt.Sprintf("%s: the host's routes: %v", chain(hops, ""), err), false
	}
	host := resolver{h: r.h, n: hn}
	var out, rwhy string
	if remote.IsValid() {
		out, rwhy, ok = host.route(remote)
		rwhy = fmt.Sprintf("route to %s %s", remote, strings.TrimPrefix(rwhy, "routed "))
	} else {
		out, rwhy, ok = host.defaultRoute()
	}
	if !ok {
		return nil, strings.Join(hops, " → ") + ": on the host, " + rwhy, false
	}
	hops = append(hops, rwhy)
	return r.hostNICs(out, hops)
}

// viaPCI follows an interface that is a PCI function (an SR-IOV VF) to
// its PF's NICs on the host, saying the function's own numa_node.
func (r resolver) viaPCI(l nslink.Link, hops []string) ([]string, string, bool) {
	f, err := r.h.Function(l.ParentDev)
	if err != nil {
		return nil, fmt.Sprintf("%s is PCI function %s: %v", chain(hops, l.Name), l.ParentDev, err), false
	}
	node := "numa_node unknown"
	if id, ok := f.Node.Get(); ok {
		node = fmt.Sprintf("numa_node %d", id)
	}
	if f.PF == "" {
		return nil, fmt.Sprintf("%s is PCI function %s (%s), no VF (no physfn): a device of its own, not a NIC of the host's namespace", chain(hops, l.Name), f.Address, node), false
	}
	if len(f.NICs) == 0 {
		return nil, fmt.Sprintf("%s is VF %s (%s) of PF %s, which has no NIC in the host's namespace", chain(hops, l.Name), f.Address, node, f.PF), false
	}
	hops = append(hops, fmt.Sprintf("%s is VF %s (its own %s) of PF %s (%s)", l.Name, f.Address, node, f.PF, strings.Join(f.NICs, ", ")))
	return f.NICs, strings.Join(hops, " → "), true
}

// hostNICs ends a chain at a host interface: the NICs below it.
func (r resolver) hostNICs(iface string, hops []string) ([]string, string, bool) {
	ns, err := r.h.IfaceNICs(iface)
	if err != nil {
		return nil, strings.Join(hops, " → ") + "; " + errText(iface, err), false
	}
	var out []string
	for _, n := range ns {
		if n.Name != iface {
			hops[len(hops)-1] += ", which is on " + n.Name
		}
		out = append(out, n.Name)
	}
	return out, strings.Join(hops, " → "), true
}

// defaultRoute returns the interface of the namespace's default route
// (IPv4's, else IPv6's): the lowest metric among the /0 routes.
func (r resolver) defaultRoute() (iface, why string, ok bool) {
	for _, fam := range []struct {
		table unknown.Value[[]proc.Route]
		any   netip.Addr
	}{{r.n.Routes4, netip.IPv4Unspecified()}, {r.n.Routes6, netip.IPv6Unspecified()}} {
		routes, has := fam.table.Get()
		if !has {
			continue
		}
		best, tie := bestRoute(routes, fam.any, func(rt proc.Route) bool { return rt.Dst.Bits() == 0 && !rt.Local && !rt.Reject && rt.Iface != "" })
		switch {
		case best == nil:
			continue
		case tie:
			return "", fmt.Sprintf("default routes through several interfaces (%s)", best.Dst), false
		}
		via := ""
		if best.Gateway.IsValid() {
			via = " via " + best.Gateway.String()
		}
		return best.Iface, fmt.Sprintf("default route %s%s dev %s", best.Dst, via, best.Iface), true
	}
	return "", "no default route", false
}

// wildcardAway is where a socket bound to every address of another
// namespace is taken to be reached: through the interface of its
// namespace's default route, followed to the host (for a veth, the
// host's default route). Its peers are not known; a pod's listener is
// reached through the way its namespace leads out.
func (r resolver) wildcardAway() path {
	const lead = "bound to every address, taken as reached through its netns's default route: "
	iface, why, ok := r.defaultRoute()
	if !ok {
		return path{kind: kindUnknown, reason: lead + why}
	}
	nics, how, ok := r.follow(iface, netip.Addr{})
	if !ok {
		return path{kind: kindUnknown, reason: lead + why + " → " + how}
	}
	return path{kind: kindNIC, nics: nics, reason: lead + why + " → " + how}
}

// followAll ends a socket's path in another namespace: each interface
// its namespace's routes and addresses named (p.reason says which and
// why) followed to the host's NICs.
func (r resolver) followAll(p path, ifaces []string, remote netip.Addr) path {
	var hows []string
	for _, iface := range ifaces {
		nics, how, ok := r.follow(iface, remote)
		hows = append(hows, how)
		if ok {
			for _, n := range nics {
				if !slices.Contains(p.nics, n) {
					p.nics = append(p.nics, n)
				}
			}
		}
	}
	p.reason = fmt.Sprintf("in netns %s: %s: %s", r.away.inode, p.reason, strings.Join(hows, "; "))
	if len(p.nics) == 0 {
		p.kind = kindUnknown
	}
	return p
}

// hostNamespace is the namespace whose interfaces the host's are
// (nslink.HostNamespace), else PID 1's as proc read it.
func hostNamespace(h *topology.Host, n *proc.Net) string {
	if ns := nslink.HostNamespace(h.FS()); ns != "" {
		return ns
	}
	return n.InitNamespace
}
