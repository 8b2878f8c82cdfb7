package realhosts

import (
	"encoding/json"
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
)

// cadvisor's MachineInfo, as the capture tool wrote it next to proc/ and
// sys/ in sysinfo.tgz; only the fields used here. Its num_physical_cores
// counts distinct core_id values, which repeat across packages (dell-2numa
// says 26 for 52 cores), so it is not used.
type cadvisorMachine struct {
	NumCores int `json:"num_cores"`
	Topology []struct {
		NodeID int `json:"node_id"`
		Cores  []struct {
			ThreadIDs []int `json:"thread_ids"`
		} `json:"cores"`
	} `json:"topology"`
}

type machine struct {
	numCores int
	nodes    map[int]cpuset.Set
}

// machineInfo reads machineinfo.json from c's archive.
func machineInfo(c Capture) (machine, error) {
	b, err := readArchiveFile(c.Archive, "machineinfo.json")
	if err != nil {
		return machine{}, fmt.Errorf("capture %s: %w", c.Name, err)
	}
	m, err := parseMachineInfo(b)
	if err != nil {
		return machine{}, fmt.Errorf("parse %s machineinfo.json: %w", c.Archive, err)
	}
	return m, nil
}

func parseMachineInfo(b []byte) (machine, error) {
	var mi cadvisorMachine
	if err := json.Unmarshal(b, &mi); err != nil {
		return machine{}, err
	}
	m := machine{numCores: mi.NumCores, nodes: map[int]cpuset.Set{}}
	for _, n := range mi.Topology {
		if _, dup := m.nodes[n.NodeID]; dup {
			return machine{}, fmt.Errorf("node %d twice", n.NodeID)
		}
		var ids []int
		for _, core := range n.Cores {
			ids = append(ids, core.ThreadIDs...)
		}
		s, err := setOf(ids)
		if err != nil {
			return machine{}, fmt.Errorf("node %d: %w", n.NodeID, err)
		}
		m.nodes[n.NodeID] = s
	}
	if len(m.nodes) == 0 {
		return machine{}, fmt.Errorf("no topology")
	}
	return m, nil
}
