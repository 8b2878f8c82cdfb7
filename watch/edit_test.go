package watch

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

// tree edits a writable host tree (a hosttest.Copy) the way the kernel
// would change it between two samples.
type tree struct {
	t    testing.TB
	root string
}

func (h tree) read(rel string) []byte {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.root, rel))
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

func (h tree) write(rel string, b []byte) {
	h.t.Helper()
	p := filepath.Join(h.root, rel)
	if err := os.Chmod(p, 0o644); err != nil && !os.IsNotExist(err) {
		h.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		h.t.Fatal(err)
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

// editCount changes the count of row id ("286", "NET_RX") in the column
// of cpu, in a file with a CPU header (/proc/interrupts, /proc/softirqs).
// The new value is right-aligned in the old one's width, as the kernel
// prints it.
func (h tree) editCount(rel, id string, cpu int, f func(uint64) uint64) {
	h.t.Helper()
	lines := bytes.Split(h.read(rel), []byte("\n"))
	col := column(h.t, lines[0], cpu)
	for n, line := range lines[1:] {
		name, _, ok := bytes.Cut(line, []byte(":"))
		if !ok || string(bytes.TrimSpace(name)) != id {
			continue
		}
		tk := tokens(line, len(name)+1)[col]
		old, err := strconv.ParseUint(string(line[tk.start:tk.end]), 10, 64)
		if err != nil {
			h.t.Fatalf("%s row %s: %v", rel, id, err)
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
		h.write(rel, bytes.Join(lines, []byte("\n")))
		return
	}
	h.t.Fatalf("%s: no row %s", rel, id)
}

func (h tree) addIRQ(irq, cpu int, n uint64) {
	h.editCount("proc/interrupts", strconv.Itoa(irq), cpu, func(v uint64) uint64 { return v + n })
}

func (h tree) setIRQ(irq, cpu int, n uint64) {
	h.editCount("proc/interrupts", strconv.Itoa(irq), cpu, func(uint64) uint64 { return n })
}

func (h tree) addSoftirq(name string, cpu int, n uint64) {
	h.editCount("proc/softirqs", name, cpu, func(v uint64) uint64 { return v + n })
}

// Fields of a /proc/stat cpu line.
const (
	fUser = iota
	fNice
	fSystem
	fIdle
	fIowait
	fIRQ
	fSoftirq
)

// addStat adds ticks to the fields of CPU cpu's /proc/stat line.
func (h tree) addStat(cpu int, add map[int]uint64) {
	h.t.Helper()
	lines := bytes.Split(h.read("proc/stat"), []byte("\n"))
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
		h.write("proc/stat", bytes.Join(lines, []byte("\n")))
		return
	}
	h.t.Fatalf("proc/stat: no %q line", prefix)
}

// addSoftnet adds n to column col (0: processed, 1: dropped, 2:
// time_squeeze) of CPU cpu's softnet_stat line, a 32-bit hex counter.
func (h tree) addSoftnet(cpu, col int, n uint32) {
	h.t.Helper()
	lines := bytes.Split(h.read("proc/net/softnet_stat"), []byte("\n"))
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
		h.write("proc/net/softnet_stat", bytes.Join(lines, []byte("\n")))
		return
	}
	h.t.Fatalf("softnet_stat: no line for CPU %d", cpu)
}

// offline takes CPU cpu offline as the kernel shows it: gone from
// cpu/online, from the /proc/interrupts header and rows, from /proc/stat
// and softnet_stat; /proc/softirqs keeps its column (possible CPUs).
func (h tree) offline(cpu, online string) {
	h.t.Helper()
	id, _ := strconv.Atoi(cpu)
	h.write("sys/devices/system/cpu/online", []byte(online+"\n"))
	lines := bytes.Split(h.read("proc/interrupts"), []byte("\n"))
	col := column(h.t, lines[0], id)
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
	h.write("proc/interrupts", bytes.Join(lines, []byte("\n")))

	var out [][]byte
	for _, line := range bytes.Split(h.read("proc/stat"), []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("cpu"+cpu+" ")) {
			out = append(out, line)
		}
	}
	h.write("proc/stat", bytes.Join(out, []byte("\n")))
	out = out[:0]
	for _, line := range bytes.Split(h.read("proc/net/softnet_stat"), []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) >= 13 {
			if v, _ := strconv.ParseUint(f[12], 16, 32); int(v) == id {
				continue
			}
		}
		out = append(out, line)
	}
	h.write("proc/net/softnet_stat", bytes.Join(out, []byte("\n")))
}

// thread writes /proc/<pid>/task/<tid>/stat in the kernel's format (52
// fields; 14 utime, 15 stime, 39 processor).
func (h tree) thread(pid, tid int, comm, state string, utime, stime uint64, cpu int) {
	h.t.Helper()
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
	h.write(dir+"/stat", []byte(line))
	h.write(dir+"/comm", []byte(comm+"\n"))
	if pid == tid {
		h.write(fmt.Sprintf("proc/%d/stat", pid), []byte(line))
		h.write(fmt.Sprintf("proc/%d/comm", pid), []byte(comm+"\n"))
	}
}

// clock is an injected clock that moves only when told.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func removeAll(p string) error { return os.RemoveAll(p) }
