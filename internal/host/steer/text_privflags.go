package steer

import "strings"

// parseEthtoolPrivFlags reads the output of ethtool --show-priv-flags
// (privflags.c): "Private flags for IF:" then "NAME: on|off" per flag,
// the names padded to one width ("%-*s: %s"). The error, wrapping
// ErrText, names the line that is not ethtool's.
func parseEthtoolPrivFlags(b []byte) (map[string]bool, error) {
	const cmd = "ethtool --show-priv-flags"
	ls, err := textLines(cmd, b)
	if err != nil {
		return nil, err
	}
	if len(ls) == 0 {
		return nil, textErr(cmd, 0, "empty")
	}
	out := make(map[string]bool)
	for i, l := range ls {
		t := strings.TrimSpace(l.text)
		if strings.HasPrefix(t, "Private flags for ") && strings.HasSuffix(t, ":") {
			if i != 0 {
				return nil, textErr(cmd, l.n, "a second header: the text holds more than one output")
			}
			continue
		}
		if textElided(t) {
			return nil, textErr(cmd, l.n, "the capture leaves lines out (%q)", textClip(t))
		}
		i := strings.LastIndex(t, ":")
		if i <= 0 {
			return nil, textErr(cmd, l.n, "%q is not NAME: on|off", textClip(t))
		}
		name := strings.TrimSpace(t[:i])
		on, err := textOnOff(strings.TrimSpace(t[i+1:]))
		if err != nil {
			return nil, textErr(cmd, l.n, "flag %s: %v", textClip(name), err)
		}
		if _, dup := out[name]; dup {
			return nil, textErr(cmd, l.n, "flag %s given twice", textClip(name))
		}
		out[name] = on
	}
	return out, nil
}
