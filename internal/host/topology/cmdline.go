package topology

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// Cmdline is the kernel command line, /proc/cmdline, split into
// parameters as the kernel splits it (kernel/params.c next_arg): on
// white space outside double quotes, "name=value" or a bare "name", with
// "-" and "_" the same in names. What follows "--" is for init and is not
// a kernel parameter.
type Cmdline struct {
	Raw    string
	Params []Param
}

// Param is one kernel parameter.
type Param struct {
	Name  string // as written
	Value string // unquoted; "" for a bare flag
	Set   bool   // "name=..." (even "name=")
}

// ReadCmdline reads root/proc/cmdline. A missing file is an error
// wrapping fs.ErrNotExist (captures often lack it).
func ReadCmdline(fsys kfile.FS) (*Cmdline, error) {
	root := fsys.Root()
	s, err := fsys.String(filepath.Join(root, "proc/cmdline"))
	if err != nil {
		return nil, err
	}
	return ParseCmdline(s), nil
}

// ParseCmdline splits a kernel command line into parameters.
func ParseCmdline(s string) *Cmdline {
	c := &Cmdline{Raw: strings.TrimRight(s, "\n")}
	rest := c.Raw
	for {
		rest = strings.TrimLeft(rest, " \t\n")
		if rest == "" {
			return c
		}
		// A word runs to the next blank outside double quotes.
		inQuote, i := false, 0
		for ; i < len(rest); i++ {
			ch := rest[i]
			if ch == '"' {
				inQuote = !inQuote
			} else if !inQuote && (ch == ' ' || ch == '\t' || ch == '\n') {
				break
			}
		}
		word := rest[:i]
		rest = rest[i:]
		if word == "--" {
			return c
		}
		name, value, set := strings.Cut(word, "=")
		// The kernel drops a leading quote of the word and the quote
		// that ends the value: "param=\"a b\"" and "\"param=a b\"".
		name = strings.TrimPrefix(name, `"`)
		if set {
			value = strings.Trim(value, `"`)
		} else {
			name = strings.TrimSuffix(name, `"`)
		}
		c.Params = append(c.Params, Param{Name: name, Value: value, Set: set})
	}
}

// Get returns the value of the last parameter named name ("-" and "_"
// alike), and whether it appears at all.
func (c *Cmdline) Get(name string) (string, bool) {
	if c == nil {
		return "", false
	}
	want := paramKey(name)
	val, ok := "", false
	for _, p := range c.Params {
		if paramKey(p.Name) == want {
			val, ok = p.Value, true
		}
	}
	return val, ok
}

// Has reports whether the parameter appears, with or without a value.
func (c *Cmdline) Has(name string) bool {
	_, ok := c.Get(name)
	return ok
}

func paramKey(s string) string { return strings.ReplaceAll(s, "-", "_") }

// IOMMUPassthrough says what the command line asks of the IOMMU's default
// DMA domain: "passthrough" (iommu=pt, iommu.passthrough=1 or on),
// "translated" (iommu=nopt, iommu.passthrough=0 or off), "off" (iommu=off,
// intel_iommu=off, amd_iommu=off), or "" when it says nothing and the
// kernel's build default applies (CONFIG_IOMMU_DEFAULT_PASSTHROUGH). The
// last word wins; param names the parameter that decided.
func (c *Cmdline) IOMMUPassthrough() (mode DMAMode, param string) {
	if c == nil {
		return "", ""
	}
	for _, p := range c.Params {
		switch paramKey(p.Name) {
		case "iommu":
			// x86 iommu= takes comma-separated words (arch/x86/kernel/pci-dma.c).
			for w := range strings.SplitSeq(p.Value, ",") {
				switch w {
				case "pt":
					mode, param = DMAModePassthrough, "iommu=pt"
				case "nopt":
					mode, param = DMAModeTranslated, "iommu=nopt"
				case "off":
					mode, param = DMAModeOff, "iommu=off"
				}
			}
		case "iommu.passthrough":
			switch strings.ToLower(p.Value) {
			case "1", "y", "on", "yes", "true":
				mode, param = DMAModePassthrough, p.Name+"="+p.Value
			case "0", "n", "off", "no", "false":
				mode, param = DMAModeTranslated, p.Name+"="+p.Value
			}
		case "intel_iommu", "amd_iommu":
			for w := range strings.SplitSeq(p.Value, ",") {
				if w == "off" {
					mode, param = DMAModeOff, p.Name+"=off"
				}
			}
		}
	}
	return mode, param
}

// iommuOn returns the parameter that turns an IOMMU on without naming a
// mode (intel_iommu=on, amd_iommu=force_enable), "" when none does. The
// last one counts.
func (c *Cmdline) iommuOn() string {
	if c == nil {
		return ""
	}
	on := ""
	for _, p := range c.Params {
		switch k := paramKey(p.Name); k {
		case "intel_iommu", "amd_iommu":
			for w := range strings.SplitSeq(p.Value, ",") {
				if (k == "intel_iommu" && w == "on") || (k == "amd_iommu" && w == "force_enable") {
					on = p.Name + "=" + w
				}
			}
		}
	}
	return on
}

// String returns the command line as read.
func (c *Cmdline) String() string {
	if c == nil {
		return ""
	}
	return c.Raw
}

// GoString is for test failures.
func (p Param) GoString() string {
	if p.Set {
		return fmt.Sprintf("%s=%q", p.Name, p.Value)
	}
	return p.Name
}
