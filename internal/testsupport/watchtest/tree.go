// Package watchtest changes a writable host tree the way the kernel would
// between two samples (counts that grow or reset, a CPU going offline, a
// thread running somewhere), for the tests of watch and of the command.
package watchtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Tree edits a writable host tree (a hosttest.Copy) the way the kernel
// would change it between two samples.
type Tree struct {
	T    testing.TB
	Root string
}

// Read returns a file of the tree.
func (h Tree) Read(rel string) []byte {
	h.T.Helper()
	b, err := os.ReadFile(filepath.Join(h.Root, rel))
	if err != nil {
		h.T.Fatal(err)
	}
	return b
}

// Write replaces a file of the tree, whatever its mode.
func (h Tree) Write(rel string, b []byte) {
	h.T.Helper()
	p := filepath.Join(h.Root, rel)
	if err := os.Chmod(p, 0o644); err != nil && !os.IsNotExist(err) {
		h.T.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.T.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		h.T.Fatal(err)
	}
}

// token is one whitespace-separated field of a line and where it is.
type token struct{ start, end int }

func tokens(line []byte, from int) []token {
	var out []token
	for i := from; i < len(line); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if j > i {
			out = append(out, token{i, j})
		}
		i = j
	}
	return out
}

// column returns the position of CPU cpu in a "CPU0 CPU1 ..." header.
func column(t testing.TB, header []byte, cpu int) int {
	t.Helper()
	for i, tk := range tokens(header, 0) {
		if string(header[tk.start:tk.end]) == "CPU"+strconv.Itoa(cpu) {
			return i
		}
	}
	t.Fatalf("no CPU%d column in %q", cpu, header)
	return -1
}

// EditCount changes the count of row id ("286", "NET_RX") in the column
// of cpu, in a file with a CPU header (/proc/interrupts, /proc/softirqs).
// The new value is right-aligned in the old one's width, as the kernel
// prints it.
func (h Tree) EditCount(rel, id string, cpu int, f func(uint64) uint64) {
	h.T.Helper()
	lines := bytes.Split(h.Read(rel), []byte("\n"))
	col := column(h.T, lines[0], cpu)
	for n, line := range lines[1:] {
		name, _, ok := bytes.Cut(line, []byte(":"))
		if !ok || string(bytes.TrimSpace(name)) != id {
			continue
		}
		tk := tokens(line, len(name)+1)[col]
		old, err := strconv.ParseUint(string(line[tk.start:tk.end]), 10, 64)
		if err != nil {
			h.T.Fatalf("%s row %s: %v", rel, id, err)
		}
		s := strconv.FormatUint(f(old), 10)
		if w := tk.end - tk.start; len(s) < w {
			s = strings.Repeat(" ", w-len(s)) + s
		}
		var out []byte
		out = append(out, line[:tk.start]...)
		out = append(out, s...)
		out = append(out, line[tk.end:]...)
		lines[n+1] = out
		h.Write(rel, bytes.Join(lines, []byte("\n")))
		return
	}
	h.T.Fatalf("%s: no row %s", rel, id)
}

// AddIRQ adds n to IRQ irq's count on CPU cpu.
func (h Tree) AddIRQ(irq, cpu int, n uint64) {
	h.EditCount("proc/interrupts", strconv.Itoa(irq), cpu, func(v uint64) uint64 { return v + n })
}

// SetIRQ sets IRQ irq's count on CPU cpu, e.g. lower to model a reset.
func (h Tree) SetIRQ(irq, cpu int, n uint64) {
	h.EditCount("proc/interrupts", strconv.Itoa(irq), cpu, func(uint64) uint64 { return n })
}

// AddSoftirq adds n to softirq row name ("NET_RX") on CPU cpu.
func (h Tree) AddSoftirq(name string, cpu int, n uint64) {
	h.EditCount("proc/softirqs", name, cpu, func(v uint64) uint64 { return v + n })
}

// Fields of a /proc/stat cpu line.
const (
	User = iota
	Nice
	System
	Idle
	Iowait
	IRQ
	Softirq
)

// AddStat adds ticks to the fields of CPU cpu's /proc/stat line.
func (h Tree) AddStat(cpu int, add map[int]uint64) {
	h.T.Helper()
	lines := bytes.Split(h.Read("proc/stat"), []byte("\n"))
	prefix := fmt.Sprintf("cpu%d ", cpu)
	for i, line := range lines {
		if !bytes.HasPrefix(line, []byte(prefix)) {
			continue
		}
		f := strings.Fields(string(line))
		for k, n := range add {
			v, _ := strconv.ParseUint(f[k+1], 10, 64)
			f[k+1] = strconv.FormatUint(v+n, 10)
		}
		lines[i] = []byte(strings.Join(f, " "))
		h.Write("proc/stat", bytes.Join(lines, []byte("\n")))
		return
	}
	h.T.Fatalf("proc/stat: no %q line", prefix)
}

// AddSoftnet adds n to column col (0: processed, 1: dropped, 2:
// time_squeeze) of CPU cpu's softnet_stat line, a 32-bit hex counter.
func (h Tree) AddSoftnet(cpu, col int, n uint32) {
	h.T.Helper()
	lines := bytes.Split(h.Read("proc/net/softnet_stat"), []byte("\n"))
	for i, line := range lines {
		f := strings.Fields(string(line))
		if len(f) < 13 {
			continue
		}
		if id, _ := strconv.ParseUint(f[12], 16, 32); int(id) != cpu {
			continue
		}
		v, _ := strconv.ParseUint(f[col], 16, 32)
		f[col] = fmt.Sprintf("%08x", uint32(v)+n)
		lines[i] = []byte(strings.Join(f, " "))
		h.Write("proc/net/softnet_stat", bytes.Join(lines, []byte("\n")))
		return
	}
	h.T.Fatalf("softnet_stat: no line for CPU %d", cpu)
}

// Offline takes CPU cpu offline as the kernel shows it: gone from
// cpu/online, from the /proc/interrupts header and rows, from /proc/stat
// and softnet_stat; /proc/softirqs keeps its column (possible CPUs).
func (h Tree) Offline(cpu, online string) {
	h.T.Helper()
	id, _ := strconv.Atoi(cpu)
	h.Write("sys/devices/system/cpu/online", []byte(online+"\n"))
	lines := bytes.Split(h.Read("proc/interrupts"), []byte("\n"))
	col := column(h.T, lines[0], id)
	for n, line := range lines {
		from := 0
		if n > 0 {
			name, _, ok := bytes.Cut(line, []byte(":"))
			if !ok {
				continue
			}
			from = len(name) + 1
		}
		tks := tokens(line, from)
		if col >= len(tks) {
			continue
		}
		tk := tks[col]
		if n > 0 {
			if _, err := strconv.ParseUint(string(line[tk.start:tk.end]), 10, 64); err != nil {
				continue // a short row (ERR, MIS)
			}
		}
		start := tk.start
		if col > 0 {
			start = tks[col-1].end
		}
		lines[n] = append(append([]byte{}, line[:start]...), line[tk.end:]...)
	}
	h.Write("proc/interrupts", bytes.Join(lines, []byte("\n")))

	var out [][]byte
	for _, line := range bytes.Split(h.Read("proc/stat"), []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("cpu"+cpu+" ")) {
			out = append(out, line)
		}
	}
	h.Write("proc/stat", bytes.Join(out, []byte("\n")))
	out = out[:0]
	for _, line := range bytes.Split(h.Read("proc/net/softnet_stat"), []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) >= 13 {
			if v, _ := strconv.ParseUint(f[12], 16, 32); int(v) == id {
				continue
			}
		}
		out = append(out, line)
	}
	h.Write("proc/net/softnet_stat", bytes.Join(out, []byte("\n")))
}

// Thread writes /proc/<pid>/task/<tid>/stat in the kernel's format (52
// fields; 14 utime, 15 stime, 39 processor).
func (h Tree) Thread(pid, tid int, comm, state string, utime, stime uint64, cpu int) {
	h.T.Helper()
	f := make([]string, 52)
	for i := range f {
		f[i] = "0"
	}
	f[0], f[1], f[2], f[3] = strconv.Itoa(tid), "("+comm+")", state, "1"
	f[13], f[14] = strconv.FormatUint(utime, 10), strconv.FormatUint(stime, 10)
	f[17], f[18], f[19] = "20", "0", "1"
	f[38] = strconv.Itoa(cpu)
	line := strings.Join(f, " ") + "\n"
	dir := fmt.Sprintf("proc/%d/task/%d", pid, tid)
	h.Write(dir+"/stat", []byte(line))
	h.Write(dir+"/comm", []byte(comm+"\n"))
	if pid == tid {
		h.Write(fmt.Sprintf("proc/%d/stat", pid), []byte(line))
		h.Write(fmt.Sprintf("proc/%d/comm", pid), []byte(comm+"\n"))
	}
}

// Clock is an injected clock that moves only when told.
type Clock struct{ T time.Time }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return c.T }

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) { c.T = c.T.Add(d) }
