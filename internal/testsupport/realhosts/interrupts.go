package realhosts

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
)

// InterruptsFile is a raw /proc/interrupts capture kept as a plain file.
type InterruptsFile struct {
	Path string // absolute path
	Name string // path below the realhosts folder, e.g. "nodeexporter-interrupts/interrupts_aarch64"
	// CPUs lists the CPU numbers of the header line ("CPU0 CPU1 ..."), in
	// order; a reader must take its columns from here.
	CPUs []int
	// Lines counts the lines after the header, blank ones included.
	Lines int
	// Note says what is unusual about the file, if anything.
	Note string
}

// notes name what a reader of each capture must cope with beyond the
// ordinary x86 layout.
var interruptsNotes = map[string]string{
	"nodeexporter-interrupts/interrupts_aarch64":                          `arm64 (GICv3, ITS-MSI), AWS ENA queues "eth0-Tx-Rx-N"; IPI rows whose count touches the colon ("IPI0:2768808080"); header without trailing spaces; "Err:" has one column; the last line is all spaces`,
	"nodeexporter-interrupts/interrupts":                                  `x86 laptop, IR-IO-APIC/IR-PCI-MSI; "ERR:" and "MIS:" have one column; a row may list two devices ("ehci_hcd:usb1, mmc0")`,
	"netutils-linux/interrupts/multinic_multiqueue_4cpu/interrupts_short": `truncated: IRQ rows and only LOC, RES and TLB of the named rows`,
	"netutils-linux/interrupts/singlequeue_8cpu/interrupts_short":         `truncated: IRQ rows and only LOC, RES, CAL and TLB of the named rows`,
}

// InterruptsFiles lists the raw /proc/interrupts captures under
// netutils-linux/interrupts, netutils-linux/rss-ladder.tests and
// nodeexporter-interrupts, sorted by name. (The sysinfo.tgz captures hold
// their own proc/interrupts; unpack them for those.) It returns nil, nil when
// the realhosts folder is absent.
func InterruptsFiles() ([]InterruptsFile, error) {
	dir, ok := Dir()
	if !ok {
		return nil, nil
	}
	var paths []string
	for _, pat := range []string{
		"netutils-linux/interrupts/*/*",
		"netutils-linux/rss-ladder.tests/*/interrupts",
		"nodeexporter-interrupts/interrupts*",
	} {
		m, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pat)))
		if err != nil {
			return nil, err
		}
		paths = append(paths, m...)
	}
	slices.Sort(paths)
	var out []InterruptsFile
	for _, p := range paths {
		b, err := readBounded(p)
		if err != nil {
			return nil, err
		}
		name, _ := filepath.Rel(dir, p)
		name = filepath.ToSlash(name)
		header, rest, _ := bytes.Cut(b, []byte("\n"))
		cpus, err := interruptsHeader(string(header))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		out = append(out, InterruptsFile{
			Path:  p,
			Name:  name,
			CPUs:  cpus,
			Lines: bytes.Count(rest, []byte("\n")),
			Note:  interruptsNotes[name],
		})
	}
	return out, nil
}

// interruptsHeader returns the CPU numbers of a header like
// "           CPU0       CPU1       ".
func interruptsHeader(line string) ([]int, error) {
	var cpus []int
	for _, f := range strings.Fields(line) {
		n, ok := strings.CutPrefix(f, "CPU")
		id, err := strconv.Atoi(n)
		if !ok || err != nil || id < 0 {
			return nil, fmt.Errorf("header field %q is not CPUn", f)
		}
		cpus = append(cpus, id)
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("header %q names no CPUs", line)
	}
	return cpus, nil
}

// RSSLadder is one of netutils-linux's rss-ladder tests: a server's
// /proc/interrupts and `lscpu -p` output, the device rss-ladder was asked to
// spread, and where it put each queue.
type RSSLadder struct {
	Name       string // folder name, e.g. "ixgbe.E5645"
	Interrupts string // path of the /proc/interrupts capture
	// Params are rss-ladder's arguments: the device ("eth1",
	// "pci:0000:01:00.0") and maybe a socket ("1"); nil when the test has
	// no params file.
	Params []string
	// Nodes is NUMA node -> CPUs from lscpu's "Node" column.
	Nodes map[int]cpuset.Set
	// Placement is rss-ladder's answer in order, or nil when the test has
	// no expected file (2xI350.i5-6400). It is netutils' policy (one queue
	// per CPU of the chosen socket, wrapping round), not what the kernel
	// wrote: the captured counts need not agree with it.
	Placement []QueuePlacement
}

// QueuePlacement is one "bound to" line of an rss-ladder expected file:
//
//   - distribute interrupts of eth1 (-TxRx-) on socket 1
//   - eth1: queue eth1-TxRx-0 (irq 75) bound to CPU6
type QueuePlacement struct {
	Device string // "eth1", "pci:0000:01:00.0"
	Queue  string // the IRQ name in /proc/interrupts, "mlx5_comp0@pci:0000:01:00.0"
	IRQ    int
	CPU    int
	Socket int // from the "distribute ... on socket N" line above it
}

// RSSLadders lists netutils-linux's rss-ladder tests, sorted by name. It
// returns nil, nil when the realhosts folder is absent.
func RSSLadders() ([]RSSLadder, error) {
	dir, ok := Dir()
	if !ok {
		return nil, nil
	}
	dirs, err := filepath.Glob(filepath.Join(dir, "netutils-linux", "rss-ladder.tests", "*"))
	if err != nil {
		return nil, err
	}
	slices.Sort(dirs)
	var out []RSSLadder
	for _, d := range dirs {
		r := RSSLadder{Name: filepath.Base(d), Interrupts: filepath.Join(d, "interrupts")}
		if b, err := readBounded(filepath.Join(d, "params")); err == nil {
			r.Params = strings.Fields(string(b))
		} else if !os.IsNotExist(err) {
			return nil, err
		}
		b, err := readBounded(filepath.Join(d, "lscpu_output"))
		if err != nil {
			return nil, err
		}
		if r.Nodes, err = parseLscpuNodes(b); err != nil {
			return nil, fmt.Errorf("parse %s: %w", filepath.Join(d, "lscpu_output"), err)
		}
		p := filepath.Join(d, "expected")
		b, err = readBounded(p)
		switch {
		case os.IsNotExist(err):
		case err != nil:
			return nil, err
		default:
			if r.Placement, err = parseRSSExpected(b); err != nil {
				return nil, fmt.Errorf("parse %s: %w", p, err)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// parseLscpuNodes reads `lscpu -p` output: comment lines, one of which
// names the columns ("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3"), then one
// line of comma-separated ids per CPU.
func parseLscpuNodes(b []byte) (map[int]cpuset.Set, error) {
	cpuCol, nodeCol := -1, -1
	ids := map[int][]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if cols, ok := strings.CutPrefix(line, "# CPU,"); ok {
			cpuCol = 0
			for i, c := range strings.Split(cols, ",") {
				if c == "Node" {
					nodeCol = i + 1
				}
			}
			continue
		}
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		if cpuCol < 0 || nodeCol < 0 {
			return nil, fmt.Errorf("line %q before a column header naming CPU and Node", line)
		}
		f := strings.Split(line, ",")
		if len(f) <= nodeCol {
			return nil, fmt.Errorf("line %q: no Node column", line)
		}
		cpu, err1 := strconv.Atoi(f[cpuCol])
		node, err2 := strconv.Atoi(f[nodeCol])
		if err1 != nil || err2 != nil || cpu < 0 || cpu > cpuset.MaxID || node < 0 {
			return nil, fmt.Errorf("line %q: bad CPU or Node", line)
		}
		ids[node] = append(ids[node], cpu)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no CPU lines")
	}
	nodes := map[int]cpuset.Set{}
	for n, c := range ids {
		nodes[n] = cpuset.New(c...)
	}
	return nodes, nil
}

var (
	rssDistribute = regexp.MustCompile(`^- distribute interrupts of (\S+) \(.*\) on socket (\d+)$`)
	rssBound      = regexp.MustCompile(`^  - (\S+): queue (\S+) \(irq (\d+)\) bound to CPU(\d+)$`)
)

// parseRSSExpected reads rss-ladder's report. Lines other than
// "- distribute" and "  - ... bound to CPUn" (such as "WARNING: some CPUs
// process multiple queues") are skipped.
func parseRSSExpected(b []byte) ([]QueuePlacement, error) {
	var out []QueuePlacement
	socket := -1
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if m := rssDistribute.FindStringSubmatch(line); m != nil {
			socket, _ = strconv.Atoi(m[2])
			continue
		}
		m := rssBound.FindStringSubmatch(line)
		if m == nil {
			if strings.HasPrefix(line, "  - ") {
				return nil, fmt.Errorf("unreadable placement line %q", line)
			}
			continue
		}
		if socket < 0 {
			return nil, fmt.Errorf("line %q before any \"- distribute\" line", line)
		}
		irq, _ := strconv.Atoi(m[3])
		cpu, err := strconv.Atoi(m[4])
		if err != nil || cpu > cpuset.MaxID {
			return nil, fmt.Errorf("line %q: bad CPU", line)
		}
		out = append(out, QueuePlacement{Device: m[1], Queue: m[2], IRQ: irq, CPU: cpu, Socket: socket})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no placement lines")
	}
	return out, nil
}
