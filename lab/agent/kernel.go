package main

// The agent's own readers of the kernel's files. They are deliberately
// separate from irqnuma's: the scenarios compare the two.

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// kernelAtLeast reports whether the running kernel (its osrelease) is
// major.minor or later.
func kernelAtLeast(major, minor int) bool {
	var ma, mi int
	fmt.Sscanf(readFile("/proc/sys/kernel/osrelease"), "%d.%d", &ma, &mi)
	return ma > major || (ma == major && mi >= minor)
}

// cpus is a set of CPU ids below 64 (the guest has 8).
type cpus uint64

func (c cpus) has(id int) bool    { return id >= 0 && id < 64 && c&(1<<id) != 0 }
func (c cpus) len() int           { return bits.OnesCount64(uint64(c)) }
func (c cpus) within(d cpus) bool { return c&^d == 0 }

func (c cpus) ids() []int {
	var out []int
	for i := 0; i < 64; i++ {
		if c.has(i) {
			out = append(out, i)
		}
	}
	return out
}

// String is the kernel's list form: "0-3,6".
func (c cpus) String() string {
	var parts []string
	ids := c.ids()
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			parts = append(parts, strconv.Itoa(ids[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func parseCPUs(s string) (cpus, error) {
	s = strings.TrimSpace(s)
	var c cpus
	if s == "" {
		return 0, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0, fmt.Errorf("cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return 0, fmt.Errorf("cpu list %q: %w", s, err)
			}
		}
		if a < 0 || b < a || b >= 64 {
			return 0, fmt.Errorf("cpu list %q: bad range", s)
		}
		for i := a; i <= b; i++ {
			c |= 1 << i
		}
	}
	return c, nil
}

func mustCPUs(s string) cpus {
	c, err := parseCPUs(s)
	if err != nil {
		panic(err)
	}
	return c
}

func readFile(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func readCPUs(p string) (cpus, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	return parseCPUs(string(b))
}

// nodeCPUs reads /sys/devices/system/node/nodeN/cpulist for every node.
func nodeCPUs() (map[int]cpus, error) {
	dirs, _ := filepath.Glob("/sys/devices/system/node/node[0-9]*")
	m := map[int]cpus{}
	for _, d := range dirs {
		id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "node"))
		if err != nil {
			continue
		}
		c, err := readCPUs(d + "/cpulist")
		if err != nil {
			return nil, err
		}
		m[id] = c
	}
	return m, nil
}

// interrupts is /proc/interrupts: per numbered IRQ, its name (the last
// field) and its count per CPU (columns from the header).
type interrupts struct {
	cpus   []int
	counts map[int]map[int]uint64 // irq -> cpu -> count
	names  map[int]string
}

func readInterrupts() (*interrupts, error) {
	b, err := os.ReadFile("/proc/interrupts")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	in := &interrupts{counts: map[int]map[int]uint64{}, names: map[int]string{}}
	for _, h := range strings.Fields(lines[0]) {
		id, err := strconv.Atoi(strings.TrimPrefix(h, "CPU"))
		if err != nil {
			return nil, fmt.Errorf("/proc/interrupts header %q", lines[0])
		}
		in.cpus = append(in.cpus, id)
	}
	for _, l := range lines[1:] {
		label, rest, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(label))
		if err != nil {
			continue // NMI, LOC, ...
		}
		f := strings.Fields(rest)
		if len(f) < len(in.cpus) {
			return nil, fmt.Errorf("/proc/interrupts: IRQ %d has %d fields", n, len(f))
		}
		m := map[int]uint64{}
		for i, cpu := range in.cpus {
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("/proc/interrupts: IRQ %d: %w", n, err)
			}
			m[cpu] = v
		}
		in.counts[n] = m
		in.names[n] = f[len(f)-1]
	}
	return in, nil
}

// delta returns b's counts minus a's for one IRQ, by CPU, non-zero only.
func delta(a, b *interrupts, irq int) map[int]uint64 {
	d := map[int]uint64{}
	for cpu, v := range b.counts[irq] {
		if w := v - a.counts[irq][cpu]; w != 0 {
			d[cpu] = w
		}
	}
	return d
}

func total(m map[int]uint64) uint64 {
	var t uint64
	for _, v := range m {
		t += v
	}
	return t
}

// softirq reads one row of /proc/softirqs ("NET_RX") per CPU.
func softirq(name string) (map[int]uint64, error) {
	b, err := os.ReadFile("/proc/softirqs")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	var ids []int
	for _, h := range strings.Fields(lines[0]) {
		id, _ := strconv.Atoi(strings.TrimPrefix(h, "CPU"))
		ids = append(ids, id)
	}
	for _, l := range lines[1:] {
		label, rest, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(label) != name {
			continue
		}
		m := map[int]uint64{}
		for i, f := range strings.Fields(rest) {
			if i < len(ids) {
				m[ids[i]], _ = strconv.ParseUint(f, 10, 64)
			}
		}
		return m, nil
	}
	return nil, fmt.Errorf("/proc/softirqs has no %s row", name)
}

// irqDir is /proc/irq/N.
func irqDir(n int) string { return "/proc/irq/" + strconv.Itoa(n) }

func affinityList(n int) string  { return readFile(irqDir(n) + "/smp_affinity_list") }
func effectiveList(n int) string { return readFile(irqDir(n) + "/effective_affinity_list") }

func effective(n int) cpus {
	c, err := parseCPUs(effectiveList(n))
	if err != nil {
		panic(err)
	}
	return c
}

// allIRQs lists the numbered folders of /proc/irq.
func allIRQs() []int {
	ents, _ := os.ReadDir("/proc/irq")
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// affinities reads smp_affinity_list of every IRQ.
func affinities() map[int]string {
	m := map[int]string{}
	for _, n := range allIRQs() {
		m[n] = affinityList(n)
	}
	return m
}

// diffAffinities says where two readings of affinities differ.
func diffAffinities(want, got map[int]string) []string {
	var d []string
	for n, w := range want {
		if g, ok := got[n]; !ok || g != w {
			d = append(d, fmt.Sprintf("IRQ %d: %q, want %q", n, g, w))
		}
	}
	for n, g := range got {
		if _, ok := want[n]; !ok {
			d = append(d, fmt.Sprintf("IRQ %d: new (%q)", n, g))
		}
	}
	sort.Strings(d)
	return d
}

// writeAffinity writes a list to smp_affinity_list in one write(2) and
// returns the kernel's answer.
func writeAffinity(n int, list string) error {
	f, err := os.OpenFile(irqDir(n)+"/smp_affinity_list", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(list + "\n"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func itoa(n int) string { return strconv.Itoa(n) }
