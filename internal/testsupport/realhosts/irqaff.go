package realhosts

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
)

// irqAffinity is one entry of debug-tools' irqaff.json:
//
//	{"irq": 16, "source": "", "affinity": [20]}
//
// "source" is empty in every entry of the dell-2numa file.
type irqAffinity struct {
	IRQ      int    `json:"irq"`
	Source   string `json:"source"`
	Affinity []int  `json:"affinity"`
}

func parseIRQAffinity(b []byte) (map[int]cpuset.Set, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var list []irqAffinity
	if err := dec.Decode(&list); err != nil {
		return nil, err
	}
	m := make(map[int]cpuset.Set, len(list))
	for _, e := range list {
		if _, dup := m[e.IRQ]; dup {
			return nil, fmt.Errorf("irq %d twice", e.IRQ)
		}
		s, err := setOf(e.Affinity)
		if err != nil {
			return nil, fmt.Errorf("irq %d: %w", e.IRQ, err)
		}
		m[e.IRQ] = s
	}
	return m, nil
}
