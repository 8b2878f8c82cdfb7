package tune

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// PinConfig is what `irqnuma irq pin --config FILE` reads: the options
// of irq pin, one entry per NIC, so a boot-time unit can apply a pin that
// was worked out once. The file is YAML:
//
//	# /etc/irqnuma/pin.yaml
//	nics:
//	  - nic: eth0
//	    strategy: spread   # spread (default) or node
//	    exclude: 20-23     # leave these CPUs out (list form)
//	    xps: true          # also set xps_cpus of the tx queues
//	  - nic: eth1
//	    node: 1            # this node's CPUs instead of the NIC's own
//	  - nic: eth2
//	    cpus: 8-15         # exactly these CPUs (not with node)
//
// Each key means what the flag of the same name means. Unknown keys,
// a NIC listed twice, and values the flags would refuse are errors that
// name the entry.
type PinConfig struct {
	NICs []PinEntry
}

// PinEntry is one NIC's options.
type PinEntry struct {
	NIC     string
	Options PlanOptions
}

// pinFile is the YAML form.
type pinFile struct {
	NICs []pinFileEntry `yaml:"nics"`
}

type pinFileEntry struct {
	NIC      string  `yaml:"nic"`
	Strategy string  `yaml:"strategy,omitempty"`
	Node     *int    `yaml:"node,omitempty"`
	CPUs     *string `yaml:"cpus,omitempty"`
	Exclude  string  `yaml:"exclude,omitempty"`
	XPS      bool    `yaml:"xps,omitempty"`
}

// maxConfigSize bounds a config file; a real one is a few hundred bytes.
const maxConfigSize = 1 << 20

// ErrConfig is wrapped by every error about a config file's content.
var ErrConfig = usage.New("bad pin config")

// ReadPinConfig reads and parses a config file.
func ReadPinConfig(path string) (*PinConfig, error) {
	live, err := kfile.Open("/") // a file of this machine, not of --root
	if err != nil {
		return nil, fmt.Errorf("pin config: %w", err)
	}
	b, err := live.ReadLimit(path, maxConfigSize)
	if err != nil {
		return nil, fmt.Errorf("pin config: %w", err)
	}
	c, err := parsePinConfig(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// parsePinConfig parses the YAML text of a config.
func parsePinConfig(b []byte) (*PinConfig, error) {
	var f pinFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: empty file: want a nics: list", ErrConfig)
		}
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if err := checkKeys(&doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if err := doc.Decode(&f); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%w: %s", ErrConfig, strings.Join(te.Errors, "; "))
		}
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: more than one YAML document", ErrConfig)
	}
	if len(f.NICs) == 0 {
		return nil, fmt.Errorf("%w: the nics list is empty or missing", ErrConfig)
	}
	c := &PinConfig{}
	for i, e := range f.NICs {
		where := fmt.Sprintf("nics[%d]", i)
		if e.NIC != "" {
			where += " (" + e.NIC + ")"
		}
		o, err := e.options()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrConfig, where, err)
		}
		if slices.ContainsFunc(c.NICs, func(p PinEntry) bool { return p.NIC == e.NIC }) {
			return nil, fmt.Errorf("%w: %s: NIC listed twice", ErrConfig, where)
		}
		c.NICs = append(c.NICs, PinEntry{NIC: e.NIC, Options: o})
	}
	return c, nil
}

// The keys a config takes, at the top and in a NIC's entry.
var (
	topKeys   = []string{"nics"}
	entryKeys = []string{"nic", "node", "cpus", "exclude", "strategy", "xps"}
)

// checkKeys refuses a key the config does not take, naming its line and
// the NIC entry it is in, and the keys that are taken.
func checkKeys(doc *yaml.Node) error {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return errors.New("want a mapping with a nics: list")
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if !slices.Contains(topKeys, k.Value) {
			return fmt.Errorf("line %d: unknown key %q at the top (want nics)", k.Line, k.Value)
		}
		if v.Kind != yaml.SequenceNode {
			continue // the typed decode says what is wrong
		}
		for n, e := range v.Content {
			if e.Kind != yaml.MappingNode {
				continue
			}
			where := fmt.Sprintf("nics[%d]", n)
			for j := 0; j+1 < len(e.Content); j += 2 {
				if e.Content[j].Value == "nic" {
					where += " (" + e.Content[j+1].Value + ")"
				}
			}
			for j := 0; j+1 < len(e.Content); j += 2 {
				if key := e.Content[j]; !slices.Contains(entryKeys, key.Value) {
					return fmt.Errorf("%s: line %d: unknown key %q (want %s)", where, key.Line, key.Value, strings.Join(entryKeys, ", "))
				}
			}
		}
	}
	return nil
}

func (e pinFileEntry) options() (PlanOptions, error) {
	o := PlanOptions{Strategy: StrategySpread, XPS: e.XPS}
	var err error
	switch {
	case e.NIC == "":
		return o, errors.New("nic: missing")
	case strings.ContainsAny(e.NIC, "/ \t\n") || len(e.NIC) > 15:
		return o, fmt.Errorf("nic %q: not an interface name", e.NIC)
	}
	if e.Strategy != "" {
		if o.Strategy, err = ParseStrategy(e.Strategy); err != nil {
			return o, err
		}
	}
	if e.Node != nil && e.CPUs != nil {
		return o, errors.New("node and cpus are exclusive")
	}
	if e.Node != nil {
		if *e.Node < 0 {
			return o, fmt.Errorf("node %d: want a node id", *e.Node)
		}
		o.Node = new(*e.Node)
	}
	if e.CPUs != nil {
		if o.CPUs, err = cpuset.ParseList(strings.TrimSpace(*e.CPUs)); err != nil {
			return o, fmt.Errorf("cpus: %w", err)
		}
		if o.CPUs.IsEmpty() {
			return o, errors.New("cpus: empty list")
		}
	}
	if o.Exclude, err = cpuset.ParseList(strings.TrimSpace(e.Exclude)); err != nil {
		return o, fmt.Errorf("exclude: %w", err)
	}
	return o, nil
}

// Names returns the NICs of the config, in its order.
func (c *PinConfig) Names() []string {
	out := make([]string, len(c.NICs))
	for i, e := range c.NICs {
		out[i] = e.NIC
	}
	return out
}

// FormatPinConfig returns the YAML text of a config that sets opt for each NIC:
// what `irq pin NIC... [flags]` would do, as a file. ParsePinConfig reads
// it back to the same options.
func FormatPinConfig(nics []string, opt PlanOptions) []byte {
	var b strings.Builder
	b.WriteString("# irqnuma irq pin --config: one entry per NIC\nnics:\n")
	for _, n := range nics {
		fmt.Fprintf(&b, "  - nic: %s\n", n)
		if opt.Strategy != "" && opt.Strategy != StrategySpread {
			fmt.Fprintf(&b, "    strategy: %s\n", opt.Strategy)
		}
		if opt.Node != nil {
			fmt.Fprintf(&b, "    node: %d\n", *opt.Node)
		}
		if !opt.CPUs.IsEmpty() {
			fmt.Fprintf(&b, "    cpus: %s\n", strconv.Quote(opt.CPUs.List()))
		}
		if !opt.Exclude.IsEmpty() {
			fmt.Fprintf(&b, "    exclude: %s\n", strconv.Quote(opt.Exclude.List()))
		}
		if opt.XPS {
			b.WriteString("    xps: true\n")
		}
	}
	return []byte(b.String())
}

// planPinConfig plans the NICs of a config. NICs with equal options are
// planned together, in the config's order, exactly as one
// `irq pin NIC... [flags]` would plan them (so NICs that share a target
// set continue one rotation); NICs with other options are planned after,
// group by group, and the plans are joined. The joined plan's Strategy is
// the one every NIC uses, or "" when they differ.
func planPinConfig(h *topology.Host, t *irq.Table, c *PinConfig) (*pinPlan, error) {
	type group struct {
		nics []string
		opt  PlanOptions
	}
	var groups []group
	for _, e := range c.NICs {
		i := slices.IndexFunc(groups, func(g group) bool { return sameOptions(g.opt, e.Options) })
		if i < 0 {
			groups = append(groups, group{opt: e.Options})
			i = len(groups) - 1
		}
		groups[i].nics = append(groups[i].nics, e.NIC)
	}
	var out *pinPlan
	for _, g := range groups {
		p, err := planPin(h, t, g.nics, g.opt)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = p
			continue
		}
		if out.Strategy != p.Strategy {
			out.Strategy = ""
		}
		out.Targets = append(out.Targets, p.Targets...)
		out.Steps = append(out.Steps, p.Steps...)
		out.Notes = append(out.Notes, p.Notes...)
	}
	return out, nil
}

func sameOptions(a, b PlanOptions) bool {
	return a.Strategy == b.Strategy && (a.Node == nil) == (b.Node == nil) && (a.Node == nil || *a.Node == *b.Node) &&
		a.CPUs.Equal(b.CPUs) && a.Exclude.Equal(b.Exclude) && a.XPS == b.XPS && slices.Equal(a.IRQs, b.IRQs)
}
