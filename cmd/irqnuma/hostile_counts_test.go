package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// The recorded replies' counts the hostile-count cases set: ETHTOOL_GRXRINGS's
// data (a __u64 at byte 8 of struct ethtool_rxnfc) and the channels
// reply's counts (ETHTOOL_A_CHANNELS_*: each a u32 attribute).
const (
	rxringsData      = 8    // ioctl.rxrings: ethtool_rxnfc.data
	channelsRXCount  = 0x50 // ethtool.channels: ETHTOOL_A_CHANNELS_RX_COUNT's value
	channelsCombMax  = 0x48 // ETHTOOL_A_CHANNELS_COMBINED_MAX's value
	channelsCombined = 0x68 // ETHTOOL_A_CHANNELS_COMBINED_COUNT's value
)

// hostileCountCase is a copy of the seed with eth0's recorded steering
// whose reply claims count; want is what the reading must call
// malformed.
type hostileCountCase struct {
	name  string
	patch func(t *testing.T, dir string)
	want  string
}

func hostileCountCases() []hostileCountCase {
	rings := func(v uint64) func(*testing.T, string) {
		return func(t *testing.T, dir string) { patchReply(t, dir, "ioctl.rxrings", rxringsData, 8, v) }
	}
	channels := func(combined, rx uint32) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			patchReply(t, dir, "ethtool.channels", channelsCombMax, 4, uint64(combined))
			patchReply(t, dir, "ethtool.channels", channelsCombined, 4, uint64(combined))
			patchReply(t, dir, "ethtool.channels", channelsRXCount, 4, uint64(rx))
		}
	}
	return []hostileCountCase{
		{"ring-2^24", rings(1 << 24), "rss-rings: malformed"},
		{"ring-2^31", rings(1<<31 - 1), "rss-rings: malformed"},
		{"ring-2^32", rings(1<<32 + 8), "rss-rings: malformed"}, // would wrap to 8 in a u32
		{"ring-17", rings(17), "claims 17 rx rings, but /sys/class/net shows 16 rx queues"},
		{"channels-2^31", channels(1<<31-1, 0), "channels: malformed"},
		{"channels-2^32", channels(1<<32-1, 1), "channels: malformed"}, // combined+rx wraps to 0 in a u32
		{"channels-17", channels(17, 0), "claims 17 combined and rx channels, but /sys/class/net shows 16 rx queues"},
	}
}

// patchReply writes v, of size bytes, at off of eth0's recorded reply
// key under the root dir.
func patchReply(t *testing.T, dir, key string, off, size int, v uint64) {
	t.Helper()
	hosttest.PutNative(t, filepath.Join(dir, "irqnuma/steer/eth0", key), off, size, v)
}

// TestHostileCounts: a recorded ring or channel count is a claim. Every
// command that reads eth0's steering answers within 1 s of CPU and 100
// MB on a count of 2^24 to 2^32, says the count is malformed, and never
// sizes anything by it.
func TestHostileCounts(t *testing.T) {
	t.Parallel()
	bin := hostileBinary(t)
	for _, tt := range hostileCountCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := seedWithSteering(t)
			tt.patch(t, root)
			for _, args := range [][]string{
				{"--root", root, "audit", "--fail-on", "never"},
				{"--root", root, "audit", "--fail-on", "never", "-o", "json"},
				{"--root", root, "map"},
				{"--root", root, "topology"},
				{"--root", root, "topology", "-o", "json"},
				{"--root", root, "irq", "list"},
				{"--root", root, "zc", "check", "eth0", "--queue", "0"},
				{"--root", root, "zc", "prepare", "eth0", "--queue", "1", "--port", "9000", "--dry-run"},
			} {
				r := runBin(t, bin, args...)
				checkBounds(t, args, r)
				if r.cpu > time.Second || r.maxRSS > 100<<20 {
					t.Errorf("%v: %v of CPU and %d MB, more than 1 s and 100 MB", args, r.cpu.Round(time.Millisecond), r.maxRSS>>20)
				}
				out := r.stdout + r.stderr
				if len(out) > 64<<10 {
					t.Errorf("%v: %d bytes of output: something was sized by the count", args, len(out))
				}
				if slicesContain(args, "audit") && !strings.Contains(out, tt.want) {
					t.Errorf("%v: exit %d, nothing says %q:\n%s", args, r.code, tt.want, clipOut(out))
				}
				t.Logf("%v: exit %d, %v, %d MB", args[2:], r.code, r.cpu.Round(time.Millisecond), r.maxRSS>>20)
			}
		})
	}
}
