package steer

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/unknown"
)

// YNLDump is what the netdev family's dumps printed by the kernel's ynl
// tool (tools/net/ynl: `--dump queue-get`, `--dump napi-get`, `--do
// napi-get`) say: Python's repr of a list of dicts, or of one dict.
type YNLDump struct {
	Queues []NetdevQueue
	NAPIs  []NAPI
	// Ifindex lists the ifindex of each entry read, in order (queues,
	// then NAPIs); 0 where the entry had none.
	Ifindex []int
	// Elided says the capture's author left entries out ("[...]"): the
	// lists hold what is there, not every queue or NAPI.
	Elided bool
}

// maxYNLDepth bounds the nesting of a dump's values.
const maxYNLDepth = 16

// parseYNL reads ynl's output of queue-get and napi-get: each dict with a
// 'type' is a queue ('id', 'type' rx|tx, 'napi-id' when it has one),
// each other dict with an 'id' a NAPI instance ('irq' when it has one,
// else -1; 'pid' when threaded; 'defer-hard-irqs', 'gro-flush-timeout',
// 'irq-suspend-timeout' and 'threaded' when the kernel reports them).
// Attributes the model does not keep are read and left. The list's
// brackets and the commas between entries may have been cut along with
// entries the author elided; a line "[...]" sets Elided. The error,
// wrapping ErrText, names what is not Python's repr of a netdev dump.
func parseYNL(b []byte) (*YNLDump, error) {
	const cmd = "ynl netdev"
	ls, err := textLines(cmd, b)
	if err != nil {
		return nil, err
	}
	out := &YNLDump{}
	var sb strings.Builder
	for _, l := range ls {
		t := strings.TrimSpace(l.text)
		if t == "[...]" || t == "..." || strings.HasPrefix(t, "[...") {
			out.Elided = true
			continue
		}
		sb.WriteString(l.text)
		sb.WriteByte('\n')
	}
	p := &pyParser{s: sb.String()}
	var dicts []map[string]any
	for {
		p.skipTop()
		if p.i >= len(p.s) {
			break
		}
		if p.s[p.i] != '{' {
			return nil, textErr(cmd, 0, "at byte %d: %q where a dict should begin", p.i, textClip(p.s[p.i:]))
		}
		v, err := p.value(0)
		if err != nil {
			return nil, textErr(cmd, 0, "%v", err)
		}
		dicts = append(dicts, v.(map[string]any))
	}
	if len(dicts) == 0 {
		return nil, textErr(cmd, 0, "no entries")
	}
	var qIf, nIf []int
	for i, d := range dicts {
		if err := out.add(d, &qIf, &nIf); err != nil {
			return nil, textErr(cmd, 0, "entry %d: %v", i+1, err)
		}
	}
	out.Ifindex = append(qIf, nIf...)
	return out, nil
}

func (y *YNLDump) add(d map[string]any, qIf, nIf *[]int) error {
	ifindex, _, err := pyInt(d, "ifindex", 0, 1<<31-1)
	if err != nil {
		return err
	}
	id, ok, err := pyInt(d, "id", 0, 1<<32-1)
	if err != nil {
		return err
	}
	if !ok {
		return errf("no 'id'")
	}
	if t, isQueue := d["type"]; isQueue {
		ts, _ := t.(string)
		if ts != string(QueueTypeRX) && ts != string(QueueTypeTX) {
			return errf("queue type %v is not 'rx' or 'tx'", t)
		}
		napi, _, err := pyInt(d, "napi-id", 0, 1<<32-1)
		if err != nil {
			return err
		}
		y.Queues = append(y.Queues, NetdevQueue{ID: uint32(id), Type: QueueType(ts), NAPI: uint32(napi)})
		*qIf = append(*qIf, int(ifindex))
		return nil
	}
	n, err := napiOf(d, uint32(id))
	if err != nil {
		return err
	}
	y.NAPIs = append(y.NAPIs, n)
	*nIf = append(*nIf, int(ifindex))
	return nil
}

func napiOf(d map[string]any, id uint32) (NAPI, error) {
	n := NAPI{ID: id, IRQ: unknown.Not[int](NoIRQ)}
	irq, ok, err := pyInt(d, "irq", 0, 1<<31-1)
	if err != nil {
		return n, err
	}
	if ok {
		n.IRQ = unknown.Of(int(irq))
	}
	pid, _, err := pyInt(d, "pid", 0, 1<<31-1)
	if err != nil {
		return n, err
	}
	n.PID = int(pid)
	if v, ok, err := pyInt(d, "defer-hard-irqs", 0, 1<<32-1); err != nil {
		return n, err
	} else if ok {
		u := uint32(v)
		n.DeferHardIRQs = &u
	}
	for _, f := range []struct {
		key string
		dst **uint64
	}{{"gro-flush-timeout", &n.GROFlushTimeout}, {"irq-suspend-timeout", &n.IRQSuspendTimeout}} {
		v, ok, err := pyInt(d, f.key, 0, 1<<63-1)
		if err != nil {
			return n, err
		}
		if ok {
			u := uint64(v)
			*f.dst = &u
		}
	}
	if t, ok := d["threaded"]; ok {
		var on bool
		switch t {
		case "enabled", "busy-poll":
			on = true
		case "disabled":
		default:
			return n, errf("threaded %v is not 'enabled', 'disabled' or 'busy-poll'", t)
		}
		n.Threaded = &on
	}
	return n, nil
}

// pyInt reads d[key] as an integer in [lo, hi]; ok is false when absent.
func pyInt(d map[string]any, key string, lo, hi int64) (int64, bool, error) {
	v, ok := d[key]
	if !ok {
		return 0, false, nil
	}
	x, isInt := v.(int64)
	if !isInt || x < lo || x > hi {
		return 0, false, errf("'%s' is %v, not an integer from %d to %d", key, v, lo, hi)
	}
	return x, true, nil
}

// pyParser reads the Python literals ynl prints: dicts, lists, ints,
// strings, None, True and False.
type pyParser struct {
	s string
	i int
}

// skipTop skips what may lie between a dump's entries: white space, the
// list's brackets and commas.
func (p *pyParser) skipTop() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n[],", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) skipSpace() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *pyParser) value(depth int) (any, error) {
	if depth > maxYNLDepth {
		return nil, p.errorf("nested deeper than %d", maxYNLDepth)
	}
	p.skipSpace()
	if p.i >= len(p.s) {
		return nil, p.errorf("the text ends where a value should be")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.dict(depth)
	case c == '[':
		return p.list(depth)
	case c == '\'' || c == '"':
		return p.str()
	case c == 'b' && p.i+1 < len(p.s) && (p.s[p.i+1] == '\'' || p.s[p.i+1] == '"'):
		p.i++ // bytes: b'...'
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.num()
	}
	for _, w := range []struct {
		word string
		v    any
	}{{"None", nil}, {"True", true}, {"False", false}} {
		if strings.HasPrefix(p.s[p.i:], w.word) {
			p.i += len(w.word)
			return w.v, nil
		}
	}
	return nil, p.errorf("%q is not a Python value", textClip(p.s[p.i:]))
}

func (p *pyParser) dict(depth int) (any, error) {
	p.i++ // {
	out := map[string]any{}
	for {
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return out, nil
		}
		k, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		ks, ok := k.(string)
		if !ok {
			return nil, p.errorf("a dict key %v that is not a string", k)
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.errorf("no ':' after the key %q", textClip(ks))
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if _, dup := out[ks]; dup {
			return nil, p.errorf("key %q given twice", textClip(ks))
		}
		out[ks] = v
		if err := p.sep('}'); err != nil {
			return nil, err
		}
	}
}

func (p *pyParser) list(depth int) (any, error) {
	p.i++ // [
	var out []any
	for {
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return out, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if err := p.sep(']'); err != nil {
			return nil, err
		}
	}
}

// sep reads a ',' or leaves the closing byte for the caller.
func (p *pyParser) sep(closing byte) error {
	p.skipSpace()
	switch {
	case p.i >= len(p.s):
		return p.errorf("the text ends inside a %s", map[byte]string{'}': "dict", ']': "list"}[closing])
	case p.s[p.i] == ',':
		p.i++
		return nil
	case p.s[p.i] == closing:
		return nil
	}
	return p.errorf("%q where ',' or '%c' should be", textClip(p.s[p.i:]), closing)
}

func (p *pyParser) num() (any, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	v, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
	if err != nil {
		return nil, p.errorf("%q is not a 64-bit integer", textClip(p.s[start:p.i]))
	}
	return v, nil
}

func (p *pyParser) str() (any, error) {
	q := p.s[p.i]
	p.i++
	var sb strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == q:
			return sb.String(), nil
		case c == '\n':
			return nil, p.errorf("a line break inside a string")
		case c == '\\' && p.i < len(p.s):
			sb.WriteByte(p.s[p.i])
			p.i++
		default:
			sb.WriteByte(c)
		}
	}
	return nil, p.errorf("the text ends inside a string")
}
