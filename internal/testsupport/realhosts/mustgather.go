package realhosts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
)

// The must-gather JSON of cluster-node-tuning-operator's ppc-expected-info:
// a list of machine-config pools, each with its nodes:
//
//	[{"name": "master", "nodes": [{"name": "master.internal",
//	  "smt_enabled": true, "cpus_count": 112, "numa_cells_count": 2,
//	  "numa_cells": [{"id": 0, "cores": [0, 2, ...]}, ...]}]},
//	 {"name": "worker", "nodes": null}]
//
// Despite the name, "cores" holds CPU (hardware thread) ids.
type mgPool struct {
	Name  string   `json:"name"`
	Nodes []mgNode `json:"nodes"`
}

type mgNode struct {
	Name           string `json:"name"`
	SMTEnabled     bool   `json:"smt_enabled"`
	CPUsCount      int    `json:"cpus_count"`
	NUMACellsCount int    `json:"numa_cells_count"`
	NUMACells      []struct {
		ID    int   `json:"id"`
		Cores []int `json:"cores"`
	} `json:"numa_cells"`
}

// mustGather is one node's expected answer.
type mustGather struct {
	pool       string
	node       string
	smtEnabled bool
	cpusCount  int
	nodes      map[int]cpuset.Set
}

// mustGatherNode returns the entry for the cnto-* capture c: the node named
// like the capture without "cnto-" ("sno"), or that name plus a domain
// ("master.internal").
func mustGatherNode(c Capture) (mustGather, error) {
	var p string
	for _, e := range c.Expected {
		if strings.Contains(e, "must-gather") && strings.HasSuffix(e, ".json") {
			p = e
		}
	}
	if p == "" {
		return mustGather{}, noExpected(c, "must-gather JSON")
	}
	b, err := readBounded(p)
	if err != nil {
		return mustGather{}, err
	}
	mg, err := parseMustGather(b, strings.TrimPrefix(c.Name, "cnto-"))
	if err != nil {
		return mustGather{}, fmt.Errorf("parse %s: %w", p, err)
	}
	return mg, nil
}

func parseMustGather(b []byte, host string) (mustGather, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var pools []mgPool
	if err := dec.Decode(&pools); err != nil {
		return mustGather{}, err
	}
	var found []mustGather
	for _, pool := range pools {
		for _, n := range pool.Nodes {
			if n.Name != host && !strings.HasPrefix(n.Name, host+".") {
				continue
			}
			mg := mustGather{
				pool:       pool.Name,
				node:       n.Name,
				smtEnabled: n.SMTEnabled,
				cpusCount:  n.CPUsCount,
				nodes:      map[int]cpuset.Set{},
			}
			if n.NUMACellsCount != len(n.NUMACells) {
				return mustGather{}, fmt.Errorf("node %s: numa_cells_count %d but %d numa_cells", n.Name, n.NUMACellsCount, len(n.NUMACells))
			}
			for _, cell := range n.NUMACells {
				if _, dup := mg.nodes[cell.ID]; dup {
					return mustGather{}, fmt.Errorf("node %s: numa cell %d twice", n.Name, cell.ID)
				}
				s, err := setOf(cell.Cores)
				if err != nil {
					return mustGather{}, fmt.Errorf("node %s: numa cell %d: %w", n.Name, cell.ID, err)
				}
				mg.nodes[cell.ID] = s
			}
			found = append(found, mg)
		}
	}
	if len(found) != 1 {
		return mustGather{}, fmt.Errorf("want one node named %q or %q, found %d", host, host+".*", len(found))
	}
	return found[0], nil
}
