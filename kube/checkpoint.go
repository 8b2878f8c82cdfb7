package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
)

// CheckpointFile is the CPU manager's state under the kubelet's root
// directory (its --root-dir, /var/lib/kubelet by default).
const CheckpointFile = "var/lib/kubelet/cpu_manager_state"

// Checkpoint is the CPU manager's state file as the kubelet writes it
// (pkg/kubelet/cm/cpumanager/state/checkpoint.go): the policy, the
// shared pool (defaultCpuSet) and the exclusive CPUs of each container.
// Its checksum (FNV-32a over a go-spew dump of the Go struct) is not
// verified: reproducing go-spew's output exactly is not cheap.
type Checkpoint struct {
	// Layout is "v1" (entries: container ID → CPUs, kubelets before
	// 1.18) or "v2" (entries: pod UID → container name → CPUs).
	Layout  string
	Policy  string
	Default cpuset.Set
	// ByID (v1) and ByPod (v2) are the entries, their CPUs parsed.
	ByID  map[string]cpuset.Set
	ByPod map[string]map[string]cpuset.Set
}

type checkpointV1 struct {
	PolicyName    *string           `json:"policyName"`
	DefaultCPUSet *string           `json:"defaultCpuSet"`
	Entries       map[string]string `json:"entries"`
	Checksum      uint64            `json:"checksum"`
}

type checkpointV2 struct {
	PolicyName    *string                      `json:"policyName"`
	DefaultCPUSet *string                      `json:"defaultCpuSet"`
	Entries       map[string]map[string]string `json:"entries"`
	Checksum      uint64                       `json:"checksum"`
}

// ParseCheckpoint parses cpu_manager_state. As the kubelet does, it
// reads the v1 layout first and the v2 one when the entries are not flat.
func ParseCheckpoint(b []byte) (*Checkpoint, error) {
	var v1 checkpointV1
	errV1 := strictJSON(b, &v1)
	if errV1 == nil {
		return v1.checkpoint()
	}
	var v2 checkpointV2
	if err := strictJSON(b, &v2); err != nil {
		return nil, fmt.Errorf("neither layout: v1: %v; v2: %w", errV1, err)
	}
	return v2.checkpoint()
}

// strictJSON decodes one JSON object and nothing after it.
func strictJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the JSON object")
	}
	return nil
}

func header(policy, def *string) (*Checkpoint, error) {
	if policy == nil || *policy == "" {
		return nil, errors.New("no policyName")
	}
	if def == nil {
		return nil, errors.New("no defaultCpuSet")
	}
	c := &Checkpoint{Policy: *policy}
	var err error
	if c.Default, err = parseCPUs(*def); err != nil {
		return nil, fmt.Errorf("defaultCpuSet: %w", err)
	}
	return c, nil
}

// parseCPUs parses a cpuset as the kubelet prints it: a CPU list, "" for
// none.
func parseCPUs(s string) (cpuset.Set, error) {
	if s == "" {
		return cpuset.Set{}, nil
	}
	return cpuset.ParseList(s)
}

func (v *checkpointV1) checkpoint() (*Checkpoint, error) {
	c, err := header(v.PolicyName, v.DefaultCPUSet)
	if err != nil {
		return nil, err
	}
	c.Layout, c.ByID = "v1", map[string]cpuset.Set{}
	for id, s := range v.Entries {
		if c.ByID[id], err = parseCPUs(s); err != nil {
			return nil, fmt.Errorf("entries[%q]: %w", clip(id), err)
		}
	}
	return c, nil
}

func (v *checkpointV2) checkpoint() (*Checkpoint, error) {
	c, err := header(v.PolicyName, v.DefaultCPUSet)
	if err != nil {
		return nil, err
	}
	c.Layout, c.ByPod = "v2", map[string]map[string]cpuset.Set{}
	for uid, ctrs := range v.Entries {
		m := map[string]cpuset.Set{}
		for name, s := range ctrs {
			if m[name], err = parseCPUs(s); err != nil {
				return nil, fmt.Errorf("entries[%q][%q]: %w", clip(uid), clip(name), err)
			}
		}
		c.ByPod[uid] = m
	}
	return c, nil
}

// CPUs are the exclusive CPUs the checkpoint gives the container id
// (v1) or the container name of the pod uid (v2); false when it gives it
// none (it runs on the shared pool).
func (c *Checkpoint) CPUs(uid, name, id string) (cpuset.Set, bool) {
	var s cpuset.Set
	var ok bool
	if c.Layout == "v1" {
		s, ok = c.ByID[id]
	} else {
		s, ok = c.ByPod[uid][name]
	}
	return s, ok && !s.IsEmpty()
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
