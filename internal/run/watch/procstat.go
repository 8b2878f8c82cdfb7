package watch

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// ErrFormat is wrapped by errors about text that is not in the format of
// /proc/stat, /proc/softirqs or /proc/net/softnet_stat. It is
// kfile.ErrFileParse, as every kernel file that does not parse.
var ErrFormat = kfile.FormatSentinel("not in the kernel's format")

// cpuTimes is one cpuN line of /proc/stat, in clock ticks (USER_HZ).
type cpuTimes struct {
	user, nice, system, idle, iowait, irq, softirq, steal uint64
}

// total is every tick the CPU accounted: guest time is already inside
// user and nice, so it is not added again.
func (c cpuTimes) total() uint64 {
	return c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal
}

// statCPU is the times of one CPU id.
type statCPU struct {
	id int
	t  cpuTimes
}

// parseStat reads the per-CPU lines of /proc/stat ("cpu5 100 0 33 ..."),
// one per online CPU, in the kernel's order. The aggregate "cpu" line and
// everything after the cpu lines (the long intr line above all) are not
// parsed: the kernel prints the cpu lines first. A cpu line with fewer
// than the seven fields every 2.6+ kernel prints (user to softirq) is an
// error; steal, guest and guest_nice may be absent (older kernels).
func parseStat(b []byte, out []statCPU) ([]statCPU, error) {
	out = out[:0]
	for lineNo := 1; len(b) > 0; lineNo++ {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte("\n"))
		if !bytes.HasPrefix(line, []byte("cpu")) {
			if len(out) == 0 && lineNo == 1 {
				return nil, fmt.Errorf("line 1: %q is not a cpu line: %w", clip(line), ErrFormat)
			}
			break
		}
		name, rest, _ := bytes.Cut(line, []byte(" "))
		if len(name) == 3 { // the aggregate "cpu  ..." line
			continue
		}
		id, err := atoi(name[3:])
		if err != nil {
			return nil, fmt.Errorf("line %d: %q is not cpuN: %w", lineNo, clip(name), ErrFormat)
		}
		if id > cpuset.MaxID {
			return nil, fmt.Errorf("line %d: cpu%d is past the largest CPU id, %d: %w", lineNo, id, cpuset.MaxID, ErrFormat)
		}
		var v [8]uint64
		n := 0
		for i := 0; i < len(rest); {
			for i < len(rest) && rest[i] == ' ' {
				i++
			}
			j := i
			for j < len(rest) && rest[j] != ' ' {
				j++
			}
			if j == i {
				break
			}
			x, err := atou(rest[i:j])
			if err != nil {
				return nil, fmt.Errorf("line %d (cpu%d): field %d %q is not a count: %w", lineNo, id, n+1, clip(rest[i:j]), ErrFormat)
			}
			if n < len(v) {
				v[n] = x
			}
			n++
			i = j
		}
		if n < 7 {
			return nil, fmt.Errorf("line %d (cpu%d): %d fields, want at least 7: %w", lineNo, id, n, ErrFormat)
		}
		if len(out) > 0 && out[len(out)-1].id >= id {
			return nil, fmt.Errorf("line %d: cpu%d after cpu%d: %w", lineNo, id, out[len(out)-1].id, ErrFormat)
		}
		out = append(out, statCPU{id: id, t: cpuTimes{user: v[0], nice: v[1], system: v[2], idle: v[3],
			iowait: v[4], irq: v[5], softirq: v[6], steal: v[7]}})
	}
	return out, nil
}

// atoi parses a non-negative decimal CPU or row id of at most 7 digits.
func atoi(b []byte) (int, error) {
	if len(b) == 0 || len(b) > 7 {
		return 0, strconv.ErrSyntax
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// atou parses a decimal unsigned count.
func atou(b []byte) (uint64, error) {
	if len(b) == 0 || len(b) > 20 {
		return 0, strconv.ErrSyntax
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, strconv.ErrRange
		}
		n = n*10 + d
	}
	return n, nil
}

func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
