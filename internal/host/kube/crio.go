package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// IRQLoadBalancing is CRI-O's pod annotation for IRQs on a container's
// CPUs (pkg/annotations/v2: IRQLoadBalancing). A container's own,
// IRQLoadBalancing + "/" + its name, comes before the pod's.
const IRQLoadBalancing = "irq-load-balancing.crio.io"

// crioStorage are the folders where containers/storage, as CRI-O ships
// it (storage.conf's graphroot and runroot), keeps each container's
// files: DRIVER-containers/ID/userdata/config.json, the OCI config CRI-O
// wrote (server/container_create.go saves it to both).
var crioStorage = []string{"var/lib/containers/storage", "run/containers/storage"}

// maxCRIOConfig bounds a container's OCI config: its environment,
// mounts and annotations, far below this on any real host.
const maxCRIOConfig = 4 << 20

// crioConfigs are the folders that may hold a container's userdata: each
// DRIVER-containers folder of CRI-O's storage under the root (overlay
// on most hosts), read once per resolve.
func crioConfigs(fsys kfile.FS) []string {
	var out []string
	for _, root := range crioStorage {
		ents, err := fsys.ReadDir(fsys.Path(root))
		if err != nil {
			continue // no CRI-O storage here: another runtime, or none
		}
		for _, e := range ents {
			if e.IsDir() && strings.HasSuffix(e.Name(), "-containers") {
				out = append(out, path.Join(root, e.Name()))
			}
		}
	}
	return out
}

// readIRQBalancing reads container id's OCI config in CRI-O's storage
// (dirs, from crioConfigs) and what its pod asked of IRQs on its CPUs;
// nil and the zero Reason when no config is found, nil and why when one
// cannot be read or is malformed.
func readIRQBalancing(fsys kfile.FS, dirs []string, id, name string) (*proc.IRQBalancing, unknown.Reason) {
	if id == "" || strings.ContainsAny(id, "/.") {
		return nil, unknown.Reason{}
	}
	for _, d := range dirs {
		rel := path.Join(d, id, "userdata", "config.json")
		f := fsys.Path(rel)
		b, err := fsys.ReadLimit(f, maxCRIOConfig)
		if kfile.IsNotExist(err) {
			continue
		}
		if errors.Is(err, os.ErrPermission) {
			return nil, unknown.Because(unknown.KindPermission, err.Error())
		}
		if err != nil {
			return nil, unknown.Because(unknown.KindFailed, err.Error())
		}
		ib, err := parseIRQBalancing(b, name)
		if err != nil {
			return nil, unknown.Because(unknown.KindMalformed, fmt.Sprintf("%s: %v", f, err))
		}
		ib.From, ib.File = f, rel
		return ib, unknown.Reason{}
	}
	return nil, unknown.Reason{}
}

// notCRIO is the IRQ balancing of a container another runtime runs.
var notCRIO = unknown.NotAs[proc.IRQBalancing](unknown.KindNotApplicable, "not a CRI-O container")

// noCRIOConfig says why a container CRI-O runs (its group is crio-ID)
// has no IRQ balancing read: no config of it where CRI-O keeps them.
func noCRIOConfig(id string) string {
	short := id
	if len(short) > 12 {
		short = short[:12] + "…"
	}
	return fmt.Sprintf("CRI-O runs container %s, but no DRIVER-containers/ID/userdata/config.json of it is under /%s or /%s (storage.conf's graphroot and runroot may be elsewhere; a capture may not hold it)",
		short, crioStorage[0], crioStorage[1])
}

// crioConfig is what irqnuma reads of an OCI runtime config (the
// runtime-spec's config.json): its annotations and the CPUs of its
// cgroup.
type crioConfig struct {
	Annotations map[string]string `json:"annotations,omitempty"`
	Linux       *linuxConfig      `json:"linux,omitempty"`
}

type linuxConfig struct {
	Resources *resourcesConfig `json:"resources,omitempty"`
}

type resourcesConfig struct {
	CPU *cpuConfig `json:"cpu,omitempty"`
}

type cpuConfig struct {
	CPUs string `json:"cpus,omitempty"`
}

// errNotObject is a config that is JSON but not an object.
var errNotObject = errors.New("not a JSON object")

// parseIRQBalancing reads a container's OCI config as CRI-O wrote it:
// the sandbox's allowed annotations are copied into every container's
// (internal/factory/container), so the container's own annotations say
// what CRI-O acts on. name is the container's name, for its own key.
func parseIRQBalancing(b []byte, name string) (*proc.IRQBalancing, error) {
	var c crioConfig
	if err := json.Unmarshal(b, &c); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			return nil, errNotObject
		}
		return nil, err
	}
	ib := &proc.IRQBalancing{CPUs: unknown.NotAs[cpuset.Set](unknown.KindNotReported, "the config has no linux.resources.cpu.cpus")}
	for _, k := range []string{IRQLoadBalancing + "/" + name, IRQLoadBalancing} {
		if v, ok := c.Annotations[k]; ok && (name != "" || k == IRQLoadBalancing) {
			ib.Value, ib.Key = v, k
			break
		}
	}
	// CRI-O's high-performance hooks: true (deprecated) and disable take
	// every CPU of the container, housekeeping all but the first CPU's
	// thread siblings.
	ib.Off = slices.Contains([]string{"true", "disable", "housekeeping"}, ib.Value)
	ib.Housekeeping = ib.Value == "housekeeping"
	if l := c.Linux; l != nil && l.Resources != nil && l.Resources.CPU != nil && l.Resources.CPU.CPUs != "" {
		cpus, err := cpuset.ParseList(l.Resources.CPU.CPUs)
		if err != nil {
			return nil, fmt.Errorf("linux.resources.cpu.cpus: %w", err)
		}
		ib.CPUs = unknown.Of(cpus)
	}
	return ib, nil
}

// RecordIRQBalancing is the config a snapshot keeps, at ib.File, for a
// container whose CRI-O config was read: only what parseIRQBalancing
// takes of it (the annotation, the CPUs). Nothing else of the config,
// whose environment may hold secrets, leaves the host.
func RecordIRQBalancing(ib proc.IRQBalancing) []byte {
	var c crioConfig
	if ib.Key != "" {
		c.Annotations = map[string]string{ib.Key: ib.Value}
	}
	if cpus, ok := ib.CPUs.Get(); ok {
		c.Linux = &linuxConfig{Resources: &resourcesConfig{CPU: &cpuConfig{CPUs: cpus.List()}}}
	}
	b, _ := json.Marshal(c) // strings and maps of strings: it cannot fail
	return b
}
