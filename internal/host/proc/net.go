package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Net is what a process's sockets and its network namespace show of
// where its IP traffic goes: its TCP and UDP sockets (the socket:[inode]
// links of /proc/PID/fd found in /proc/PID/net/{tcp,tcp6,udp,udp6}), and
// the namespace's routes and IPv6 addresses (/proc/PID/net/route,
// ipv6_route, if_inet6). A file a tree lacks under /proc/PID/net is read
// from /proc/net, the namespace of the tree's own view. Which NIC that
// makes is package nicuse's to say.
type Net struct {
	// Sockets are the process's TCP and UDP sockets: none when the
	// process has none, unknown when they could not be read (the
	// reason's detail says why in words).
	Sockets unknown.Value[[]Socket]
	// Routes4 is the IPv4 main table (route), Routes6 every IPv6 table
	// (ipv6_route), Addrs6 every IPv6 address of an interface (if_inet6);
	// each unknown when its file was not read.
	Routes4, Routes6 unknown.Value[[]Route]
	Addrs6           unknown.Value[[]IfAddr]
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
	file  string
	proto Proto
	v6    bool
}{{"tcp", ProtoTCP, false}, {"tcp6", ProtoTCP, true}, {"udp", ProtoUDP, false}, {"udp6", ProtoUDP, true}}

// MaxNetFile bounds a socket or route table: 32 MB is about 215,000 TCP
// sockets (a table is read a line at a time, only the process's sockets
// kept) or 250,000 IPv4 routes (read whole). A larger one leaves the
// answer unknown, and says so, rather than costing the host; snapshot
// captures none larger.
const MaxNetFile = 32 << 20

// netReader reads the Net of processes: every process's fd links first,
// then each network namespace's tables once for all its processes, only
// their sockets parsed.
type netReader struct {
	fsys kfile.FS
	root string
}

func newNetReader(fsys kfile.FS) *netReader {
	return &netReader{fsys: fsys, root: fsys.Root()}
}

// ReadNet reads what process pid's sockets and network namespace show.
// What cannot be read makes the answer unknown (Net.Why), never an
// error: only a process that does not exist is, wrapping ErrNoProcess.
func ReadNet(fsys kfile.FS, pid int) (*Net, error) {
	root := fsys.Root()
	base := filepath.Join(root, "proc", strconv.Itoa(pid))
	if _, err := fsys.Stat(base); err != nil {
		if kfile.IsNotExist(err) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
		}
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	p := &Process{PID: pid}
	newNetReader(fsys).readAll([]*Process{p})
	return p.Net, nil
}

// readAll sets the Net of every process.
func (r *netReader) readAll(procs []*Process) {
	init, _ := r.fsys.Readlink(filepath.Join(r.root, "proc", "1", "ns", "net"))
	inodes := make([]map[uint64]bool, len(procs))
	fdErrs := make([]error, len(procs))
	byNS := map[string][]int{} // namespace -> indexes into procs
	var order []string
	for i, p := range procs {
		base := filepath.Join(r.root, "proc", strconv.Itoa(p.PID))
		p.Net = &Net{InitNamespace: init}
		p.Net.Namespace, _ = r.fsys.Readlink(base + "/ns/net")
		inodes[i], fdErrs[i] = socketInodes(r.fsys, base+"/fd", fmt.Sprintf("/proc/%d/fd", p.PID))
		key := p.Net.Namespace
		if key == "" {
			key = "\x00" + strconv.Itoa(p.PID) // unknown: never shared
		}
		if _, ok := byNS[key]; !ok {
			order = append(order, key)
		}
		byNS[key] = append(byNS[key], i)
	}
	for _, key := range order {
		idx := byNS[key]
		want := map[uint64]bool{}
		for _, i := range idx {
			for ino := range inodes[i] {
				want[ino] = true
			}
		}
		t := r.tables(procs[idx[0]].PID, want)
		for _, i := range idx {
			t.fill(procs[i].Net, procs[i].PID, inodes[i], fdErrs[i])
		}
	}
}

// nsTables is what one namespace's tables hold for the processes read.
type nsTables struct {
	sockets          map[uint64]Socket // the wanted sockets, by inode
	inOrder          []uint64          // their inodes in table order
	haveSockets      bool              // some socket table was read
	socketsErr       error
	routes4, routes6 unknown.Value[[]Route]
	addrs6           unknown.Value[[]IfAddr]
	notes            []string
}

// fill sets a process's Net from its namespace's tables: its sockets,
// or why they are unknown (fdErr: its fd links could not be read), and
// the routes and addresses.
func (t *nsTables) fill(n *Net, pid int, inodes map[uint64]bool, fdErr error) {
	n.Routes4, n.Routes6, n.Addrs6 = t.routes4, t.routes6, t.addrs6
	n.Notes = t.notes
	switch {
	case errors.Is(fdErr, os.ErrPermission):
		n.Sockets = unknown.NotAs[[]Socket](unknown.KindPermission, fdErr.Error())
	case fdErr != nil:
		n.Sockets = unknown.NotAs[[]Socket](unknown.KindFailed, fdErr.Error())
	case len(inodes) == 0:
		n.Sockets = unknown.Of([]Socket(nil)) // no sockets at all
	case t.socketsErr != nil:
		n.Sockets = unknown.NotAs[[]Socket](unknown.KindFailed, t.socketsErr.Error())
	case !t.haveSockets:
		n.Sockets = unknown.NotAs[[]Socket](unknown.KindNotCaptured, fmt.Sprintf("no tcp, tcp6, udp or udp6 in /proc/%d/net or /proc/net: the addresses of its sockets are unknown", pid))
	default:
		var socks []Socket
		for _, ino := range t.inOrder {
			if inodes[ino] {
				socks = append(socks, t.sockets[ino])
			}
		}
		n.Sockets = unknown.Of(socks)
	}
}

// tables reads the socket and route tables of the namespace process pid
// sees, parsing only the sockets whose inodes are wanted.
func (r *netReader) tables(pid int, want map[uint64]bool) *nsTables {
	base := filepath.Join(r.root, "proc", strconv.Itoa(pid))
	t := &nsTables{sockets: map[uint64]Socket{}}
	for _, st := range socketTables {
		if len(want) == 0 {
			break
		}
		socks, err := r.scanTable(base, st.file, st.proto, st.v6, want)
		if err != nil {
			if !kfile.IsNotExist(err) && t.socketsErr == nil {
				t.socketsErr = err
			}
			continue
		}
		t.haveSockets = true
		for _, s := range socks {
			if _, dup := t.sockets[s.Inode]; !dup {
				t.inOrder = append(t.inOrder, s.Inode)
			}
			t.sockets[s.Inode] = s
		}
	}
	t.routes4 = readTable(r, t, base, "route", parseRoute)
	t.routes6 = readTable(r, t, base, "ipv6_route", parseIPv6Route)
	t.addrs6 = readTable(r, t, base, "if_inet6", parseIfInet6)
	return t
}

// readTable reads and parses the net file name of base (netFile), or
// says why it is unknown; a failure other than its absence is a note.
func readTable[T any](r *netReader, t *nsTables, base, name string, parse func(string, []byte) (T, error)) unknown.Value[T] {
	p, b, err := r.netFile(base, name)
	if !r.note(t, err) {
		switch {
		case kfile.IsNotExist(err) && r.fsys.Live():
			return unknown.NotAs[T](unknown.KindKernel, "no /proc/net/"+name)
		case kfile.IsNotExist(err):
			return unknown.NotAs[T](unknown.KindNotCaptured, "no /proc/net/"+name)
		}
		return unknown.NotAs[T](unknown.KindFailed, "/proc/net/"+name+" not read")
	}
	v, err := parse(p, b)
	if !r.note(t, err) {
		return unknown.NotAs[T](unknown.KindMalformed, "/proc/net/"+name+" does not parse")
	}
	return unknown.Of(v)
}

// note keeps err as a note unless it says the file is absent (IPv6
// disabled, a tree without it), and reports whether err is nil.
func (r *netReader) note(t *nsTables, err error) bool {
	if err != nil && !kfile.IsNotExist(err) {
		t.notes = append(t.notes, err.Error())
	}
	return err == nil
}

// netPath is base/net/name, or proc/net/name when the process folder has
// no such file (a tree that keeps the namespace's files only once).
func (r *netReader) netPath(base, name string) string {
	p := filepath.Join(base, "net", name)
	if _, err := r.fsys.Lstat(p); kfile.IsNotExist(err) {
		return filepath.Join(r.root, "proc", "net", name)
	}
	return p
}

// netFile reads a route or address file whole (netPath).
func (r *netReader) netFile(base, name string) (string, []byte, error) {
	p := r.netPath(base, name)
	b, err := r.fsys.ReadLimit(p, MaxNetFile)
	return p, b, err
}

// scanTable reads a socket table (netPath) a line at a time and returns
// the sockets want holds.
func (r *netReader) scanTable(base, name string, proto Proto, v6 bool, want map[uint64]bool) ([]Socket, error) {
	p := r.netPath(base, name)
	f, err := r.fsys.OpenFile(p, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := newSocketScanner(p, proto, v6, want)
	br := bufio.NewReaderSize(io.LimitReader(f, MaxNetFile+1), 64<<10)
	var read int64
	for {
		line, err := br.ReadSlice('\n')
		read += int64(len(line))
		if read > MaxNetFile {
			return nil, fmt.Errorf("read %s: %w (over %d MB)", p, kfile.ErrTooLarge, MaxNetFile>>20)
		}
		if err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("read %s: line %d is longer than 64 kB", p, sc.lineNo+1)
		}
		if len(line) > 0 {
			if lerr := sc.line(bytes.TrimSuffix(line, []byte("\n"))); lerr != nil {
				return nil, lerr
			}
		}
		if err == io.EOF {
			return sc.out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
	}
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
			if kfile.IsNotExist(err) || errors.Is(err, syscall.EINVAL) {
				continue // closed while we read, or not a link (a tree's odd entry)
			}
			if errors.Is(err, os.ErrPermission) {
				return nil, fmt.Errorf("%s cannot be read (permission denied): run as root or as its owner", show)
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
