package snapshot

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/pci"
)

// What irqnuma reads, by reader. These lists are held to the readers by
// TestSnapshotHoldsWhatReadersRead (cmd/irqnuma/snapshot_trace_test.go):
// it runs every reading command on each host tree and a real capture
// with kfile.Trace on, and fails naming any file, folder or link a
// command touched that the snapshot answers for differently (missing,
// or present where the tree has none). A reader that reads a new file
// fails it until the file is captured here.
var (
	// Files read whole (interrupts.Read, topology.ReadCmdline, the
	// watch sampler; osrelease tells irq.Load whether the kernel marks
	// managed IRQs read-only).
	procFiles = []string{
		"proc/interrupts", "proc/cmdline", "proc/stat", "proc/softirqs", "proc/net/softnet_stat",
		"proc/sys/kernel/osrelease",
		// irq.Load: its mode, the one writable /proc/irq file a kernel
		// always has, says whether the tree kept the kernel's modes.
		"proc/irq/default_smp_affinity",
		// zc.Check: whether io_uring may be used, and by whom.
		"proc/sys/kernel/io_uring_disabled", "proc/sys/kernel/io_uring_group",
		// steer.Read: the kernel-wide steering knobs.
		"proc/sys/net/core/rps_sock_flow_entries", "proc/sys/net/core/busy_poll", "proc/sys/net/core/busy_read",
	}
	// steer.Read, per /sys/class/net entry.
	netdevFiles = []string{"ifindex", "threaded", "napi_defer_hard_irqs", "gro_flush_timeout"}
	// Folders whose existence or listing the readers use even when
	// empty: /proc/irq, the NIC class, IOMMU units and groups, nodes.
	folders = []string{
		"proc/irq", "sys/class/net", "sys/class/iommu", "sys/kernel/iommu_groups",
		"sys/devices/system/node", "sys/devices/system/cpu", "sys/bus/pci/devices",
	}
	// irq.ReadInfo's, per /proc/irq/N, and affinity_hint, the driver's
	// suggestion, which nothing judges yet but a reader of the capture may.
	irqFiles = []string{
		"smp_affinity_list", "smp_affinity", "effective_affinity_list", "effective_affinity",
		"node", "affinity_hint",
	}
	// topology.readCPUs, readNodes and Host.Governor.
	cpuPatterns = []string{
		"sys/devices/system/cpu/online", "sys/devices/system/cpu/possible",
		"sys/devices/system/cpu/offline", "sys/devices/system/cpu/isolated",
		"sys/devices/system/cpu/nohz_full",
		"sys/devices/system/cpu/cpu[0-9]*",
		"sys/devices/system/cpu/cpu[0-9]*/online",
		"sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list",
		"sys/devices/system/cpu/cpu[0-9]*/topology/physical_package_id",
		"sys/devices/system/cpu/cpu[0-9]*/cache/index3/shared_cpu_list",
		"sys/devices/system/cpu/cpu[0-9]*/cache/index3/level",
		"sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor",
		"sys/devices/system/node/online",
		"sys/devices/system/node/node[0-9]*/cpulist",
		"sys/devices/system/node/node[0-9]*/cpumap",
		"sys/devices/system/node/node[0-9]*/meminfo",
		"sys/devices/system/node/node[0-9]*/distance",
	}
	// Entries that are read as links or listed, never followed: a node's
	// cpuN links (an offline CPU's node), IOMMU units, IOMMU groups.
	entryPatterns = []string{
		"sys/devices/system/node/node[0-9]*/cpu[0-9]*",
		"sys/class/iommu/*",
		"sys/kernel/iommu_groups/*",
	}
	// proc.ReadNet, per captured process: its namespace's socket and
	// route tables.
	netFiles = []string{"tcp", "tcp6", "udp", "udp6", "route", "ipv6_route", "if_inet6"}
	// Per PCI function (topology NICs, inferred NICs, IOMMU groups, and
	// the PCI names of the topology view).
	pciFiles = []string{"numa_node", "local_cpulist", "vendor", "device", "modalias", "revision"}
	pciLinks = []string{"driver", "iommu_group"}
	// irqbalance.Read's environment files and irqnuma's own
	// state files (irq restore). Of pci.ids, the host's own entries are
	// captured (pciIDs).
	otherPatterns = []string{
		"usr/lib/irqbalance/defaults.env", "etc/default/irqbalance", "etc/sysconfig/irqbalance",
		"var/lib/irqnuma/state-*.json",
	}
)

// capturer walks a root and feeds what irqnuma reads to an archive
// writer.
type capturer struct {
	root  string
	fs    kfile.FS // the root's: every read stays inside it
	opts  Options
	w     *archive
	links map[string]string // real path -> target, recorded
	dirs  map[string]bool   // recorded folders
	files map[string]bool   // recorded files
	notes []string
	noted map[string]bool
}

// capture records everything irqnuma reads under the root.
func (c *capturer) capture() error {
	for _, d := range folders {
		if err := c.dir(d); err != nil {
			return err
		}
	}
	for _, f := range procFiles {
		if err := c.file(f); err != nil {
			return err
		}
	}
	if err := c.irqs(); err != nil {
		return err
	}
	for _, p := range cpuPatterns {
		for _, m := range c.expand(p) {
			if err := c.file(m); err != nil {
				return err
			}
		}
	}
	for _, p := range entryPatterns {
		for _, m := range c.expand(p) {
			if err := c.entry(m); err != nil {
				return err
			}
		}
	}
	if err := c.nics(); err != nil {
		return err
	}
	for _, dev := range c.expand("sys/bus/pci/devices/*") {
		if err := c.pciFunction(dev); err != nil {
			return err
		}
	}
	for _, p := range otherPatterns {
		for _, m := range c.expand(p) {
			if err := c.file(m); err != nil {
				return err
			}
		}
	}
	if err := c.pciIDs(); err != nil {
		return err
	}
	return c.processes()
}

// irqs records /proc/irq/N: the files irq.ReadInfo reads, and the action
// folders that name an IRQ /proc/interrupts does not.
func (c *capturer) irqs() error {
	for _, d := range c.expand("proc/irq/[0-9]*") {
		if err := c.dir(d); err != nil {
			return err
		}
		for _, f := range irqFiles {
			if err := c.file(d + "/" + f); err != nil {
				return err
			}
		}
		for _, e := range c.expand(d + "/*") {
			if fi, err := c.fs.Lstat(c.abs(e)); err == nil && fi.IsDir() {
				if err := c.dir(e); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// nics records what topology.readNIC reads of each /sys/class/net entry:
// the link, the netdev's device link, speed, operstate and queue
// steering, and the locality, ids and msi_irqs of the device's PCI
// function (or of the device itself when it is not on PCI); then what
// the kernel answers past them (kernelAnswers).
func (c *capturer) nics() error {
	for _, link := range c.expand("sys/class/net/*") {
		if err := c.entry(link); err != nil {
			return err
		}
		netdev, err := c.resolve(link)
		if err != nil {
			continue // noted by entry
		}
		if err := c.dir(netdev); err != nil {
			return err
		}
		if err := c.steerFiles(netdev); err != nil {
			return err
		}
		// topology.IfaceNICs: the interfaces below a VLAN, bond or bridge.
		for _, l := range c.expand(netdev + "/lower_*") {
			if err := c.entry(l); err != nil {
				return err
			}
		}
		if err := c.entry(netdev + "/device"); err != nil {
			return err
		}
		dev, err := c.resolve(netdev + "/device")
		if err != nil {
			c.skip(netdev+"/device", err)
			continue
		}
		for _, f := range []string{"speed", "operstate"} {
			if err := c.file(netdev + "/" + f); err != nil {
				return err
			}
		}
		if err := c.queues(netdev); err != nil {
			return err
		}
		if err := c.entry(dev + "/driver"); err != nil {
			return err
		}
		loc, onPCI := dev, false
		for p := dev; p != "" && strings.HasPrefix(p, "sys/devices/"); p = parent(p) {
			if pci.IsAddress(path.Base(p)) {
				loc, onPCI = p, true
				break
			}
		}
		if err := c.pciFunction(loc); err != nil {
			return err
		}
		if onPCI {
			for _, m := range c.expand(loc + "/msi_irqs/*") {
				if err := c.file(m); err != nil {
					return err
				}
			}
		}
	}
	return c.kernelAnswers()
}

// kernelAnswers records what the kernel says past the files: of each
// interface's steering (steering), and of the host namespace's links,
// their XDP programs (hostNetns).
func (c *capturer) kernelAnswers() error {
	if err := c.steering(); err != nil {
		return err
	}
	return c.hostNetns()
}

// queues records each queue's folder and steering file: rps_cpus of an
// rx queue, xps_cpus of a tx queue.
func (c *capturer) queues(netdev string) error {
	for _, p := range []string{"queues/rx-*", "queues/tx-*"} {
		for _, q := range c.expand(netdev + "/" + p) {
			files := []string{"rps_cpus"}
			if strings.HasPrefix(path.Base(q), "tx-") {
				files = []string{"xps_cpus"}
			}
			if err := c.dir(q); err != nil {
				return err
			}
			for _, f := range files {
				if err := c.file(q + "/" + f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// steerFiles records what steer.Read reads of every interface, virtual
// ones too: its index, NAPI knobs and rx queues' rps_flow_cnt.
func (c *capturer) steerFiles(netdev string) error {
	files := append([]string(nil), netdevFiles...)
	for _, q := range c.expand(netdev + "/queues/rx-*") {
		files = append(files, strings.TrimPrefix(q, netdev+"/")+"/rps_flow_cnt")
	}
	for _, f := range files {
		if err := c.file(netdev + "/" + f); err != nil {
			return err
		}
	}
	return nil
}

// steering records, on the live root, what the kernel answers over
// netlink and the ethtool ioctl about every interface's steering
// (steer.Record), under irqnuma/steer/: reading the snapshot replays it.
// A tree has no kernel to ask; what it holds of irqnuma/steer/ (a
// snapshot's) is copied as it is.
func (c *capturer) steering() error {
	if !c.fs.Live() {
		return c.copyTree(steer.RecordDir)
	}
	var names []string
	for _, link := range c.expand("sys/class/net/*") {
		names = append(names, path.Base(link))
	}
	if len(names) == 0 {
		return nil
	}
	return steer.Record(c.fs, names, c.put)
}

// put records data, which the kernel answered on the live root, as the
// file rel.
func (c *capturer) put(rel string, data []byte) error {
	if err := c.addDir(parent(rel)); err != nil {
		return err
	}
	c.files[rel] = true
	return c.w.file(rel, data, 0o644)
}

// copyTree records every folder and file under rel.
func (c *capturer) copyTree(rel string) error {
	fi, err := c.fs.Lstat(c.abs(rel))
	if err != nil || !fi.IsDir() {
		return nil
	}
	if err := c.dir(rel); err != nil {
		return err
	}
	for _, e := range c.expand(rel + "/*") {
		if err := c.copyTree(e); err != nil {
			return err
		}
		if fi, err := c.fs.Lstat(c.abs(e)); err == nil && fi.Mode().IsRegular() {
			if err := c.file(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// pciFunction records a device folder's locality and id attributes and
// its driver and iommu_group links, with the group's type.
func (c *capturer) pciFunction(dir string) error {
	for _, f := range pciFiles {
		if err := c.file(dir + "/" + f); err != nil {
			return err
		}
	}
	for _, l := range pciLinks {
		if err := c.entry(dir + "/" + l); err != nil {
			return err
		}
	}
	return c.file(dir + "/iommu_group/type")
}

// processes records every process's comm (proc.FindByComm reads them
// all), irqbalance's command line and environment, the groups the
// options name, and what proc.Read reads of the processes the options
// name (those in the groups too) and of the napi
// kthreads (audit.ReadSteer reads them).
func (c *capturer) processes() error {
	want, err := c.wanted()
	if err != nil {
		return err
	}
	for _, d := range c.expand("proc/[0-9]*") {
		pid := path.Base(d)
		if n, err := strconv.Atoi(pid); err != nil || n <= 0 {
			continue
		}
		fi, err := c.fs.Lstat(c.abs(d))
		if err != nil || !fi.IsDir() {
			continue // gone, or /proc/self-like links
		}
		comm, err := c.fs.String(c.abs(d + "/comm"))
		if err != nil {
			continue // exited while we walked
		}
		if err := c.file(d + "/comm"); err != nil {
			return err
		}
		// A napi/IF-ID kernel thread of threaded NAPI: the audit reads
		// its affinity and last CPU.
		full := want[pid] || strings.HasPrefix(comm, "napi/")
		for _, name := range c.opts.Processes.Comms {
			full = full || comm == name
		}
		if comm == "irqbalance" {
			for _, f := range []string{"cmdline", "environ"} {
				if err := c.file(d + "/" + f); err != nil {
					return err
				}
			}
		}
		if full {
			if err := c.process(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// process records what proc.Read and ReadThreadStats read, and what
// proc.ReadNet reads for nicuse: the fd links to sockets (no other fd),
// the network namespace link, and the namespace's socket and route
// tables; in another namespace than the host's, its links (netns).
func (c *capturer) process(d string) error {
	for _, f := range []string{"status", "stat", "numa_maps", "cmdline"} {
		if err := c.file(d + "/" + f); err != nil {
			return err
		}
	}
	for _, t := range c.expand(d + "/task/[0-9]*") {
		for _, f := range []string{"stat", "status", "comm"} {
			if err := c.file(t + "/" + f); err != nil {
				return err
			}
		}
	}
	if err := c.dir(d + "/fd"); err != nil {
		return err
	}
	for _, fd := range c.expand(d + "/fd/[0-9]*") {
		if target, err := c.fs.Readlink(c.abs(fd)); err == nil && strings.HasPrefix(target, "socket:[") {
			if err := c.entry(fd); err != nil {
				return err
			}
		}
	}
	for _, l := range []string{d + "/ns/net", "proc/1/ns/net"} {
		if err := c.entry(l); err != nil {
			return err
		}
	}
	if err := c.netns(d); err != nil {
		return err
	}
	for _, f := range netFiles {
		if err := c.fileUpTo(d+"/net/"+f, proc.MaxNetFile); err != nil {
			return err
		}
	}
	return nil
}

// file records a regular file (or folder) at a logical path, following
// links. An absent path is left out; one that cannot be read is left out
// with a note. Only archive errors and size limits stop the capture.
func (c *capturer) file(rel string) error {
	return c.fileUpTo(rel, 0)
}

// fileUpTo is file for a file irqnuma reads only up to max bytes (0:
// the snapshot's bound): one larger is left out with a note, as its
// reader leaves it unread.
func (c *capturer) fileUpTo(rel string, max int64) error {
	real, err := c.resolve(rel)
	if err != nil {
		c.skip(rel, err)
		return nil
	}
	fi, err := os.Lstat(c.abs(real))
	if err != nil {
		c.skip(rel, err)
		return nil
	}
	switch {
	case fi.IsDir():
		return c.addDir(real)
	case !fi.Mode().IsRegular():
		c.note(fmt.Sprintf("/%s not captured: not a regular file", rel))
		return nil
	}
	if c.files[real] {
		return nil
	}
	// Pseudo-files say 0 or 4096 whatever they hold: read to the end.
	limit := c.opts.maxFile()
	if max > 0 {
		limit = min(limit, max)
	}
	content, err := readContent(c.fs, c.abs(real), limit)
	if err != nil {
		if errors.Is(err, kfile.ErrTooLarge) && max > 0 {
			c.note(fmt.Sprintf("/%s not captured: larger than %d MB, which irqnuma does not read", rel, max>>20))
			return nil
		}
		if errors.Is(err, kfile.ErrTooLarge) {
			return fmt.Errorf("/%s: %w", rel, ErrTooLarge)
		}
		c.skip(rel, err)
		return nil
	}
	defer content.close()
	if err := c.addDir(parent(real)); err != nil {
		return err
	}
	c.files[real] = true
	return c.w.fileFrom(real, content.r, content.size, fi.Mode().Perm())
}

// spillAt is the size past which a file's content goes to a temporary
// file instead of memory: a socket table of 200,000 lines is tens of MB,
// and the archive needs its size before its bytes.
const spillAt = 1 << 20

// content is a file's bytes as read once: in memory, or spilled.
type content struct {
	r     io.Reader
	size  int64
	spill *os.File
}

func (c content) close() {
	if c.spill != nil {
		c.spill.Close()
		os.Remove(c.spill.Name())
	}
}

// readContent reads path to its end, once, failing with kfile.ErrTooLarge
// past limit bytes. Up to spillAt bytes stay in memory; past that, what
// was read and the rest go to a temporary file, so the snapshot's memory
// does not grow with the largest file it captures (a pseudo-file such as
// a 1,000-CPU host's /proc/interrupts is costly to read, and read twice
// may differ from the size the archive was told).
func readContent(fsys kfile.FS, path string, limit int64) (content, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY)
	if err != nil {
		return content{}, err
	}
	defer f.Close()
	inMemory := min(limit, spillAt)
	head, err := io.ReadAll(io.LimitReader(f, inMemory+1))
	switch {
	case err != nil:
		return content{}, err
	case int64(len(head)) <= inMemory:
		return content{r: bytes.NewReader(head), size: int64(len(head))}, nil
	case limit <= spillAt:
		return content{}, fmt.Errorf("%s: %w", path, kfile.ErrTooLarge)
	}
	spill, err := os.CreateTemp("", "irqnuma-snapshot-*")
	if err != nil {
		return content{}, fmt.Errorf("spill %s: %w", path, err)
	}
	c := content{spill: spill}
	if _, err := spill.Write(head); err != nil {
		c.close()
		return content{}, fmt.Errorf("spill %s: %w", path, err)
	}
	n, err := io.Copy(spill, io.LimitReader(f, limit+1-int64(len(head))))
	n += int64(len(head))
	switch {
	case err != nil:
		c.close()
		return content{}, fmt.Errorf("read %s: %w", path, err)
	case n > limit:
		c.close()
		return content{}, fmt.Errorf("%s: %w", path, kfile.ErrTooLarge)
	}
	if _, err := spill.Seek(0, io.SeekStart); err != nil {
		c.close()
		return content{}, fmt.Errorf("spill %s: %w", path, err)
	}
	c.r, c.size = spill, n
	return c, nil
}

// entry records a path's last component as it is (a link stays a link,
// not followed), with links in its folders followed.
func (c *capturer) entry(rel string) error {
	dir, err := c.resolve(parent(rel))
	if err != nil {
		c.skip(rel, err)
		return nil
	}
	real := path.Join(dir, path.Base(rel))
	fi, err := os.Lstat(c.abs(real))
	if err != nil {
		c.skip(rel, err)
		return nil
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if _, err := c.recordLink(real); err != nil {
			// A link that leaves the root, or one only its owner may read
			// (another user's /proc/PID/ns/net), is left out with a note.
			if errors.Is(err, errLeavesRoot) || errors.Is(err, fs.ErrPermission) {
				c.skip(rel, err)
				return nil
			}
			return err
		}
		return nil
	case fi.IsDir():
		return c.addDir(real)
	}
	return c.file(real)
}

// dir records a folder at a logical path, following links.
func (c *capturer) dir(rel string) error {
	real, err := c.resolve(rel)
	if err != nil {
		c.skip(rel, err)
		return nil
	}
	fi, err := os.Stat(c.abs(real))
	if err != nil || !fi.IsDir() {
		return nil
	}
	return c.addDir(real)
}

// addDir records a real folder and its parents, once each.
func (c *capturer) addDir(real string) error {
	if real == "" || c.dirs[real] {
		return nil
	}
	if err := c.addDir(parent(real)); err != nil {
		return err
	}
	c.dirs[real] = true
	return c.w.dir(real)
}

// pciIDs records, of the host's pci.ids database (the first of
// topology.PCIIDsPaths it has), the vendor and device lines of the PCI
// functions captured, in the database's order, so topology names the
// NICs from the snapshot as it does on the host: a few hundred bytes
// instead of the 1.4 MB file.
func (c *capturer) pciIDs() error {
	want := map[string]bool{} // "8086" and "8086 1572"
	for _, dev := range c.expand("sys/bus/pci/devices/*") {
		v, err1 := c.fs.String(c.abs(dev + "/vendor"))
		d, err2 := c.fs.String(c.abs(dev + "/device"))
		if err1 != nil || err2 != nil {
			continue
		}
		v, d = strings.TrimPrefix(strings.TrimSpace(v), "0x"), strings.TrimPrefix(strings.TrimSpace(d), "0x")
		want[v], want[v+" "+d] = true, true
	}
	for _, p := range topology.PCIIDsPaths {
		data, err := c.fs.ReadLimit(c.abs(p), 64<<20)
		if err != nil {
			continue
		}
		if strings.HasSuffix(p, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				c.note(fmt.Sprintf("/%s not captured: %v", p, err))
				return nil
			}
			if data, err = io.ReadAll(io.LimitReader(zr, 64<<20)); err != nil {
				c.note(fmt.Sprintf("/%s not captured: %v", p, err))
				return nil
			}
			p = strings.TrimSuffix(p, ".gz")
		}
		if err := c.addDir(parent(p)); err != nil {
			return err
		}
		return c.w.file(p, filterPCIIDs(data, want, "/"+p), 0o644)
	}
	return nil
}

// filterPCIIDs keeps the vendor lines ("8086  Intel Corporation") and
// device lines ("\t1572  Ethernet Controller X710") of pci.ids that want
// names, under a comment saying where they come from.
func filterPCIIDs(data []byte, want map[string]bool, from string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The entries of %s for this host's PCI functions (irqnuma snapshot).\n", from)
	vendor := ""
	for line := range bytes.Lines(data) {
		switch {
		case len(line) > 4 && line[0] != '\t' && line[0] != '#':
			vendor = string(line[:4])
			if want[vendor] {
				b.Write(line)
			}
		case len(line) > 5 && line[0] == '\t' && line[1] != '\t':
			if want[vendor] && want[vendor+" "+string(line[1:5])] {
				b.Write(line)
			}
		}
	}
	return b.Bytes()
}
