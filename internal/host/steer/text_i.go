package steer

import "strings"

// driverKeys are the lines of ethtool -i (dump_drvinfo).
var driverKeys = map[string]bool{
	"driver": true, "version": true, "firmware-version": true, "expansion-rom-version": true,
	"bus-info": true, "supports-statistics": true, "supports-test": true,
	"supports-eeprom-access": true, "supports-register-dump": true, "supports-priv-flags": true,
}

// parseEthtoolI reads the output of ethtool -i (dump_drvinfo): "driver:",
// "version:", "firmware-version:", "expansion-rom-version:" (newer
// ethtool), "bus-info:" and the "supports-...: yes|no" lines; a value may
// be empty. The driver line must be there. The error, wrapping ErrText,
// names the line that is not ethtool's.
func parseEthtoolI(b []byte) (*DriverInfo, error) {
	const cmd = "ethtool -i"
	ls, err := textLines(cmd, b)
	if err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for _, l := range ls {
		t := strings.TrimSpace(l.text)
		if textElided(t) {
			return nil, textErr(cmd, l.n, "the capture leaves lines out (%q)", textClip(t))
		}
		k, v, ok := textKV(t)
		if !ok || !driverKeys[k] {
			return nil, textErr(cmd, l.n, "%q is not a line ethtool -i prints", textClip(t))
		}
		if _, dup := seen[k]; dup {
			return nil, textErr(cmd, l.n, "%s given twice", k)
		}
		seen[k] = v
	}
	d, ok := seen["driver"]
	if !ok || d == "" {
		return nil, textErr(cmd, 0, "no driver line")
	}
	return &DriverInfo{Driver: d, Version: seen["version"], Firmware: seen["firmware-version"], BusInfo: seen["bus-info"]}, nil
}
