package steer

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// sysctls are the kernel-wide knobs read into Host.Sysctls.
var sysctls = []string{"rps_sock_flow_entries", "busy_poll", "busy_read"}

// The parts a source answers, for a root that has none.
var sourceParts = []Part{
	PartDriver, PartChannels, PartRings, PartRSS, PartContexts, PartFeatures, PartCoalesce,
	PartRules, PartQueues, PartNAPI, PartQStats,
}

// Read reads the steering of the interfaces names on the root fsys. The
// parts that are not files come from the live kernel (netlink and the
// ethtool ioctl) on the live root, from the first tree source the root
// holds otherwise (a snapshot's recorded replies, a sosreport's ethtool
// text), and are unknown with unknown.KindNotCaptured when it holds none; the
// sysfs and procfs knobs come from the root's files whatever the source.
// An interface the root's /sys/class/net does not have is an error.
func Read(fsys kfile.FS, names []string) (*Host, error) {
	return ReadWith(fsys, names, ReadOptions{})
}

// ReadOptions is what the caller of ReadWith has read of the root
// already, so that the root is not asked again.
type ReadOptions struct {
	// NoClassNet says the root has no /sys/class/net (topology.Read
	// listed it and inferred the NICs from IRQ names instead): an
	// interface without a folder there is a capture's, as Read would
	// find by asking.
	NoClassNet bool
	// Folders are the interfaces whose /sys/class/net folder the caller
	// found (topology.Read resolved it): their folder is not asked for.
	Folders map[string]bool
}

// ReadWith is Read given what the caller read of the root already.
func ReadWith(fsys kfile.FS, names []string, opts ReadOptions) (*Host, error) {
	src, err := openSource(fsys)
	if err != nil {
		return nil, err
	}
	defer src.close()
	return readWith(fsys, names, src, opts)
}

// Record reads the live host's steering of names as Read does, and
// hands every netlink and ioctl answer to put under the relative path a
// root keeps it at (irqnuma/steer/IF/KEY, see recorded.go), so that a
// root holding these files reads as the live host did.
func Record(fsys kfile.FS, names []string, put func(rel string, data []byte) error) error {
	if !fsys.Live() {
		return fmt.Errorf("record steering: %s is not the live root", fsys.Root())
	}
	rec := &recorder{live: ethnl.NewLive(), put: put}
	src := newNLSource(rec, SourceNetlink)
	defer src.close()
	if _, err := readWith(fsys, names, src, ReadOptions{}); err != nil {
		return err
	}
	return rec.err
}

// ReadNIC reads one interface's steering as Read does on the live root,
// asking through a: the connection a caller already holds (a writer
// reads back what it set through the socket it set it on). a is left
// open.
func ReadNIC(fsys kfile.FS, a ethnl.Asker, name string) (*NIC, error) {
	h, err := readWith(fsys, []string{name}, newNLSource(a, SourceNetlink), ReadOptions{})
	if err != nil {
		return nil, err
	}
	return h.NICs[0], nil
}

// openSource picks where the non-file parts come from.
func openSource(fsys kfile.FS) (source, error) {
	if fsys.Live() {
		return newNLSource(ethnl.NewLive(), SourceNetlink), nil
	}
	for _, t := range treeSources {
		if s, ok := t.open(fsys); ok {
			return s, nil
		}
	}
	return noSource{}, nil
}

// noSource is a root without any answers: every part not captured.
type noSource struct{}

func (noSource) name() Source { return SourceNone }
func (noSource) close() error { return nil }
func (noSource) read(n *NIC) {
	for _, p := range sourceParts {
		n.SetUnknown(p, unknown.Reason{Kind: unknown.KindNotCaptured, Detail: "the root holds no netlink, ioctl or ethtool capture"})
	}
}

func readWith(fsys kfile.FS, names []string, src source, opts ReadOptions) (*Host, error) {
	h := &Host{Source: src.name()}
	var err error
	if h.Sysctls, err = readSysctls(fsys); err != nil {
		return nil, err
	}
	class := classNet{asked: opts.NoClassNet}
	for _, name := range names {
		n := &NIC{Name: name}
		sq, err := readSysfs(fsys, n, &class, opts.Folders[name])
		if err != nil {
			return nil, err
		}
		src.read(n)
		n.bound(sq)
		h.NICs = append(h.NICs, n)
	}
	return h, nil
}

// ErrUnknownInterface is wrapped by Read's error for a name the root's
// /sys/class/net does not have. It is not a usage error: a NIC the host
// has may have no network interface (topology names such a NIC by its
// PCI address), and a name the host does not have at all is
// topology.ErrUnknownNIC, which callers look up first.
var ErrUnknownInterface = errors.New("no such interface")

// readSysfs reads /sys/class/net/IF: the index, the NAPI knobs and how
// many queues the folder holds.
//
// class remembers, across the NICs of one reading, whether the root has
// /sys/class/net, asked once; found says the caller found the folder
// already (ReadOptions.Folders).
func readSysfs(fsys kfile.FS, n *NIC, class *classNet, found bool) (sysQueues, error) {
	if n.Name == "" || n.Name == "." || n.Name == ".." || strings.ContainsAny(n.Name, "/: \t\n") {
		return sysQueues{}, fmt.Errorf("interface %q: %w", n.Name, ErrUnknownInterface)
	}
	if class.asked && !class.has && !fsys.Live() {
		return sysQueues{}, nil // a capture without /sys/class/net: its source says what it has
	}
	dir := fsys.Path("sys/class/net", n.Name)
	// The folder's first file answers whether it is there; only without
	// it is the folder itself asked.
	idx, err := readInt(fsys, dir+"/ifindex", 1, 1<<31-1)
	if err != nil {
		return sysQueues{}, err
	}
	if idx != nil {
		n.Index = int(*idx)
	} else if !found {
		if _, err := fsys.Stat(dir); err != nil {
			if !kfile.IsNotExist(err) {
				return sysQueues{}, err
			}
			if class.present(fsys) || fsys.Live() {
				return sysQueues{}, fmt.Errorf("interface %s: %w (%s)", n.Name, ErrUnknownInterface, dir)
			}
			return sysQueues{}, nil // a capture without /sys/class/net: its source says what it has
		}
	}
	if err := readKnobs(fsys, dir, &n.Sysfs); err != nil {
		return sysQueues{}, err
	}
	return readQueues(fsys, dir, &n.Sysfs)
}

func readKnobs(fsys kfile.FS, dir string, s *Sysfs) error {
	t, err := readInt(fsys, dir+"/threaded", 0, 1<<31-1)
	if err != nil {
		return err
	}
	if t != nil {
		v := int(*t)
		s.Threaded = &v
	}
	d, err := readInt(fsys, dir+"/napi_defer_hard_irqs", 0, 1<<32-1)
	if err != nil {
		return err
	}
	if d != nil {
		v := uint32(*d)
		s.DeferHardIRQs = &v
	}
	g, err := readUint64(fsys, dir+"/gro_flush_timeout")
	if err != nil {
		return err
	}
	s.GROFlushTimeout = g
	return nil
}

// readQueues counts the rx-N and tx-N folders of IF/queues and reads
// each rx queue's rps_flow_cnt.
func readQueues(fsys kfile.FS, dir string, s *Sysfs) (sysQueues, error) {
	var sq sysQueues
	ents, err := fsys.ReadDir(dir + "/queues")
	if kfile.IsNotExist(err) {
		return sq, nil
	}
	if err != nil {
		return sq, err
	}
	for _, e := range ents {
		if tq, ok := strings.CutPrefix(e.Name(), "tx-"); ok && queueIndex(tq) {
			sq.tx++
		}
		q, ok := strings.CutPrefix(e.Name(), "rx-")
		if !ok || !queueIndex(q) {
			continue
		}
		sq.rx++
		i, _ := strconv.Atoi(q)
		v, err := readInt(fsys, dir+"/queues/"+e.Name()+"/rps_flow_cnt", 0, 1<<32-1)
		if err != nil {
			return sq, err
		}
		if v != nil {
			if s.RPSFlowCnt == nil {
				s.RPSFlowCnt = map[int]uint32{}
			}
			s.RPSFlowCnt[i] = uint32(*v)
		}
	}
	return sq, nil
}

// queueIndex reports whether s is a queue folder's index: decimal, no
// sign, no leading zero.
func queueIndex(s string) bool {
	i, err := strconv.Atoi(s)
	return err == nil && i >= 0 && strconv.Itoa(i) == s
}

// readSysctls reads /proc/sys/net/core's steering knobs the root has.
func readSysctls(fsys kfile.FS) (map[string]int64, error) {
	var out map[string]int64
	for _, name := range sysctls {
		v, err := readInt(fsys, fsys.Path("proc/sys/net/core", name), -1<<31, 1<<31-1)
		if err != nil {
			return nil, err
		}
		if v != nil {
			if out == nil {
				out = map[string]int64{}
			}
			out[name] = *v
		}
	}
	return out, nil
}

// readInt reads a decimal attribute in [lo, hi]; nil when the file is
// absent.
func readInt(fsys kfile.FS, p string, lo, hi int64) (*int64, error) {
	s, err := fsys.String(p)
	if kfile.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < lo || v > hi {
		return nil, kfile.Malformedf(p, "not an integer in [%d, %d]: %q", lo, hi, clipString(s))
	}
	return &v, nil
}

func readUint64(fsys kfile.FS, p string) (*uint64, error) {
	s, err := fsys.String(p)
	if kfile.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return nil, kfile.Malformedf(p, "not an unsigned integer: %q", clipString(s))
	}
	return &v, nil
}

// classNet is whether a root has /sys/class/net, once asked (or told:
// ReadOptions.NoClassNet).
type classNet struct {
	asked, has bool
}

// present says whether fsys has /sys/class/net, asking the first time.
func (c *classNet) present(fsys kfile.FS) bool {
	if !c.asked {
		_, err := fsys.Stat(fsys.Path("sys/class/net"))
		c.asked, c.has = true, err == nil
	}
	return c.has
}
