package steer

import "strings"

// parseEthtoolK reads the output of ethtool -k (features.c's
// dump_features): "Features for IF:" (older ethtool: "Offload parameters
// for IF:"), then "NAME: on|off" per feature, a sub-feature indented by
// a tab (a capture may have lost it), followed by " [fixed]" when the
// feature cannot be changed, or " [requested on]"/" [requested off]" when
// the kernel did not apply a request (On is what is active); older
// ethtool's "Cannot get device ... settings: ERROR" lines are skipped,
// their features left out. A capture of
// only some lines (grep " on") gives only those features: a feature
// absent from the map is not known. The error, wrapping ErrText, names
// the line that is not ethtool's.
func parseEthtoolK(b []byte) (map[string]Feature, error) {
	const cmd = "ethtool -k"
	ls, err := textLines(cmd, b)
	if err != nil {
		return nil, err
	}
	if len(ls) == 0 {
		return nil, textErr(cmd, 0, "empty")
	}
	out := make(map[string]Feature)
	for i, l := range ls {
		t := strings.TrimSpace(l.text)
		if (strings.HasPrefix(t, "Features for ") || strings.HasPrefix(t, "Offload parameters for ")) && strings.HasSuffix(t, ":") {
			if i != 0 {
				return nil, textErr(cmd, l.n, "a second header: the text holds more than one output")
			}
			continue
		}
		if textElided(t) {
			return nil, textErr(cmd, l.n, "the capture leaves lines out (%q)", textClip(t))
		}
		if strings.HasPrefix(t, "Cannot get ") {
			// Older ethtool's perror for one offload it could not read,
			// on stderr, which a sosreport keeps in the same file: that
			// feature is not in the map.
			continue
		}
		name, f, err := featureLine(t)
		if err != nil {
			return nil, textErr(cmd, l.n, "%v", err)
		}
		if _, dup := out[name]; dup {
			return nil, textErr(cmd, l.n, "feature %s given twice", textClip(name))
		}
		out[name] = f
	}
	return out, nil
}

// featureLine reads "NAME: on|off[ SUFFIX]".
func featureLine(t string) (string, Feature, error) {
	i := strings.LastIndex(t, ": ")
	if i <= 0 {
		return "", Feature{}, errf("%q is not NAME: on|off", textClip(t))
	}
	name, v := t[:i], t[i+2:]
	var f Feature
	state, suffix, _ := strings.Cut(v, " ")
	on, err := textOnOff(state)
	if err != nil {
		return "", Feature{}, errf("feature %s: %v", textClip(name), err)
	}
	f.On = on
	switch suffix {
	case "":
	case "[fixed]":
		f.Fixed = true
	case "[requested on]", "[requested off]":
	default:
		return "", Feature{}, errf("feature %s: %q is not [fixed], [requested on] or [requested off]", textClip(name), textClip(suffix))
	}
	return name, f, nil
}
