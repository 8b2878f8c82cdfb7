package flow

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// writeEthtoolStats records, under the tree's irqnuma/steer/IF/ as a
// snapshot keeps ioctl answers, the driver (struct ethtool_drvinfo: the
// driver's name at 4) and the ethtool statistics (struct
// ethtool_sset_info, ethtool_gstrings, ethtool_stats of
// include/uapi/linux/ethtool.h) a NIC would answer with.
func writeEthtoolStats(t *testing.T, root, nic, driver string, names []string, vals []uint64) {
	t.Helper()
	ne := binary.NativeEndian
	drv := make([]byte, 196)
	ne.PutUint32(drv, 0x03)
	copy(drv[4:], driver)
	info := make([]byte, 20)
	ne.PutUint32(info, 0x37)
	ne.PutUint64(info[8:], 1<<1)
	ne.PutUint32(info[16:], uint32(len(names)))
	str := make([]byte, 12+32*len(names))
	ne.PutUint32(str, 0x1b)
	ne.PutUint32(str[4:], 1)
	ne.PutUint32(str[8:], uint32(len(names)))
	for i, n := range names {
		copy(str[12+32*i:], n)
	}
	for key, b := range map[string][]byte{"ioctl.drvinfo": drv, "ioctl.sset-info.stats": info, "ioctl.gstrings.stats": str} {
		writeFile(t, filepath.Join(root, "irqnuma", "steer", nic, key), b)
	}
	writeStatValues(t, root, nic, vals)
}

// writeStatValues records the ethtool statistics' values, as the next
// ETHTOOL_GSTATS answers them.
func writeStatValues(t *testing.T, root, nic string, vals []uint64) {
	t.Helper()
	ne := binary.NativeEndian
	b := make([]byte, 8+8*len(vals))
	ne.PutUint32(b, 0x1d)
	ne.PutUint32(b[4:], uint32(len(vals)))
	for i, v := range vals {
		ne.PutUint64(b[8+8*i:], v)
	}
	writeFile(t, filepath.Join(root, "irqnuma", "steer", nic, "ioctl.gstats"), b)
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(p) // a tree's files are read-only
	if err := os.WriteFile(p, b, 0o444); err != nil {
		t.Fatal(err)
	}
}

// mlx5Stats are 16 channels' ethtool names as mlx5 writes them (the
// software totals, then "rx%d_packets", "rx%d_bytes" per channel's rq),
// with values: queue q has received 100*q packets.
func mlx5Stats() ([]string, []uint64) {
	names := []string{"rx_packets", "rx_bytes"}
	vals := []uint64{12000, 1 << 30}
	for q := range 16 {
		names = append(names, fmt.Sprintf("rx%d_packets", q), fmt.Sprintf("rx%d_bytes", q))
		vals = append(vals, uint64(100*q), uint64(150000*q))
	}
	return names, vals
}

func openFS(t *testing.T, root string) kfile.FS {
	t.Helper()
	fsys, err := kfile.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

// TestObserveEthtoolStats: the seed's eth0 without qstats but with
// ethtool statistics is sampled from them, the names read once: between
// two samples queue 3's rx3_packets rose by 900 and queue 0's by 10.
func TestObserveEthtoolStats(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	names, vals := mlx5Stats()
	writeEthtoolStats(t, root, "eth0", "mlx5_core", names, vals)
	s := newSampler(openFS(t, root), "eth0")
	defer s.Close()
	a, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if a.Source != CountersEthtool || !strings.Contains(a.NotQStats, "no rx qstats (eth0 qstats: not captured") || a.NotEthtool != "" {
		t.Fatalf("source %q, not qstats %q, not ethtool %q; want %q", a.Source, a.NotQStats, a.NotEthtool, CountersEthtool)
	}
	if len(a.Queues) != 16 || a.Queues[7] != 700 || !cmp.Equal(a.Stats[7], []string{"rx7_packets"}) || a.IRQs != nil {
		t.Fatalf("first sample: %d queues, queue 7 = %d from %v, IRQs %v", len(a.Queues), a.Queues[7], a.Stats[7], a.IRQs)
	}
	// The names are not read again: a later sample reads the values only.
	os.Remove(filepath.Join(root, "irqnuma", "steer", "eth0", "ioctl.gstrings.stats"))
	vals[2+2*3] += 900
	vals[2+2*0] += 10
	vals[2+2*3+1] += 900 * 1500 // bytes are not packets
	writeStatValues(t, root, "eth0", vals)
	b, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	o, err := Diff(a, b, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if o.Source != CountersEthtool || !o.Busiest.Known() || o.Busiest.Or(0) != 3 || o.BusiestDelta != 900 || o.delta(0) != 10 || len(o.Notes) != 0 {
		t.Fatalf("observation %+v", o)
	}
	q3 := uint32(3)
	o.Judge(unknown.Of(q3))
	if !o.Landed.Known() || !o.Landed.Or(false) || !strings.Contains(o.Verdict, "landed on the predicted queue 3: it rose most (+900 packets in 1.0s); other queues rose too (0 +10 packets)") {
		t.Errorf("Judge(3): landed %v, verdict %q", o.Landed, o.Verdict)
	}
}

// TestCountersFallback: qstats first, then per-queue ethtool statistics,
// then the queue IRQs' counts, each fall saying why.
func TestCountersFallback(t *testing.T) {
	names, vals := mlx5Stats()
	tests := []struct {
		name           string
		setup          func(t *testing.T, root string)
		want           string
		wantNotQStats  string
		wantNotEthtool string
	}{
		{"qstats and ethtool statistics", func(t *testing.T, root string) {
			hosttest.Overlay(t, root, hosttest.Path("cmd", "irqnuma", "testdata", "flow", "seed-steer"))
			writeEthtoolStats(t, root, "eth0", "mlx5_core", names, vals)
		}, CountersQStats, "", ""},
		{"ethtool statistics", func(t *testing.T, root string) {
			writeEthtoolStats(t, root, "eth0", "mlx5_core", names, vals)
		}, CountersEthtool, "no rx qstats (eth0 qstats: not captured", ""},
		{"a driver whose naming is not known", func(t *testing.T, root string) {
			writeEthtoolStats(t, root, "eth0", "e1000e", names, vals)
		}, CountersIRQ, "no rx qstats", `no per-queue ethtool statistics (which ethtool statistics count "e1000e"'s rx queues is not known)`},
		{"names without a queue's packets", func(t *testing.T, root string) {
			writeEthtoolStats(t, root, "eth0", "mlx5_core", names[:2], vals[:2])
		}, CountersIRQ, "no rx qstats", "no per-queue ethtool statistics (mlx5_core's ethtool statistics name no rx queue's packets (no rxN_packets among 2 names))"},
		{"no statistics recorded", func(t *testing.T, root string) {}, CountersIRQ, "no rx qstats", "no ethtool statistics (not captured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := hosttest.Copy(t, "seed")
			tt.setup(t, root)
			c, err := ReadCounters(openFS(t, root), "eth0")
			if err != nil {
				t.Fatal(err)
			}
			if c.Source != tt.want || !strings.Contains(c.NotQStats, tt.wantNotQStats) || (tt.wantNotQStats == "") != (c.NotQStats == "") ||
				!strings.Contains(c.NotEthtool, tt.wantNotEthtool) || (tt.wantNotEthtool == "") != (c.NotEthtool == "") {
				t.Errorf("source %q (not qstats %q, not ethtool %q), want %q (%q, %q)", c.Source, c.NotQStats, c.NotEthtool, tt.want, tt.wantNotQStats, tt.wantNotEthtool)
			}
			if len(c.Queues) != 16 {
				t.Errorf("%d queues, want 16", len(c.Queues))
			}
		})
	}
}
