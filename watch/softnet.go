package watch

import (
	"fmt"

	"github.com/prometheus/procfs"

	"github.com/irqnuma/irqnuma/cpuset"
)

// softnetCPU is one CPU's line of /proc/net/softnet_stat: 32-bit counters.
type softnetCPU struct {
	id                          int
	processed, dropped, squeeze uint64
}

// softnetByCPU maps procfs's softnet_stat rows to CPU ids. The kernel
// prints one line per online CPU. Since Linux 5.10 column 13 is the CPU id
// and procfs reads it; before that procfs numbers the lines 0, 1, 2...,
// which is wrong as soon as a CPU is offline, so irqnuma maps line i to the
// i-th online CPU instead (the kernel walks the online CPUs in order).
func softnetByCPU(rows []procfs.SoftnetStat, online cpuset.Set, out []softnetCPU) ([]softnetCPU, error) {
	out = out[:0]
	var ids []int
	for i, r := range rows {
		id := int(r.Index)
		if r.Width < 13 {
			if ids == nil {
				ids = online.IDs()
			}
			if len(rows) != len(ids) {
				return nil, fmt.Errorf("%d lines for %d online CPUs (%s) and no CPU id column: %w", len(rows), len(ids), online, ErrFormat)
			}
			id = ids[i]
		}
		if id < 0 || id > cpuset.MaxID {
			return nil, fmt.Errorf("line %d: CPU %d is past the largest CPU id, %d: %w", i+1, r.Index, cpuset.MaxID, ErrFormat)
		}
		if len(out) > 0 && out[len(out)-1].id >= id {
			return nil, fmt.Errorf("line %d: CPU %d after CPU %d: %w", i+1, id, out[len(out)-1].id, ErrFormat)
		}
		out = append(out, softnetCPU{id: id, processed: uint64(r.Processed), dropped: uint64(r.Dropped), squeeze: uint64(r.TimeSqueezed)})
	}
	return out, nil
}
