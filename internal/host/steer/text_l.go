package steer

import (
	"sort"
	"strings"
)

// maxCur is a two-section reading of ethtool -l and -g: "Pre-set
// maximums:" then "Current hardware settings:". A capture that lost the
// section headers still has ethtool's order, so a key seen again starts
// the second section.
type maxCur struct {
	cmd      string
	header   string // "Channel parameters for ", "Ring parameters for "
	current  bool
	explicit bool // the text named a section
	max      map[string]string
	cur      map[string]string
	lineOf   map[string]int
}

func newMaxCur(cmd, header string) *maxCur {
	return &maxCur{cmd: cmd, header: header, max: map[string]string{}, cur: map[string]string{}, lineOf: map[string]int{}}
}

// read fills max and cur from the text; known lists the keys the command
// prints.
func (m *maxCur) read(b []byte, known map[string]bool) error {
	ls, err := textLines(m.cmd, b)
	if err != nil {
		return err
	}
	if len(ls) == 0 {
		return textErr(m.cmd, 0, "empty")
	}
	for i, l := range ls {
		t := strings.TrimSpace(l.text)
		switch {
		case strings.HasPrefix(t, m.header) && strings.HasSuffix(t, ":"):
			if i != 0 {
				return textErr(m.cmd, l.n, "a second %q header: the text holds more than one output", m.header+"...")
			}
			continue
		case t == "Pre-set maximums:":
			if m.current || len(m.max) > 0 {
				return textErr(m.cmd, l.n, "%q after values", t)
			}
			m.explicit = true
			continue
		case t == "Current hardware settings:":
			if m.current {
				return textErr(m.cmd, l.n, "a second %q", t)
			}
			m.current, m.explicit = true, true
			continue
		case textElided(t):
			return textErr(m.cmd, l.n, "the capture leaves lines out (%q)", textClip(t))
		}
		if err := m.value(l.n, t, known); err != nil {
			return err
		}
	}
	return nil
}

func (m *maxCur) value(n int, t string, known map[string]bool) error {
	k, v, ok := textKV(t)
	if !ok {
		return textErr(m.cmd, n, "%q is not KEY: VALUE", textClip(t))
	}
	if !known[k] {
		return textErr(m.cmd, n, "%q is not a field %s prints", textClip(k), m.cmd)
	}
	sec := m.max
	if m.current {
		sec = m.cur
	}
	if _, dup := sec[k]; dup {
		if m.current || m.explicit {
			return textErr(m.cmd, n, "%s given twice", k)
		}
		m.current, sec = true, m.cur
	}
	sec[k] = v
	m.lineOf[k] = n
	return nil
}

// u32 reads key of section sec (m.max or m.cur) as a count, "n/a" being 0
// (the kernel left the attribute out: the driver has none of that kind).
func (m *maxCur) u32(sec map[string]string, name, key string) (uint32, error) {
	v, ok := sec[key]
	if !ok {
		return 0, textErr(m.cmd, 0, "no %s %q line", name, key+":")
	}
	if v == textNA {
		return 0, nil
	}
	x, err := textU32(v)
	if err != nil {
		return 0, textErr(m.cmd, m.lineOf[key], "%s %s: %v", name, key, err)
	}
	return x, nil
}

// missing lists the keys of want that sec lacks.
func missing(sec map[string]string, want []string) []string {
	var out []string
	for _, k := range want {
		if _, ok := sec[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

var channelKeys = map[string]bool{"RX": true, "TX": true, "Other": true, "Combined": true}

// ParseEthtoolL reads the output of ethtool -l (channels_reply_cb and the
// ioctl path's dump_channels): "Channel parameters for IF:", "Pre-set
// maximums:" and "Current hardware settings:", each with "RX:", "TX:",
// "Other:" and "Combined:". A value is a count or "n/a" (the kernel
// reported none: 0 in Channels, as older ethtool prints it). Every line
// must be there; the error, wrapping ErrText, names the first that is
// not, or the line that is not ethtool's.
func ParseEthtoolL(b []byte) (*Channels, error) {
	m := newMaxCur("ethtool -l", "Channel parameters for ")
	if err := m.read(b, channelKeys); err != nil {
		return nil, err
	}
	want := []string{"RX", "TX", "Other", "Combined"}
	if miss := missing(m.max, want); len(miss) > 0 {
		return nil, textErr(m.cmd, 0, "no maximum for %s", strings.Join(miss, ", "))
	}
	if miss := missing(m.cur, want); len(miss) > 0 {
		return nil, textErr(m.cmd, 0, "no current setting for %s", strings.Join(miss, ", "))
	}
	var c Channels
	for _, f := range []struct {
		sec  map[string]string
		name string
		key  string
		dst  *uint32
	}{
		{m.max, "maximum", "RX", &c.MaxRX}, {m.max, "maximum", "TX", &c.MaxTX},
		{m.max, "maximum", "Other", &c.MaxOther}, {m.max, "maximum", "Combined", &c.MaxCombined},
		{m.cur, "current", "RX", &c.RX}, {m.cur, "current", "TX", &c.TX},
		{m.cur, "current", "Other", &c.Other}, {m.cur, "current", "Combined", &c.Combined},
	} {
		v, err := m.u32(f.sec, f.name, f.key)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	return &c, nil
}
