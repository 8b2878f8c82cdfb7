package steer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Which of a driver's ethtool statistics count the packets each rx queue
// received is the driver's choice of names. These are the names as the
// drivers' get_strings write them (drivers/net/...), by the driver's
// name as ETHTOOL_GDRVINFO reports it. A naming is a list of counters
// whose sum is one queue's packets; a driver with several namings
// (virtio_net renamed its counters) uses the first that names a queue.
var rxQueueNamings = map[string][]naming{
	// virtio_net.c: "rx_queue_%u_%s" over virtnet_rq_stats_desc
	// ("packets", ...), later renamed "rx%u_%s"; when virtio_net gained
	// netdev qstats (the lab's 6.12 has them, its 6.1 not) rx packets
	// moved there (virtnet_rq_stats_desc_qstat) and ethtool -S names
	// none ("rx%u_hw_packets" are the device's own counters, present
	// only with VIRTIO_NET_F_DEVICE_STATS: not used).
	"virtio_net": {{{"rx_queue_", "_packets"}}, {{"rx", "_packets"}}},
	// en_stats.h: MLX5E_DECLARE_RX_STAT(type, fld) "rx%d_"#fld, and
	// rq_stats_desc has packets: "rx%d_packets" per channel's rq.
	"mlx5_core": {{{"rx", "_packets"}}},
	// ixgbe_ethtool.c, ice_ethtool.c, igb_ethtool.c, igc_ethtool.c,
	// netvsc_drv.c, libwx's wx_ethtool.c (ngbe, txgbe):
	// "rx_queue_%u_packets".
	"ixgbe":     {{{"rx_queue_", "_packets"}}},
	"ice":       {{{"rx_queue_", "_packets"}}},
	"igb":       {{{"rx_queue_", "_packets"}}},
	"igc":       {{{"rx_queue_", "_packets"}}},
	"hv_netvsc": {{{"rx_queue_", "_packets"}}},
	"ngbe":      {{{"rx_queue_", "_packets"}}},
	"txgbe":     {{{"rx_queue_", "_packets"}}},
	// i40e_ethtool.c, iavf_ethtool.c: i40e_gstrings_queue_stats'
	// "%s-%u.packets" with "rx".
	"i40e": {{{"rx-", ".packets"}}},
	"iavf": {{{"rx-", ".packets"}}},
	// bnxt_ethtool.c: per completion ring "[%d]: rx_ucast_packets",
	// "rx_mcast_packets", "rx_bcast_packets"; the ring's packets are
	// their sum.
	"bnxt_en": {{{"[", "]: rx_ucast_packets"}, {"[", "]: rx_mcast_packets"}, {"[", "]: rx_bcast_packets"}}},
}

// naming is the counters summed for one queue.
type naming []namePattern

// namePattern is a counter's name around the queue number: prefix, a
// decimal number as %u or %d writes it, suffix.
type namePattern struct{ prefix, suffix string }

// queue returns the queue number name has in this pattern.
func (p namePattern) queue(name string) (uint32, bool) {
	mid, ok := strings.CutPrefix(name, p.prefix)
	if !ok {
		return 0, false
	}
	if mid, ok = strings.CutSuffix(mid, p.suffix); !ok || mid == "" || len(mid) > 10 {
		return 0, false
	}
	q, err := strconv.ParseUint(mid, 10, 32)
	if err != nil || strconv.FormatUint(q, 10) != mid {
		return 0, false // not decimal, or a leading zero %u never writes
	}
	return uint32(q), true
}

func (p namePattern) String() string { return p.prefix + "N" + p.suffix }

// name is the counter's name for queue q.
func (p namePattern) name(q uint32) string {
	return p.prefix + strconv.FormatUint(uint64(q), 10) + p.suffix
}

// RXQueuePackets says which of names (a NIC's ethtool -S names, in its
// order) count each rx queue's received packets under driver's naming:
// per queue, the indexes into names whose values add up to its packets.
// A driver whose naming is not known, or whose names fit none, is an
// error saying so: this source then has nothing to say.
func RXQueuePackets(driver string, names []string) (map[uint32][]int, error) {
	namings, ok := rxQueueNamings[driver]
	if !ok {
		return nil, fmt.Errorf("which ethtool statistics count %q's rx queues is not known", driver)
	}
	for _, nm := range namings {
		out, err := nm.match(names)
		if err != nil {
			return nil, fmt.Errorf("%s's ethtool statistics: %w", driver, err)
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	var want []string
	for _, nm := range namings {
		for _, p := range nm {
			want = append(want, p.String())
		}
	}
	return nil, fmt.Errorf("%s's ethtool statistics name no rx queue's packets (no %s among %d names)", driver, strings.Join(want, ", "), len(names))
}

// match finds every queue's counters; a queue that has some of the
// naming's counters but not each exactly once is an error.
func (nm naming) match(names []string) (map[uint32][]int, error) {
	out := map[uint32][]int{}
	seen := map[uint32][]int{} // per queue, how many times each pattern matched
	for i, name := range names {
		for j, p := range nm {
			q, ok := p.queue(name)
			if !ok {
				continue
			}
			if seen[q] == nil {
				seen[q] = make([]int, len(nm))
			}
			seen[q][j]++
			out[q] = append(out[q], i)
		}
	}
	qs := make([]uint32, 0, len(seen))
	for q := range seen {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i] < qs[j] })
	for _, q := range qs {
		for j, n := range seen[q] {
			if n != 1 {
				return nil, fmt.Errorf("queue %d has %d counters named %q, want 1", q, n, nm[j].name(q))
			}
		}
	}
	return out, nil
}
