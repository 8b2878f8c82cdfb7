package steer

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"golang.org/x/sys/unix"
)

// Counter names as the drivers' get_strings write them (the format
// strings are quoted in statnames.go), in the drivers' order.
var (
	// virtio_net 4.16 to the rename: "rx_queue_%u_%s" then "tx_queue_%u_%s"
	// over virtnet_rq_stats_desc / virtnet_sq_stats_desc.
	virtioOld = []string{
		"rx_queue_0_packets", "rx_queue_0_bytes", "rx_queue_0_drops", "rx_queue_0_xdp_packets", "rx_queue_0_xdp_tx",
		"rx_queue_0_xdp_redirects", "rx_queue_0_xdp_drops", "rx_queue_0_kicks",
		"rx_queue_1_packets", "rx_queue_1_bytes", "rx_queue_1_drops", "rx_queue_1_xdp_packets", "rx_queue_1_xdp_tx",
		"rx_queue_1_xdp_redirects", "rx_queue_1_xdp_drops", "rx_queue_1_kicks",
		"tx_queue_0_packets", "tx_queue_0_bytes", "tx_queue_0_xdp_tx", "tx_queue_0_xdp_tx_drops", "tx_queue_0_kicks",
		"tx_queue_1_packets", "tx_queue_1_bytes", "tx_queue_1_xdp_tx", "tx_queue_1_xdp_tx_drops", "tx_queue_1_kicks",
	}
	// virtio_net after the rename to "rx%u_%s", before qstats, with device
	// stats ("rx%u_hw_%s": the device's counters, not used).
	virtioRenamed = []string{
		"rx0_packets", "rx0_bytes", "rx0_drops", "rx0_kicks", "rx0_hw_packets", "rx0_hw_bytes",
		"rx1_packets", "rx1_bytes", "rx1_drops", "rx1_kicks", "rx1_hw_packets", "rx1_hw_bytes",
		"tx0_packets", "tx0_bytes", "tx1_packets", "tx1_bytes",
	}
	// virtio_net 6.18, one queue pair: what ethtool -S eth0 printed on
	// this project's VM (rx and tx packets are in netdev qstats).
	virtio618 = []string{
		"rx_drops", "rx_xdp_packets", "rx_xdp_tx", "rx_xdp_redirects", "rx_xdp_drops", "rx_kicks",
		"tx_xdp_tx", "tx_xdp_tx_drops", "tx_kicks", "tx_tx_timeouts",
		"rx0_drops", "rx0_xdp_packets", "rx0_xdp_tx", "rx0_xdp_redirects", "rx0_xdp_drops", "rx0_kicks",
		"tx0_xdp_tx", "tx0_xdp_tx_drops", "tx0_kicks", "tx0_tx_timeouts",
	}
	// mlx5: the software totals, then "rx%d_"#fld per channel's rq
	// (rq_stats_desc), "rx%d_xsk_"#fld for its XSK rq, "tx%d_"#fld.
	mlx5 = []string{
		"rx_packets", "rx_bytes", "tx_packets", "tx_bytes",
		"rx0_packets", "rx0_bytes", "rx0_csum_complete", "rx0_xsk_packets",
		"rx1_packets", "rx1_bytes", "rx1_csum_complete", "rx1_xsk_packets",
		"tx0_packets", "tx0_bytes", "tx1_packets", "tx1_bytes",
	}
	// ixgbe (and ice, igb, igc, hv_netvsc, libwx): "tx_queue_%u_packets",
	// "tx_queue_%u_bytes", then the same for rx.
	ixgbe = []string{
		"rx_packets", "tx_packets", "rx_bytes", "tx_bytes",
		"tx_queue_0_packets", "tx_queue_0_bytes", "tx_queue_1_packets", "tx_queue_1_bytes",
		"rx_queue_0_packets", "rx_queue_0_bytes", "rx_queue_1_packets", "rx_queue_1_bytes",
		"rx_queue_2_packets", "rx_queue_2_bytes",
	}
	// i40e, iavf: "%s-%u.packets" with "tx" then "rx".
	i40e = []string{
		"rx_packets", "tx_packets", "port.rx_bytes",
		"tx-0.packets", "tx-0.bytes", "rx-0.packets", "rx-0.bytes",
		"tx-1.packets", "tx-1.bytes", "rx-1.packets", "rx-1.bytes",
	}
	// bnxt_en: per completion ring "[%d]: rx_ucast_packets", mcast,
	// bcast, discards, ...
	bnxt = []string{
		"[0]: rx_ucast_packets", "[0]: rx_mcast_packets", "[0]: rx_bcast_packets", "[0]: rx_discards",
		"[1]: rx_ucast_packets", "[1]: rx_mcast_packets", "[1]: rx_bcast_packets", "[1]: rx_discards",
	}
)

func TestRXQueuePackets(t *testing.T) {
	tests := []struct {
		driver  string
		give    []string
		want    map[uint32][]int
		wantErr string
	}{
		{driver: "virtio_net", give: virtioOld, want: map[uint32][]int{0: {0}, 1: {8}}},
		{driver: "virtio_net", give: virtioRenamed, want: map[uint32][]int{0: {0}, 1: {6}}},
		{driver: "virtio_net", give: virtio618, wantErr: "virtio_net's ethtool statistics name no rx queue's packets (no rx_queue_N_packets, rxN_packets among 20 names)"},
		{driver: "mlx5_core", give: mlx5, want: map[uint32][]int{0: {4}, 1: {8}}},
		{driver: "ixgbe", give: ixgbe, want: map[uint32][]int{0: {8}, 1: {10}, 2: {12}}},
		{driver: "ice", give: ixgbe, want: map[uint32][]int{0: {8}, 1: {10}, 2: {12}}},
		{driver: "i40e", give: i40e, want: map[uint32][]int{0: {5}, 1: {9}}},
		{driver: "iavf", give: i40e, want: map[uint32][]int{0: {5}, 1: {9}}},
		{driver: "bnxt_en", give: bnxt, want: map[uint32][]int{0: {0, 1, 2}, 1: {4, 5, 6}}},
		{driver: "bnxt_en", give: bnxt[:6], wantErr: `queue 1 has 0 counters named "[1]: rx_bcast_packets", want 1`},
		{driver: "mlx5_core", give: []string{"rx0_packets", "rx0_packets"}, wantErr: `queue 0 has 2 counters named "rx0_packets", want 1`},
		// %u never writes a leading zero or a sign: not a queue.
		{driver: "ixgbe", give: []string{"rx_queue_01_packets", "rx_queue_+1_packets", "rx_queue__packets"}, wantErr: "name no rx queue's packets"},
		{driver: "e1000", give: ixgbe, wantErr: `which ethtool statistics count "e1000"'s rx queues is not known`},
	}
	for _, tt := range tests {
		got, err := RXQueuePackets(tt.driver, tt.give)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("RXQueuePackets(%s, %d names) = %v, %v; want error %q", tt.driver, len(tt.give), got, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("RXQueuePackets(%s, %d names): %v", tt.driver, len(tt.give), err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, exportValues); diff != "" {
			t.Errorf("RXQueuePackets(%s) (-want +got):\n%s", tt.driver, diff)
		}
		for q, idx := range got {
			for _, i := range idx {
				if !strings.Contains(tt.give[i], strconv.Itoa(int(q))) || !strings.Contains(tt.give[i], "packets") {
					t.Errorf("%s queue %d counts %q", tt.driver, q, tt.give[i])
				}
			}
		}
	}
}

// statsAnswers are the ioctl answers of a NIC with names and values, as
// the kernel fills them.
func statsAnswers(driver string, names []string, values []uint64) map[string][]byte {
	d := make([]byte, drvinfoSize)
	native.PutUint32(d, ethtoolGDrvinfo)
	copy(d[4:], driver)
	info := newRxnfc(ethtoolGSsetInfo, ssetInfoSize)
	native.PutUint64(info[8:], 1<<ethSSStats)
	native.PutUint32(info[16:], uint32(len(names)))
	str := newStatsRequest(ethtoolGStrings, uint32(len(names)))
	for i, n := range names {
		copy(str[gstringsHdr+ethGStringLen*i:], n)
	}
	return map[string][]byte{"ioctl.drvinfo": d, keyStatsCount: info, keyStatsNames: str, keyStats: statValues(values)}
}

func statValues(values []uint64) []byte {
	v := newStatsRequest(ethtoolGStats, uint32(len(values)))
	for i, x := range values {
		native.PutUint64(v[gstatsHdr+8*i:], x)
	}
	return v
}

// mapAsker answers ioctls from a map of keys, or with an errno.
type mapAsker struct {
	answers map[string][]byte
	errnos  map[string]unix.Errno
	asked   []string
}

func (m *mapAsker) Ioctl(req ethnl.IoctlRequest) ([]byte, error) {
	m.asked = append(m.asked, req.Key)
	if e, ok := m.errnos[req.Key]; ok {
		return nil, e
	}
	b, ok := m.answers[req.Key]
	if !ok {
		return nil, &notCapturedError{file: req.Key}
	}
	if len(b) != len(req.Buf) {
		return nil, unreadable(req.Key, "%d bytes, the request's structure is %d", len(b), len(req.Buf))
	}
	return append([]byte(nil), b...), nil
}
func (m *mapAsker) Genl(ethnl.Request) ([]ethnl.Msg, error) { return nil, unix.EOPNOTSUPP }
func (m *mapAsker) Where(dir, key string) string            { return dir + "/" + key }
func (m *mapAsker) Close() error                            { return nil }

// TestOpenStats: the names are read once and each Read is one GSTATS;
// a driver without statistics, a refusal, and a count that changed
// under the reader each say why.
func TestOpenStats(t *testing.T) {
	vals := make([]uint64, len(mlx5))
	for i := range vals {
		vals[i] = uint64(1000 + i)
	}
	a := &mapAsker{answers: statsAnswers("mlx5_core", mlx5, vals)}
	s, err := openStats(a, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	if s.Driver != "mlx5_core" || !cmp.Equal(s.Names, mlx5) {
		t.Fatalf("driver %q names %q", s.Driver, s.Names)
	}
	for range 2 {
		got, err := s.Read()
		if err != nil || !cmp.Equal(got, vals) {
			t.Fatalf("Read() = %v, %v; want %v", got, err, vals)
		}
	}
	want := []string{"ioctl.drvinfo", keyStatsCount, keyStatsNames, keyStats, keyStats}
	if diff := cmp.Diff(want, a.asked, exportValues); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	// The kernel answers n_stats 0 when the count asked for is no longer
	// the driver's (a channel change between the requests).
	a.answers[keyStats] = newStatsRequest(ethtoolGStats, uint32(len(vals)))
	native.PutUint32(a.answers[keyStats][4:], 0)
	if _, err := s.Read(); err == nil || !strings.Contains(err.Error(), "0 values, asked for 16: the driver's statistics changed") {
		t.Errorf("Read after a change: %v", err)
	}

	tests := []struct {
		name    string
		edit    func(m *mapAsker)
		wantWhy unknown.Kind
		want    string
	}{
		{"no stats set", func(m *mapAsker) { native.PutUint64(m.answers[keyStatsCount][8:], 0) }, unknown.KindDriver, "mlx5_core has no ethtool statistics"},
		{"refused", func(m *mapAsker) { m.errnos = map[string]unix.Errno{keyStatsCount: unix.EOPNOTSUPP} }, unknown.KindDriver, "EOPNOTSUPP"},
		{"no such device", func(m *mapAsker) { m.errnos = map[string]unix.Errno{"ioctl.drvinfo": unix.ENODEV} }, unknown.KindFailed, "ENODEV"},
		{"names changed", func(m *mapAsker) { native.PutUint32(m.answers[keyStatsNames][8:], 3) }, unknown.KindMalformed, "3 names, asked for 16"},
		{"huge count", func(m *mapAsker) { native.PutUint32(m.answers[keyStatsCount][16:], maxStats+1) }, unknown.KindMalformed, "more than the 131072 believed"},
		{"not captured", func(m *mapAsker) { delete(m.answers, keyStatsNames) }, unknown.KindNotCaptured, keyStatsNames},
	}
	for _, tt := range tests {
		m := &mapAsker{answers: statsAnswers("mlx5_core", mlx5, vals)}
		tt.edit(m)
		_, err := openStats(m, "eth0")
		var un *StatsUnavailableError
		if !errors.As(err, &un) || un.Reason.Kind != tt.wantWhy || !strings.Contains(un.Reason.String(), tt.want) {
			t.Errorf("%s: openStats error %v, want %q with %q", tt.name, err, tt.wantWhy, tt.want)
		}
	}
}

// TestStatsRecorded: a root holding the answers replays them through
// OpenStats; a root without them says not captured.
func TestStatsRecorded(t *testing.T) {
	root := t.TempDir()
	vals := []uint64{7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	for key, b := range statsAnswers("ixgbe", ixgbe, vals) {
		p := filepath.Join(root, recordDir, "eth0", key)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys := openTree(t, root)
	s, err := OpenStats(fsys, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Read()
	if err != nil || !cmp.Equal(got, vals) || s.Driver != "ixgbe" {
		t.Fatalf("replayed %s %v, %v", s.Driver, got, err)
	}
	_, err = OpenStats(fsys, "eth1")
	var un *StatsUnavailableError
	if !errors.As(err, &un) || un.Reason.Kind != unknown.KindNotCaptured {
		t.Errorf("OpenStats(eth1) on a root without its answers: %v", err)
	}
}

// FuzzStatsDecode: the three decoders never panic, never return more
// names or values than asked for, and a name is never longer than its
// 32 bytes.
func FuzzStatsDecode(f *testing.F) {
	for _, b := range statsAnswers("virtio_net", virtioOld, make([]uint64, len(virtioOld))) {
		f.Add(b, uint32(len(virtioOld)))
	}
	f.Add(make([]byte, 20), uint32(0))
	f.Fuzz(func(t *testing.T, b []byte, n uint32) {
		if c, ok, err := decodeSsetInfo(b); err == nil && (c > maxStats || (!ok && c != 0)) {
			t.Errorf("sset info %d, %v", c, ok)
		}
		if names, err := decodeStatNames(b, n); err == nil {
			if uint32(len(names)) != n {
				t.Errorf("%d names for %d", len(names), n)
			}
			for _, s := range names {
				if len(s) > ethGStringLen {
					t.Errorf("name %q longer than %d", s, ethGStringLen)
				}
			}
		}
		if v, err := decodeStatValues(b, n); err == nil && uint32(len(v)) != n {
			t.Errorf("%d values for %d", len(v), n)
		}
	})
}

// TestStatsLive reads eth0's statistics and compares them with what
// ethtool -S prints: the same names in the same order, and each value no
// smaller than ethtool's (read just before) nor, for counters that do
// not move, different.
func TestStatsLive(t *testing.T) {
	fsys := liveRoot(t)
	const nic = "eth0"
	if _, err := os.Stat("/sys/class/net/" + nic); err != nil {
		t.Skipf("no %s on this host", nic)
	}
	out, err := exec.Command("ethtool", "-S", nic).Output()
	if err != nil {
		t.Skipf("ethtool -S %s: %v", nic, err)
	}
	names, vals := parseEthtoolS(t, string(out))
	s, err := OpenStats(fsys, nic)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if diff := cmp.Diff(names, s.Names, exportValues); diff != "" {
		t.Fatalf("names (-ethtool -S +OpenStats):\n%s", diff)
	}
	got, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v < vals[i] {
			t.Errorf("%s = %d, below ethtool's earlier %d", names[i], v, vals[i])
		}
	}
	d, err := decodeDrvinfo(mustIoctl(t, nic, "ioctl.drvinfo", newRxnfc(ethtoolGDrvinfo, drvinfoSize)))
	if err != nil || d.Driver != s.Driver {
		t.Errorf("driver %q, drvinfo says %v (%v)", s.Driver, d, err)
	}
	idx, err := RXQueuePackets(s.Driver, s.Names)
	if s.Driver == "virtio_net" {
		// Before qstats virtio_net names queue 0's packets; after, qstats
		// count them and ethtool -S does not.
		has := false
		for _, n := range s.Names {
			has = has || n == "rx0_packets" || n == "rx_queue_0_packets"
		}
		if has != (err == nil) {
			t.Errorf("virtio_net names queue 0's packets: %v, but RXQueuePackets = %v, %v", has, idx, err)
		}
	}
	t.Logf("%s (%s): %d statistics; rx queues: %v, %v", nic, s.Driver, len(s.Names), idx, err)
}

func mustIoctl(t *testing.T, nic, key string, buf []byte) []byte {
	a := ethnl.NewLive()
	defer a.Close()
	b, err := a.Ioctl(ethnl.IoctlRequest{IfName: nic, Key: key, Buf: buf})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parseEthtoolS reads ethtool -S's "NIC statistics:" then "     name:
// value" lines. A name may itself hold ": " (bnxt's "[0]: rx_..."), so
// the value is after the last colon.
func parseEthtoolS(t *testing.T, s string) ([]string, []uint64) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) == 0 || lines[0] != "NIC statistics:" {
		t.Fatalf("ethtool -S: first line %q", lines[0])
	}
	var names []string
	var vals []uint64
	for _, l := range lines[1:] {
		i := strings.LastIndex(l, ":")
		if i < 0 {
			t.Fatalf("ethtool -S line %q", l)
		}
		v, err := strconv.ParseUint(strings.TrimSpace(l[i+1:]), 10, 64)
		if err != nil {
			t.Fatalf("ethtool -S line %q: %v", l, err)
		}
		names = append(names, strings.TrimSpace(l[:i]))
		vals = append(vals, v)
	}
	return names, vals
}
