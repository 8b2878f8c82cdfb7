package watch

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/irqnuma/irqnuma/cpuset"
)

// softnetCPU is one CPU's line of /proc/net/softnet_stat: 32-bit counters.
type softnetCPU struct {
	id                          int
	processed, dropped, squeeze uint64
}

// parseSoftnet reads /proc/net/softnet_stat (net/core/net-procfs.c,
// softnet_seq_show): one line per online CPU of space-separated %08x
// fields, processed, dropped and time_squeeze first. Linux 3.11 to 5.9
// print 11 fields (10 from 2.6.35, 9 before); 5.10 adds the backlog
// length and, 13th, the CPU id; later kernels append more (6.x prints 15:
// the input and process queue lengths), so the id stays column 13.
// Without that column the kernel walks the online CPUs in order, so line
// i is the i-th online CPU, not CPU i (wrong as soon as a CPU is
// offline). A line of 12 fields, or fewer than 9, no kernel prints.
func parseSoftnet(b []byte, online cpuset.Set, out []softnetCPU) ([]softnetCPU, error) {
	out = out[:0]
	var ids []int
	fields := make([]uint64, 0, 13)
	for i := 0; len(b) > 0; i++ {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte("\n"))
		fields = fields[:0]
		for f := range bytes.FieldsSeq(line) {
			if len(f) > 8 {
				return nil, fmt.Errorf("line %d: %q is not a 32-bit hex counter: %w", i+1, clip(f), ErrFormat)
			}
			v, err := strconv.ParseUint(string(f), 16, 32)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q is not a 32-bit hex counter: %w", i+1, clip(f), ErrFormat)
			}
			fields = append(fields, v)
		}
		var id int
		switch n := len(fields); {
		case n >= 13:
			id = int(fields[12])
		case n >= 9 && n <= 11:
			if ids == nil {
				ids = online.IDs()
			}
			if i >= len(ids) {
				return nil, fmt.Errorf("line %d: more lines than the %d online CPUs (%s), and no CPU id column: %w", i+1, len(ids), online, ErrFormat)
			}
			id = ids[i]
		default:
			return nil, fmt.Errorf("line %d: %d fields, want 9 to 11, or 13 and more: %w", i+1, n, ErrFormat)
		}
		if id > cpuset.MaxID {
			return nil, fmt.Errorf("line %d: CPU %d is past the largest CPU id, %d: %w", i+1, id, cpuset.MaxID, ErrFormat)
		}
		if len(out) > 0 && out[len(out)-1].id >= id {
			return nil, fmt.Errorf("line %d: CPU %d after CPU %d: %w", i+1, id, out[len(out)-1].id, ErrFormat)
		}
		out = append(out, softnetCPU{id: id, processed: fields[0], dropped: fields[1], squeeze: fields[2]})
	}
	if ids != nil && len(out) != len(ids) {
		return nil, fmt.Errorf("%d lines for %d online CPUs (%s) and no CPU id column: %w", len(out), len(ids), online, ErrFormat)
	}
	return out, nil
}
