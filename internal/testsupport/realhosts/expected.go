package realhosts

import (
	"fmt"
	"os"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
)

// maxExpectedSize bounds the expected-answer files read whole.
const maxExpectedSize = 16 << 20

// ExpectedNodes returns the NUMA node id -> CPU set another project expects
// for the capture:
//   - cnto-*: numa_cells[].cores of the capture's node in the must-gather
//     JSON (the node whose name is the capture's name without "cnto-");
//   - hwloc-*: the NUMANode P#n objects of the lstopo .console, with the PUs
//     they cover, or the NUMANode cpusets of the .xml where there is no
//     console; these count online CPUs only;
//   - dell-2numa: the cadvisor topology in machineinfo.json inside the archive
//     (it was taken with the capture; there is nothing in expected/).
//
// Other captures give an error wrapping ErrNoExpected.
func ExpectedNodes(c Capture) (map[int]cpuset.Set, error) {
	switch {
	case strings.HasPrefix(c.Name, "cnto-"):
		n, err := mustGatherNode(c)
		if err != nil {
			return nil, err
		}
		return n.nodes, nil
	case strings.HasPrefix(c.Name, "hwloc-"):
		h, err := hwlocTopology(c)
		if err != nil {
			return nil, err
		}
		return h.nodes, nil
	case c.Name == "dell-2numa":
		m, err := machineInfo(c)
		if err != nil {
			return nil, err
		}
		return m.nodes, nil
	}
	return nil, noExpected(c, "NUMA nodes")
}

// ExpectedCPUCount returns how many CPUs the expected answer counts: the
// must-gather cpus_count for cnto-*, the number of PUs lstopo shows (online
// CPUs) for hwloc-*, cadvisor's num_cores for dell-2numa.
func ExpectedCPUCount(c Capture) (int, error) {
	switch {
	case strings.HasPrefix(c.Name, "cnto-"):
		n, err := mustGatherNode(c)
		if err != nil {
			return 0, err
		}
		return n.cpusCount, nil
	case strings.HasPrefix(c.Name, "hwloc-"):
		h, err := hwlocTopology(c)
		if err != nil {
			return 0, err
		}
		return h.pus.Len(), nil
	case c.Name == "dell-2numa":
		m, err := machineInfo(c)
		if err != nil {
			return 0, err
		}
		return m.numCores, nil
	}
	return 0, noExpected(c, "CPU count")
}

// ExpectedSMT returns the must-gather smt_enabled of a cnto-* capture:
// whether the node runs more than one thread per core. Other captures give
// an error wrapping ErrNoExpected.
func ExpectedSMT(c Capture) (bool, error) {
	if !strings.HasPrefix(c.Name, "cnto-") {
		return false, noExpected(c, "SMT state")
	}
	n, err := mustGatherNode(c)
	if err != nil {
		return false, err
	}
	return n.smtEnabled, nil
}

// ExpectedIRQAffinity returns IRQ number -> requested affinity for
// dell-2numa, from expected/irqaff.json (debug-tools' answer, taken from
// /proc/irq/N/smp_affinity_list). Other captures give an error wrapping
// ErrNoExpected.
func ExpectedIRQAffinity(c Capture) (map[int]cpuset.Set, error) {
	p := c.expected("/irqaff.json")
	if p == "" {
		return nil, noExpected(c, "IRQ affinity")
	}
	b, err := readBounded(p)
	if err != nil {
		return nil, err
	}
	m, err := parseIRQAffinity(b)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", p, err)
	}
	return m, nil
}

// readBounded reads a whole file of at most maxExpectedSize bytes.
func readBounded(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxExpectedSize {
		return nil, fmt.Errorf("read %s: %d bytes, more than %d", p, fi.Size(), maxExpectedSize)
	}
	return os.ReadFile(p)
}

// setOf returns the set of ids, refusing ones cpuset.New would panic on.
func setOf(ids []int) (cpuset.Set, error) {
	for _, id := range ids {
		if id < 0 || id > cpuset.MaxID {
			return cpuset.Set{}, fmt.Errorf("cpu id %d out of range", id)
		}
	}
	return cpuset.New(ids...), nil
}
