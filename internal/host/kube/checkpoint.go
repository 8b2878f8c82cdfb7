package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/unknown"
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
	// ByID (v1) and ByPod (v2) are the entries the parse was asked for
	// (Want), their CPUs parsed; the file's others are not kept.
	ByID  map[string]Entry
	ByPod map[string]map[string]Entry
}

// Entry is one container's exclusive CPUs as the checkpoint says them:
// unknown, malformed, when its CPU list does not parse (an id past
// cpuset.MaxID among them), the reason's detail saying why.
type Entry struct {
	CPUs unknown.Value[cpuset.Set]
}

// Want names the entries a parse keeps: pods by UID (the v2 layout's
// keys) and containers by runtime ID (v1's). The file's other entries
// are only checked for the layout, so a parse holds what the pods asked
// for need, however many entries the file claims.
type Want struct{ UIDs, IDs map[string]bool }

// parseCheckpoint parses cpu_manager_state, keeping the entries want
// names. It reads the file as the kubelet's encoding/json does (keys
// matched without regard to case, the last of a repeated key winning,
// null leaving a field unset) and, as the kubelet does, takes the v1
// layout when every entry is flat and the v2 one when every entry is a
// container map; anything else is an error. One pass over the bytes,
// once they are known to be JSON: no entry it was not asked for is
// decoded.
func parseCheckpoint(b []byte, want Want) (*Checkpoint, error) {
	if !json.Valid(b) {
		return nil, json.Unmarshal(b, &struct{}{}) // the syntax error, with its offset
	}
	s := &jsonScan{b: b}
	switch k := s.kind(); k {
	case 'n':
		return nil, errors.New("no policyName")
	case '{':
	default:
		return nil, fmt.Errorf("a JSON %s, not an object", kindName(k))
	}
	var policy, def *string
	e := entries{want: want}
	err := s.object(func(key []byte) error {
		name := s.str(key)
		switch {
		case strings.EqualFold(name, "policyName"):
			return s.optString(&policy, "policyName")
		case strings.EqualFold(name, "defaultCpuSet"):
			return s.optString(&def, "defaultCpuSet")
		case strings.EqualFold(name, "checksum"):
			return s.checksum()
		case strings.EqualFold(name, "entries"):
			return e.read(s)
		}
		s.skip()
		return nil
	})
	if err != nil {
		return nil, err
	}
	layout, err := e.layout()
	if err != nil {
		return nil, err
	}
	c, err := header(policy, def)
	if err != nil {
		return nil, err
	}
	c.Layout = layout
	if layout == "v1" {
		c.ByID = map[string]Entry{}
		for id, s := range e.v1 {
			c.ByID[id] = entry(s)
		}
		return c, nil
	}
	c.ByPod = map[string]map[string]Entry{}
	for uid, ctrs := range e.v2 {
		m := map[string]Entry{}
		for name, s := range ctrs {
			m[name] = entry(s)
		}
		c.ByPod[uid] = m
	}
	return c, nil
}

// entries gathers the checkpoint's entries: those want names, as v1 and
// as v2 would read them, and what says which layout the file is.
type entries struct {
	want Want
	v1   map[string]string            // container ID → CPU list
	v2   map[string]map[string]string // pod UID → container → CPU list
	// flat and nested say some entry is a string (v1's) or an object
	// (v2's); badV2 is the first v2 entry whose container's value is no
	// string, which fails the v2 layout.
	flat, nested bool
	badV2        string
}

// read reads one "entries" value: null (no entries, as encoding/json
// sets a map to nil) or an object of entries.
func (e *entries) read(s *jsonScan) error {
	switch k := s.kind(); k {
	case 'n':
		s.skip()
		e.v1, e.v2 = nil, nil
		return nil
	case '{':
	default:
		return fmt.Errorf("entries: a JSON %s, not an object", kindName(k))
	}
	return s.object(func(key []byte) error {
		switch k := s.kind(); k {
		case '"':
			e.flat = true
			if id, ok := s.want(e.want.IDs, key); ok {
				e.setV1(id, s.str(s.rawString()))
				return nil
			}
			s.skip()
		case 'n':
			s.skip()
			if id, ok := s.want(e.want.IDs, key); ok {
				e.setV1(id, "")
			}
			if uid, ok := s.want(e.want.UIDs, key); ok {
				e.setV2(uid, nil)
			}
		case '{':
			e.nested = true
			return e.pod(s, key)
		default:
			return fmt.Errorf("entries[%q]: a JSON %s, neither a CPU list (v1) nor a map of containers (v2)", clip(s.str(key)), kindName(k))
		}
		return nil
	})
}

// pod reads a v2 entry, the object of one pod's containers, keeping it
// when want names the pod.
func (e *entries) pod(s *jsonScan, key []byte) error {
	uid, keep := s.want(e.want.UIDs, key)
	var ctrs map[string]string
	if keep {
		ctrs = map[string]string{}
	}
	err := s.object(func(name []byte) error {
		switch k := s.kind(); {
		case k == '"' && keep:
			ctrs[s.str(name)] = s.str(s.rawString())
		case k == '"':
			s.skip()
		case k == 'n':
			s.skip()
			if keep {
				ctrs[s.str(name)] = ""
			}
		default:
			if e.badV2 == "" {
				e.badV2 = fmt.Sprintf("entries[%q][%q]: a JSON %s, not a CPU list", clip(s.str(key)), clip(s.str(name)), kindName(k))
			}
			s.skip()
		}
		return nil
	})
	if keep {
		e.setV2(uid, ctrs)
	}
	return err
}

func (e *entries) setV1(id, cpus string) {
	if e.v1 == nil {
		e.v1 = map[string]string{}
	}
	e.v1[id] = cpus
}

func (e *entries) setV2(uid string, ctrs map[string]string) {
	if e.v2 == nil {
		e.v2 = map[string]map[string]string{}
	}
	e.v2[uid] = ctrs
}

// layout is the file's: v1 when no entry is an object (no entries at
// all included), v2 when none is a string and each container's value is
// one.
func (e *entries) layout() (string, error) {
	switch {
	case !e.nested:
		return "v1", nil
	case e.flat:
		return "", errors.New("neither layout: entries mix CPU lists (v1) and maps of containers (v2)")
	case e.badV2 != "":
		return "", fmt.Errorf("neither layout: v1: entries are not CPU lists; v2: %s", e.badV2)
	}
	return "v2", nil
}

// entry parses one entry's CPU list.
func entry(s string) Entry {
	cpus, err := parseCPUs(s)
	if err != nil {
		return Entry{CPUs: unknown.NotAs[cpuset.Set](unknown.KindMalformed, err.Error())}
	}
	return Entry{CPUs: unknown.Of(cpus)}
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

// CPUs is the entry the checkpoint has for the container id (v1) or the
// container name of the pod uid (v2); false when it has none giving it
// CPUs (it runs on the shared pool). An entry whose CPUs are malformed
// is one, its CPUs unknown.
func (c *Checkpoint) CPUs(uid, name, id string) (Entry, bool) {
	var e Entry
	var ok bool
	if c.Layout == "v1" {
		e, ok = c.ByID[id]
	} else {
		e, ok = c.ByPod[uid][name]
	}
	return e, ok && (!e.CPUs.Known() || !e.CPUs.Or(cpuset.Set{}).IsEmpty())
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// jsonScan walks a document json.Valid has passed, so it checks no
// syntax: values are looked at by their first byte and skipped without
// being decoded, and only a string asked for becomes a Go string.
type jsonScan struct {
	b []byte
	i int
}

// kind is the first byte of the value at the scan, after white space:
// '"', '{', '[', 'n', 't', 'f', or a number's first byte.
func (s *jsonScan) kind() byte {
	for s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r' {
		s.i++
	}
	return s.b[s.i]
}

// kindName names a kind for an error.
func kindName(k byte) string {
	switch k {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}

// rawString consumes the string at the scan and returns it as written,
// quotes included.
func (s *jsonScan) rawString() []byte {
	s.kind()
	start := s.i
	for s.i++; s.b[s.i] != '"'; s.i++ {
		if s.b[s.i] == '\\' {
			s.i++
		}
	}
	s.i++
	return s.b[start:s.i]
}

// str decodes a raw string: as it is when it holds no escape and only
// ASCII, else as encoding/json does (escapes undone, bad UTF-8 replaced).
func (s *jsonScan) str(raw []byte) string {
	if plain(raw) {
		return string(raw[1 : len(raw)-1])
	}
	var out string
	json.Unmarshal(raw, &out) // valid JSON: it cannot fail
	return out
}

// want reports whether the raw string key is in m, and the key decoded;
// a plain key is looked up without being copied.
func (s *jsonScan) want(m map[string]bool, raw []byte) (string, bool) {
	if plain(raw) {
		if k := raw[1 : len(raw)-1]; m[string(k)] {
			return string(k), true
		}
		return "", false
	}
	k := s.str(raw)
	return k, m[k]
}

func plain(raw []byte) bool {
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// skip consumes the value at the scan.
func (s *jsonScan) skip() {
	switch s.kind() {
	case '"':
		s.rawString()
	case '{', '[':
		depth := 0
		for {
			switch s.b[s.i] {
			case '"':
				s.rawString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				return
			}
		}
	default: // a number, true, false or null
		for s.i < len(s.b) && !strings.ContainsRune(",}] \t\n\r", rune(s.b[s.i])) {
			s.i++
		}
	}
}

// object consumes the object at the scan, calling fn with each member's
// raw key; fn consumes the member's value.
func (s *jsonScan) object(fn func(key []byte) error) error {
	s.kind()
	s.i++ // '{'
	if s.kind() == '}' {
		s.i++
		return nil
	}
	for {
		key := s.rawString()
		s.kind()
		s.i++ // ':'
		if err := fn(key); err != nil {
			return err
		}
		s.kind()
		s.i++ // ',' or '}'
		if s.b[s.i-1] == '}' {
			return nil
		}
	}
}

// optString reads a string field into *v: nil for null, as
// encoding/json leaves a pointer.
func (s *jsonScan) optString(v **string, field string) error {
	switch k := s.kind(); k {
	case 'n':
		s.skip()
		*v = nil
	case '"':
		str := s.str(s.rawString())
		*v = &str
	default:
		return fmt.Errorf("%s: a JSON %s, not a string", field, kindName(k))
	}
	return nil
}

// checksum checks the checksum field is what the kubelet's uint64 takes:
// null, or an integer in its range.
func (s *jsonScan) checksum() error {
	k := s.kind()
	start := s.i
	s.skip()
	switch {
	case k == 'n':
		return nil
	case k == '"' || k == '{' || k == '[' || k == 't' || k == 'f':
		return fmt.Errorf("checksum: a JSON %s, not a number", kindName(k))
	}
	if _, err := strconv.ParseUint(string(s.b[start:s.i]), 10, 64); err != nil {
		return fmt.Errorf("checksum %s is not a uint64", clip(string(s.b[start:s.i])))
	}
	return nil
}
