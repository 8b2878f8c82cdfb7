package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// Net is what a process's sockets and its network namespace show of
// where its IP traffic goes: its TCP and UDP sockets (the socket:[inode]
// links of /proc/PID/fd found in /proc/PID/net/{tcp,tcp6,udp,udp6}), and
// the namespace's routes and IPv6 addresses (/proc/PID/net/route,
// ipv6_route, if_inet6). A file a tree lacks under /proc/PID/net is read
// from /proc/net, the namespace of the tree's own view. Which NIC that
// makes is package nicuse's to say.
type Net struct {
	// Sockets are the process's TCP and UDP sockets. SocketsKnown is false
	// when they could not be read (Why says why); true with no sockets
	// when the process has none.
	Sockets      []Socket
	SocketsKnown bool
	Why          string
	// Routes4 is the IPv4 main table (route), Routes6 every IPv6 table
	// (ipv6_route), Addrs6 every IPv6 address of an interface (if_inet6);
	// the Has fields say which of the files were read.
	Routes4, Routes6                  []Route
	Addrs6                            []IfAddr
	HasRoutes4, HasRoutes6, HasAddrs6 bool
	// Namespace is the process's network namespace as /proc/PID/ns/net
	// names it ("net:[4026531840]"), InitNamespace that of PID 1; ""
	// when the link cannot be read.
	Namespace, InitNamespace string
	// Notes says what could not be read beside the sockets (a table that
	// does not parse), for a reader to show.
	Notes []string
}

// socketTables are the tables a process's sockets are looked up in, with
// their protocol and address family.
var socketTables = []struct {
	file, proto string
	v6          bool
}{{"tcp", "tcp", false}, {"tcp6", "tcp", true}, {"udp", "udp", false}, {"udp6", "udp", true}}

// maxNetFile bounds a socket or route table: a host with a million
// sockets prints about 150 MB of tcp.
const maxNetFile = 256 << 20

// nsTables are the tables of one network namespace, read once for every
// process in it.
type nsTables struct {
	sockets           []Socket
	haveSockets       bool
	socketsErr        error
	routes4, routes6  []Route
	addrs6            []IfAddr
	has4, has6, hasA6 bool
	notes             []string
}

// netReader reads the Net of processes, each namespace's tables once.
type netReader struct {
	fsys   kfile.FS
	root   string
	cache  map[string]*nsTables // by namespace
	init   string               // PID 1's namespace, once read
	inited bool
}

func newNetReader(fsys kfile.FS, root string) *netReader {
	return &netReader{fsys: fsys, root: root, cache: map[string]*nsTables{}}
}

// ReadNet reads what process pid's sockets and network namespace show.
// What cannot be read makes the answer unknown (Net.Why), never an
// error: only a process that does not exist is, wrapping ErrNoProcess.
func ReadNet(root string, pid int) (*Net, error) {
	fsys := kfile.NewFS(root)
	base := filepath.Join(root, "proc", strconv.Itoa(pid))
	if _, err := fsys.Stat(base); err != nil {
		if kfile.IsNotExist(err) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
		}
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	return newNetReader(fsys, root).read(pid), nil
}

// read reads the Net of pid.
func (r *netReader) read(pid int) *Net {
	base := filepath.Join(r.root, "proc", strconv.Itoa(pid))
	n := &Net{}
	n.Namespace, _ = r.fsys.Readlink(base + "/ns/net")
	if !r.inited {
		r.init, _ = r.fsys.Readlink(filepath.Join(r.root, "proc", "1", "ns", "net"))
		r.inited = true
	}
	n.InitNamespace = r.init
	t := r.tables(base, n.Namespace)
	n.Routes4, n.Routes6, n.Addrs6 = t.routes4, t.routes6, t.addrs6
	n.HasRoutes4, n.HasRoutes6, n.HasAddrs6 = t.has4, t.has6, t.hasA6
	n.Notes = t.notes
	inodes, err := socketInodes(r.fsys, base+"/fd", fmt.Sprintf("/proc/%d/fd", pid))
	switch {
	case err != nil:
		n.Why = err.Error()
	case len(inodes) == 0:
		n.SocketsKnown = true // no sockets at all
	case t.socketsErr != nil:
		n.Why = t.socketsErr.Error()
	case !t.haveSockets:
		n.Why = fmt.Sprintf("no tcp, tcp6, udp or udp6 in /proc/%d/net or /proc/net: the addresses of its sockets are unknown", pid)
	default:
		n.SocketsKnown = true
		for _, s := range t.sockets {
			if inodes[s.Inode] {
				n.Sockets = append(n.Sockets, s)
			}
		}
	}
	return n
}

// tables reads the socket and route tables of the namespace the process
// folder base sees, once per namespace (ns "" is never shared).
func (r *netReader) tables(base, ns string) *nsTables {
	if t, ok := r.cache[ns]; ok && ns != "" {
		return t
	}
	t := &nsTables{}
	for _, st := range socketTables {
		p, b, err := r.netFile(base, st.file)
		if err != nil {
			if !kfile.IsNotExist(err) && t.socketsErr == nil {
				t.socketsErr = err
			}
			continue
		}
		socks, err := parseSockets(p, st.proto, st.v6, b)
		if err != nil {
			t.socketsErr = err
			continue
		}
		t.haveSockets = true
		t.sockets = append(t.sockets, socks...)
	}
	var err error
	if p, b, rerr := r.netFile(base, "route"); r.note(t, rerr) {
		if t.routes4, err = parseRoute(p, b); r.note(t, err) {
			t.has4 = true
		}
	}
	if p, b, rerr := r.netFile(base, "ipv6_route"); r.note(t, rerr) {
		if t.routes6, err = parseIPv6Route(p, b); r.note(t, err) {
			t.has6 = true
		}
	}
	if p, b, rerr := r.netFile(base, "if_inet6"); r.note(t, rerr) {
		if t.addrs6, err = parseIfInet6(p, b); r.note(t, err) {
			t.hasA6 = true
		}
	}
	r.cache[ns] = t
	return t
}

// note keeps err as a note unless it says the file is absent (IPv6
// disabled, a tree without it), and reports whether err is nil.
func (r *netReader) note(t *nsTables, err error) bool {
	if err != nil && !kfile.IsNotExist(err) {
		t.notes = append(t.notes, err.Error())
	}
	return err == nil
}

// netFile reads base/net/name, or proc/net/name when the process folder
// has no such file (a tree that keeps the namespace's files only once).
func (r *netReader) netFile(base, name string) (string, []byte, error) {
	p := filepath.Join(base, "net", name)
	b, err := r.fsys.ReadLimit(p, maxNetFile)
	if kfile.IsNotExist(err) {
		p = filepath.Join(r.root, "proc", "net", name)
		b, err = r.fsys.ReadLimit(p, maxNetFile)
	}
	return p, b, err
}

// socketInodes returns the inodes of the sockets a process holds open:
// the fd links that read "socket:[inode]". The folder is readable only by
// the process's owner and root; show names it in messages, without the
// root (a tree's path would differ from the live host's).
func socketInodes(fsys kfile.FS, dir, show string) (map[uint64]bool, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		switch {
		case kfile.IsNotExist(err):
			return nil, fmt.Errorf("no %s: which sockets it holds is unknown", show)
		case errors.Is(err, os.ErrPermission):
			return nil, fmt.Errorf("%s cannot be read (permission denied): run as root or as its owner", show)
		}
		return nil, err
	}
	out := map[uint64]bool{}
	for _, e := range ents {
		target, err := fsys.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			if kfile.IsNotExist(err) {
				continue // closed while we read
			}
			return nil, err
		}
		v, ok := strings.CutPrefix(target, "socket:[")
		if v, ok2 := strings.CutSuffix(v, "]"); ok && ok2 {
			if ino, err := strconv.ParseUint(v, 10, 64); err == nil {
				out[ino] = true
			}
		}
	}
	return out, nil
}
