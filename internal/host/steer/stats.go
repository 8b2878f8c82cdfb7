package steer

import (
	"errors"
	"fmt"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// A NIC's ethtool statistics (ethtool -S) over the SIOCETHTOOL ioctl
// (include/uapi/linux/ethtool.h, net/ethtool/ioctl.c):
//
//   - ETHTOOL_GSSET_INFO: struct ethtool_sset_info is cmd, reserved (u32s),
//     sset_mask (u64, at 8), then one u32 per string set asked for (at
//     16). The kernel clears a set's bit when the driver has no such set,
//     and writes the counts of the sets it kept, in bit order.
//   - ETHTOOL_GSTRINGS: struct ethtool_gstrings is cmd, string_set, len
//     (u32s), then len names of ETH_GSTRING_LEN (32) bytes each, NUL
//     padded (at 12).
//   - ETHTOOL_GSTATS: struct ethtool_stats is cmd, n_stats (u32s), then
//     n_stats u64 values (at 8), in the names' order.
//
// The kernel fills as many names or values as the driver counts now,
// not as many as the buffer has room for; since a December 2025 fix to
// net/ethtool/ioctl.c (taken into stable kernels) it answers a len or
// n_stats that is not the current count with 0 and no data. The reads
// below ask with the count they expect and refuse any other answer; on
// an older kernel, a count that grew between two requests (a channel
// change) makes it write past the request, and the live ethnl.Asker's buffer
// ends at a guard page, so that is EFAULT (ethnl.Live's guard page), never a write
// into the program's memory.
const (
	ethtoolGStrings  = 0x1b
	ethtoolGStats    = 0x1d
	ethtoolGSsetInfo = 0x37

	ethSSStats    = 1 // ETH_SS_STATS
	ethGStringLen = 32

	ssetInfoSize = 16 + 4 // the header and one count
	gstringsHdr  = 12
	gstatsHdr    = 8

	// maxStats bounds the counters believed: mlx5 with 128 channels
	// has some 20,000; the kernel's own bound is S32_MAX / 32.
	maxStats = 1 << 17
)

// The recorded keys of the statistics' answers (irqnuma/steer/IF/KEY).
const (
	keyStatsCount = "ioctl.sset-info.stats"
	keyStatsNames = "ioctl.gstrings.stats"
	keyStats      = "ioctl.gstats"
)

// decodeSsetInfo reads GSSET_INFO asked for ETH_SS_STATS alone: the
// number of statistics, and false when the driver has none.
func decodeSsetInfo(b []byte) (uint32, bool, error) {
	if len(b) != ssetInfoSize {
		return 0, false, fmt.Errorf("ethtool_sset_info of %d bytes, want %d", len(b), ssetInfoSize)
	}
	mask := native.Uint64(b[8:])
	if mask&^(1<<ethSSStats) != 0 {
		return 0, false, fmt.Errorf("sset_mask %#x has sets that were not asked for", mask)
	}
	if mask == 0 {
		return 0, false, nil
	}
	n := native.Uint32(b[16:])
	if n > maxStats {
		return 0, false, fmt.Errorf("%d statistics, more than the %d believed", n, maxStats)
	}
	return n, true, nil
}

// newStatsRequest is a GSTRINGS or GSTATS buffer for n entries.
func newStatsRequest(cmd uint32, n uint32) []byte {
	if cmd == ethtoolGStrings {
		b := make([]byte, gstringsHdr+ethGStringLen*int(n))
		native.PutUint32(b, cmd)
		native.PutUint32(b[4:], ethSSStats)
		native.PutUint32(b[8:], n)
		return b
	}
	b := make([]byte, gstatsHdr+8*int(n))
	native.PutUint32(b, cmd)
	native.PutUint32(b[4:], n)
	return b
}

// errStatsChanged says the driver's statistics changed between the
// requests (a channel count changed): they must be read afresh.
var errStatsChanged = errors.New("the driver's statistics changed between requests")

// decodeStatNames reads GSTRINGS' answer, asked for n names.
func decodeStatNames(b []byte, n uint32) ([]string, error) {
	if n > maxStats || len(b) != gstringsHdr+ethGStringLen*int(n) {
		return nil, fmt.Errorf("ethtool_gstrings of %d bytes for %d names", len(b), n)
	}
	if set := native.Uint32(b[4:]); set != ethSSStats {
		return nil, fmt.Errorf("string set %d, asked for %d", set, ethSSStats)
	}
	if got := native.Uint32(b[8:]); got != n {
		return nil, fmt.Errorf("%d names, asked for %d: %w", got, n, errStatsChanged)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = cString(b[gstringsHdr+ethGStringLen*i : gstringsHdr+ethGStringLen*(i+1)])
	}
	return out, nil
}

// decodeStatValues reads GSTATS' answer, asked for n values.
func decodeStatValues(b []byte, n uint32) ([]uint64, error) {
	if n > maxStats || len(b) != gstatsHdr+8*int(n) {
		return nil, fmt.Errorf("ethtool_stats of %d bytes for %d values", len(b), n)
	}
	if got := native.Uint32(b[4:]); got != n {
		return nil, fmt.Errorf("%d values, asked for %d: %w", got, n, errStatsChanged)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = native.Uint64(b[gstatsHdr+8*i:])
	}
	return out, nil
}

// StatsUnavailableError says why a NIC's ethtool statistics cannot be
// read: the driver has none, the kernel refused, a capture lacks them.
type StatsUnavailableError struct {
	NIC    string
	Reason unknown.Reason
}

func (e *StatsUnavailableError) Error() string {
	return e.NIC + "'s ethtool statistics: " + e.Reason.String()
}

// Stats is one NIC's ethtool statistics, opened once: the driver and the
// counters' names are read by OpenStats, the values by each Read (one
// ioctl). On the live root it asks the kernel; on a root holding a
// recording (irqnuma/steer/IF/ioctl.*) it replays it, so a recorded
// Read returns the same values every time.
type Stats struct {
	NIC    string
	Driver string
	// Names are the counters' names, as ethtool -S prints them.
	Names []string
	ask   ethnl.Asker
}

// OpenStats reads nic's driver and statistics names on fsys. When the
// statistics cannot be read the error is a *StatsUnavailableError
// saying why; any other error is the root's.
func OpenStats(fsys kfile.FS, nic string) (*Stats, error) {
	n := &NIC{Name: nic}
	if _, err := readSysfs(fsys, n, &classNet{}, false); err != nil {
		return nil, err
	}
	var a ethnl.Asker
	switch {
	case fsys.Live():
		a = ethnl.NewLive()
	default:
		fi, err := fsys.Stat(fsys.Path(recordDir, nic))
		if err != nil || !fi.IsDir() {
			return nil, &StatsUnavailableError{NIC: nic, Reason: unknown.Reason{Kind: unknown.KindNotCaptured, Detail: "the root holds no recorded ethtool ioctl answers of " + nic}}
		}
		a = &replayer{fsys: fsys}
	}
	s, err := openStats(a, nic)
	if err != nil {
		a.Close()
		return nil, err
	}
	return s, nil
}

func openStats(a ethnl.Asker, nic string) (*Stats, error) {
	s := &Stats{NIC: nic, ask: a}
	b, err := s.ioctl("ioctl.drvinfo", newRxnfc(ethtoolGDrvinfo, drvinfoSize))
	if err != nil {
		return nil, err
	}
	d, err := decodeDrvinfo(b)
	if err != nil {
		return nil, s.unreadable("ioctl.drvinfo", err)
	}
	s.Driver = d.Driver
	req := newRxnfc(ethtoolGSsetInfo, ssetInfoSize)
	native.PutUint64(req[8:], 1<<ethSSStats)
	if b, err = s.ioctl(keyStatsCount, req); err != nil {
		return nil, err
	}
	count, ok, err := decodeSsetInfo(b)
	switch {
	case err != nil:
		return nil, s.unreadable(keyStatsCount, err)
	case !ok || count == 0:
		return nil, &StatsUnavailableError{NIC: nic, Reason: unknown.Reason{Kind: unknown.KindDriver, Detail: s.Driver + " has no ethtool statistics"}}
	}
	if b, err = s.ioctl(keyStatsNames, newStatsRequest(ethtoolGStrings, count)); err != nil {
		return nil, err
	}
	if s.Names, err = decodeStatNames(b, count); err != nil {
		return nil, s.unreadable(keyStatsNames, err)
	}
	return s, nil
}

// Read returns the statistics' values, in Names' order. When the driver
// now counts other statistics (its channels changed) the error says so
// and the Stats must be opened again.
func (s *Stats) Read() ([]uint64, error) {
	b, err := s.ioctl(keyStats, newStatsRequest(ethtoolGStats, uint32(len(s.Names))))
	if err != nil {
		return nil, err
	}
	v, err := decodeStatValues(b, uint32(len(s.Names)))
	if err != nil {
		return nil, s.unreadable(keyStats, err)
	}
	return v, nil
}

// Close releases the ioctl socket.
func (s *Stats) Close() error { return s.ask.Close() }

func (s *Stats) ioctl(key string, buf []byte) ([]byte, error) {
	b, err := s.ask.Ioctl(ethnl.IoctlRequest{IfName: s.NIC, Key: key, Buf: buf})
	if err != nil {
		return nil, &StatsUnavailableError{NIC: s.NIC, Reason: ReasonOf(err)}
	}
	return b, nil
}

func (s *Stats) unreadable(key string, err error) error {
	return &StatsUnavailableError{NIC: s.NIC, Reason: ReasonOf(&unreadableError{what: s.ask.Where(s.NIC, key), err: err})}
}
