package steer

import "strings"

// parseEthtoolC reads the output of ethtool -c (coalesce_reply_cb and the
// ioctl path's dump_coalesce) into a map keyed by ethtool's names (those
// of its JSON output): "Adaptive RX: on  TX: off" gives adaptive-rx and
// adaptive-tx (1 on, 0 off), "CQE mode RX: ...  TX: ..." cqe-mode-rx
// and cqe-mode-tx, and every "NAME: VALUE" line its NAME (rx-usecs,
// rx-frames, ...). A value of "n/a" (the driver does not report it) is
// left out of the map. The error, wrapping ErrText, names the line that
// is not ethtool's.
func parseEthtoolC(b []byte) (map[string]uint32, error) {
	const cmd = "ethtool -c"
	ls, err := textLines(cmd, b)
	if err != nil {
		return nil, err
	}
	if len(ls) == 0 {
		return nil, textErr(cmd, 0, "empty")
	}
	out := make(map[string]uint32)
	for i, l := range ls {
		t := strings.TrimSpace(l.text)
		if strings.HasPrefix(t, "Coalesce parameters for ") && strings.HasSuffix(t, ":") {
			if i != 0 {
				return nil, textErr(cmd, l.n, "a second header: the text holds more than one output")
			}
			continue
		}
		if textElided(t) {
			return nil, textErr(cmd, l.n, "the capture leaves lines out (%q)", textClip(t))
		}
		if err := coalesceLine(out, t); err != nil {
			return nil, textErr(cmd, l.n, "%v", err)
		}
	}
	if len(out) == 0 {
		return nil, textErr(cmd, 0, "no values")
	}
	return out, nil
}

// coalescePairs are the lines with an RX and a TX switch.
var coalescePairs = map[string]string{"Adaptive RX": "adaptive", "CQE mode RX": "cqe-mode"}

func coalesceLine(out map[string]uint32, t string) error {
	for prefix, key := range coalescePairs {
		if rest, ok := strings.CutPrefix(t, prefix+":"); ok {
			rx, tx, ok := strings.Cut(rest, "TX:")
			if !ok {
				return errf("%q has no TX: part", textClip(t))
			}
			if err := putSwitch(out, key+"-rx", strings.TrimSpace(rx)); err != nil {
				return err
			}
			return putSwitch(out, key+"-tx", strings.TrimSpace(tx))
		}
	}
	k, v, ok := textKV(t)
	if !ok || k == "" || strings.ContainsAny(k, " \t") {
		return errf("%q is not NAME: VALUE", textClip(t))
	}
	if _, dup := out[k]; dup {
		return errf("%s given twice", textClip(k))
	}
	if v == textNA {
		return nil
	}
	x, err := textU32(v)
	if err != nil {
		return errf("%s: %v", textClip(k), err)
	}
	out[k] = x
	return nil
}

func putSwitch(out map[string]uint32, key, v string) error {
	if v == textNA {
		return nil
	}
	on, err := textOnOff(v)
	if err != nil {
		return errf("%s: %v", key, err)
	}
	out[key] = 0
	if on {
		out[key] = 1
	}
	return nil
}
