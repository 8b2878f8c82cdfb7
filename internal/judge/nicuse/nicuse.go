// Package nicuse says which NICs a watched process uses, from what the
// kernel shows of its sockets (proc.Net): a listening or unconnected
// socket bound to an address goes through the interface that owns the
// address; a connected one through the interface its route to the peer
// leaves by (and the one owning its address, when that differs: replies
// come to it there); one bound to every address may use any. Interfaces
// become NICs through topology.Host.IfaceNICs, below VLANs, bonds and
// bridges. What the files cannot tell (no sockets yet, a socket bound to a
// device with SO_BINDTODEVICE, which /proc does not show, a tree without
// the files) stays unknown and says why.
//
// A process in another network namespace than the host's is resolved in
// its own, and the interface its sockets use is followed to the host by
// the namespace's links (nslink): a veth to its peer and the host's
// route, a macvlan, ipvlan or VLAN to its lower device, a VF to its PF
// (netns.go).
//
// It sits between proc, which reads sockets and routes, and topology,
// which knows the NICs; audit, watch and the renderers take its Use.
package nicuse

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Attribution says how a process's NICs were found. What its sockets
// cannot tell is no Attribution: Use.Attribution is then unknown.
type Attribution string

// String is the attribution as JSON writes it.
func (a Attribution) String() string { return string(a) }

// Attributions.
const (
	// AttributionSockets: its sockets' addresses and routes name the NICs.
	AttributionSockets Attribution = "sockets"
	// AttributionAny: its only sockets are bound to every address (a wildcard
	// listener): any NIC may carry its traffic.
	AttributionAny Attribution = "any"
	// AttributionLoopback: its sockets stay on the host.
	AttributionLoopback Attribution = "loopback"
)

// Use is which NICs one process uses and how that was found. Its JSON
// form is part of audit's, map's and watch's documents: fields are added,
// never renamed.
type Use struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
	// NICs are the NICs its traffic goes through, by name; [] unless
	// Attribution is AttributionSockets.
	NICs []string `json:"nics"`
	// Attribution is how its NICs were found; unknown when its sockets
	// were not read, could not be, or say nothing of a NIC (it has none
	// yet, or they go through an interface with no NIC below), the
	// reason's detail saying so as How's first line does.
	Attribution unknown.Value[Attribution] `json:"attribution"`
	// Netns is the network namespace its sockets are in ("net:[INODE]")
	// when that is not PID 1's: its interfaces were followed to the
	// host's (a veth to its peer and the host's route, a macvlan or
	// ipvlan to its lower device, a VF to its PF), which How says hop
	// by hop; "" in PID 1's.
	Netns string `json:"netns,omitempty"`
	// How says what showed it, one line per kind of socket ("tcp
	// 192.0.2.2:5201 -> 192.0.2.1:40712: routed through eth0
	// (192.0.2.0/24)"), or why nothing could be told.
	How []string `json:"how"`
}

// MarshalJSON writes an unknown attribution as null with its reason.
func (u Use) MarshalJSON() ([]byte, error) {
	type plain Use
	return unknown.MarshalObject(plain(u))
}

// UnmarshalJSON restores an unknown attribution's reason.
func (u *Use) UnmarshalJSON(b []byte) error {
	type plain Use
	return unknown.UnmarshalObject(b, (*plain)(u))
}

// Known reports whether the process's NICs are known.
func (u Use) Known() bool { return unknown.Is(u.Attribution, AttributionSockets) }

// Uses reports whether the process is known to use the NIC.
func (u Use) Uses(nic string) bool { return u.Known() && slices.Contains(u.NICs, nic) }

// MayUse reports whether the process may send or receive through nic:
// the NICs its sockets name when they name some, none when they stay on
// the host, else (any NIC, unknown) every NIC.
func (u Use) MayUse(nic string) bool {
	switch a, _ := u.Attribution.Get(); a {
	case AttributionSockets:
		return slices.Contains(u.NICs, nic)
	case AttributionLoopback:
		return false
	}
	return true
}

// Summary is "eth0", "eth0, eth1", "any NIC", "loopback" or "unknown".
func (u Use) Summary() string {
	switch a, _ := u.Attribution.Get(); a {
	case AttributionSockets:
		return strings.Join(u.NICs, ", ")
	case AttributionAny:
		return "any NIC"
	}
	return u.Attribution.String()
}

// maxHow bounds the lines of How: a server with thousands of sockets
// gets its kinds of socket, not each one.
const maxHow = 6

// All returns the Use of each process, in order.
func All(h *topology.Host, procs []*proc.Process) []Use {
	out := make([]Use, 0, len(procs))
	for _, p := range procs {
		out = append(out, Of(h, p))
	}
	return out
}

// Of says which NICs of h process p uses, from p.Net.
func Of(h *topology.Host, p *proc.Process) Use {
	u := Use{PID: p.PID, Comm: p.Comm, NICs: []string{}, How: []string{}}
	n := p.Net
	switch {
	case n == nil:
		return NotRead(p.PID, p.Comm)
	case !n.Sockets.Known():
		u.Attribution = unknown.Not[Attribution](n.Sockets.Why())
		u.How = append(u.How, n.Sockets.Why().Detail)
		return u
	case len(n.Sockets.Or(nil)) == 0:
		const none = "it has no TCP or UDP sockets (yet)"
		u.Attribution = unknown.NotAs[Attribution](unknown.KindNotApplicable, none)
		u.How = append(u.How, none)
		return u
	}
	r := resolver{h: h, n: n}
	if host := hostNamespace(h, n); n.Namespace != "" && host != "" && n.Namespace != host {
		r.away = newAway(h, p)
		u.Netns = n.Namespace
	}
	var groups []*group
	byReason := map[string]*group{}
	for _, s := range n.Sockets.Or(nil) {
		sp := r.socket(s)
		g := byReason[sp.reason]
		if g == nil {
			g = &group{path: sp, first: s}
			byReason[sp.reason] = g
			groups = append(groups, g)
		}
		g.count++
	}
	a, nics := verdict(groups)
	u.NICs, u.How = nics, append(howLines(groups), n.Notes...)
	u.Attribution = unknown.Of(a)
	if a == "" {
		u.Attribution = unknown.NotAs[Attribution](unknown.KindNotReported, u.How[0])
	}
	return u
}

// NotRead is the Use of a process whose sockets were not read: its
// attribution unknown, saying so.
func NotRead(pid int, comm string) Use {
	const why = "its sockets were not read"
	return Use{PID: pid, Comm: comm, NICs: []string{}, How: []string{why},
		Attribution: unknown.NotAs[Attribution](unknown.KindNotRead, why)}
}

// group is the sockets that took one path, with the first of them.
type group struct {
	path
	first proc.Socket
	count int
}

// verdict says what the sockets make of the process: the NICs they go
// through, else any, else loopback, else "" (unknown).
func verdict(groups []*group) (Attribution, []string) {
	nics := []string{}
	kinds := map[pathKind]bool{}
	for _, g := range groups {
		kinds[g.kind] = true
		for _, n := range g.nics {
			if !slices.Contains(nics, n) {
				nics = append(nics, n)
			}
		}
	}
	slices.Sort(nics)
	switch {
	case len(nics) > 0:
		return AttributionSockets, nics
	case kinds[kindAny]:
		return AttributionAny, nics
	case len(kinds) == 1 && kinds[kindLoopback]:
		return AttributionLoopback, nics
	}
	return "", nics
}

// howLines says each group, at most maxHow, what decided the verdict
// first: those that name NICs, then those bound to every address (an
// any-NIC verdict's reason, before loopback connections), connections
// (which carry the traffic) before listeners.
func howLines(groups []*group) []string {
	rank := func(g *group) int {
		return 4*boolRank(len(g.nics) > 0) + 2*boolRank(g.kind == kindAny) + boolRank(g.first.Connected())
	}
	sorted := slices.Clone(groups)
	slices.SortStableFunc(sorted, func(a, b *group) int { return rank(b) - rank(a) })
	var out []string
	rest := 0
	for i, g := range sorted {
		if i >= maxHow {
			rest += g.count
			continue
		}
		s := g.first.String() + ": " + g.reason
		if g.count > 1 {
			s += fmt.Sprintf(" (and %d more like it)", g.count-1)
		}
		out = append(out, s)
	}
	if rest > 0 {
		out = append(out, fmt.Sprintf("and %d more sockets", rest))
	}
	return out
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pathKind is what one socket's traffic was found to do.
type pathKind int

const (
	kindNIC      pathKind = iota // through NICs of the host
	kindAny                      // bound to every address
	kindLoopback                 // stays on the host
	kindUnknown                  // cannot be told, or no NIC below
)

// path is where one socket's traffic goes, and why that was said.
type path struct {
	kind   pathKind
	nics   []string
	reason string
}

// resolver resolves sockets against one process's network view.
type resolver struct {
	h *topology.Host
	n *proc.Net
	// away is the process's namespace when it is not PID 1's: its
	// interfaces are followed to the host's; nil in PID 1's.
	away *away
}

// socket says where one socket's traffic goes.
func (r resolver) socket(s proc.Socket) path {
	local, remote := s.Local.Addr(), s.Remote.Addr()
	switch {
	case local.IsLoopback() || (s.Connected() && (remote.IsLoopback() || remote == local || r.ownsV6(remote))):
		return path{kind: kindLoopback, reason: "stays on the host (loopback)"}
	case !s.Connected() && local.IsUnspecified() && r.away != nil:
		return r.wildcardAway()
	case !s.Connected() && local.IsUnspecified():
		return path{kind: kindAny, reason: "bound to every address: any NIC (or the one SO_BINDTODEVICE names, which /proc does not show)"}
	case !s.Connected() && local.IsMulticast():
		return path{kind: kindAny, reason: "bound to a multicast group: the interface it joined on is not shown per socket"}
	}
	var ifaces, reasons, unknowns []string
	if s.Connected() {
		if iface, why, ok := r.route(remote); ok {
			ifaces, reasons = append(ifaces, iface), append(reasons, why)
		} else {
			unknowns = append(unknowns, why)
		}
	}
	if !local.IsUnspecified() {
		if iface, why, ok := r.owner(local); ok {
			if !slices.Contains(ifaces, iface) {
				ifaces, reasons = append(ifaces, iface), append(reasons, why)
			}
		} else {
			unknowns = append(unknowns, why)
		}
	}
	if len(ifaces) == 0 {
		return path{kind: kindUnknown, reason: strings.Join(unknowns, "; ")}
	}
	// What could not be told is said too: a connection whose peer has no
	// route is not grouped with a listener on the same address.
	p := path{kind: kindNIC, reason: strings.Join(append(reasons, unknowns...), "; ")}
	if r.away != nil {
		return r.followAll(p, ifaces, remote)
	}
	var notNIC []string
	for _, iface := range ifaces {
		nics, err := r.h.IfaceNICs(iface)
		if err != nil {
			notNIC = append(notNIC, errText(iface, err))
			continue
		}
		for _, n := range nics {
			if n.Name != iface {
				p.reason += fmt.Sprintf(", which is on %s", n.Name)
			}
			p.nics = append(p.nics, n.Name)
		}
	}
	if len(notNIC) > 0 {
		p.reason += "; " + strings.Join(notNIC, "; ")
	}
	if len(p.nics) == 0 {
		p.kind = kindUnknown
	}
	return p
}

// errText says why an interface is no NIC.
func errText(iface string, err error) string {
	if iface == "lo" {
		return "lo is loopback"
	}
	if errors.Is(err, topology.ErrNotANIC) {
		return iface + " has no NIC of this host below it"
	}
	return err.Error()
}

// ownsV6 reports whether an IPv6 address is one of the namespace's own.
func (r resolver) ownsV6(a netip.Addr) bool {
	if !a.Is6() {
		return false
	}
	for _, x := range r.n.Addrs6.Or(nil) {
		if x.Prefix.Addr() == a {
			return true
		}
	}
	return false
}

// owner returns the interface that owns a local address: for IPv6 the
// one if_inet6 lists it on; for IPv4, which /proc shows per interface
// nowhere (fib_trie lists local addresses without their device), the one
// whose on-link route (no gateway) holds it: the route the kernel adds
// with the address. An address with no such route (a /32, noprefixroute)
// is unknown.
func (r resolver) owner(a netip.Addr) (iface, why string, ok bool) {
	if a.Is6() {
		addrs, ok := r.n.Addrs6.Get()
		if !ok {
			return "", fmt.Sprintf("no if_inet6: which interface owns %s is unknown", a), false
		}
		var on []string
		for _, x := range addrs {
			if x.Prefix.Addr() == a && !slices.Contains(on, x.Iface) {
				on = append(on, x.Iface)
			}
		}
		switch len(on) {
		case 0:
			return "", fmt.Sprintf("%s is none of its interfaces' addresses (if_inet6)", a), false
		case 1:
			return on[0], fmt.Sprintf("%s is %s's address (if_inet6)", a, on[0]), true
		}
		return "", fmt.Sprintf("%s is the address of %s alike", a, strings.Join(on, " and ")), false
	}
	routes, ok := r.n.Routes4.Get()
	if !ok {
		return "", fmt.Sprintf("no /proc/net/route: which interface owns %s is unknown", a), false
	}
	best, tie := bestRoute(routes, a, func(rt proc.Route) bool { return !rt.Gateway.IsValid() && rt.Dst.Bits() > 0 })
	switch {
	case best == nil:
		return "", fmt.Sprintf("no on-link route holds %s: which interface owns it is unknown", a), false
	case tie:
		return "", fmt.Sprintf("%s is on the link of several interfaces (%s)", a, best.Dst), false
	}
	return best.Iface, fmt.Sprintf("%s is %s's address (%s dev %s)", a, best.Iface, best.Dst, best.Iface), true
}

// route returns the interface traffic to a peer leaves by: the longest
// prefix that holds it, the lowest metric among equals (the main table
// for IPv4: policy routing is not in /proc).
func (r resolver) route(a netip.Addr) (iface, why string, ok bool) {
	table, file := r.n.Routes4, "route"
	if a.Is6() {
		table, file = r.n.Routes6, "ipv6_route"
	}
	routes, has := table.Get()
	if !has {
		return "", fmt.Sprintf("no /proc/net/%s: the way to %s is unknown", file, a), false
	}
	best, tie := bestRoute(routes, a, func(rt proc.Route) bool { return !rt.Local })
	switch {
	case best == nil:
		return "", fmt.Sprintf("no route to %s", a), false
	case best.Reject || best.Iface == "":
		return "", fmt.Sprintf("the route to %s (%s) rejects it", a, best.Dst), false
	case tie:
		return "", fmt.Sprintf("routes to %s through several interfaces (%s)", a, best.Dst), false
	}
	via := ""
	if best.Gateway.IsValid() {
		via = " via " + best.Gateway.String()
	}
	return best.Iface, fmt.Sprintf("routed through %s (%s%s)", best.Iface, best.Dst, via), true
}

// bestRoute returns the longest-prefix, lowest-metric route holding a
// among those ok accepts, and whether another interface's route ties
// with it.
func bestRoute(routes []proc.Route, a netip.Addr, ok func(proc.Route) bool) (*proc.Route, bool) {
	var best *proc.Route
	tie := false
	for i := range routes {
		rt := &routes[i]
		if !ok(*rt) || !rt.Dst.Contains(a) {
			continue
		}
		switch {
		case best == nil, rt.Dst.Bits() > best.Dst.Bits(),
			rt.Dst.Bits() == best.Dst.Bits() && rt.Metric < best.Metric:
			best, tie = rt, false
		case rt.Dst.Bits() == best.Dst.Bits() && rt.Metric == best.Metric && rt.Iface != best.Iface:
			tie = true
		}
	}
	return best, tie
}

// AddrOwner returns the interface of n's namespace that owns the local
// address a (if_inet6 for IPv6; for IPv4 the interface whose on-link
// route holds it), with why; ok is false, and why says so, when that is
// not known.
func AddrOwner(n *proc.Net, a netip.Addr) (iface, why string, ok bool) {
	return resolver{n: n}.owner(a)
}
