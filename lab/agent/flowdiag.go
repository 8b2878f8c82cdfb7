package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// flowDiag is what the agent reads around one bench of the flow, to
// tell why a queue's counters rose: the guest's IP reassembly count,
// each rx queue's packet counter (ethtool -S), the RSS table and the
// udp4 hash fields.
type flowDiag struct {
	reasm   uint64
	packets map[int]uint64
	rss     string
	udp4    string
}

// readFlowDiag reads a flowDiag of ifname.
func readFlowDiag(ifname string) flowDiag {
	d := flowDiag{packets: map[int]uint64{}}
	d.reasm = snmpIP("ReasmReqds")
	for q, n := range mustCounters(liveFS(), ifname).Queues {
		d.packets[int(q)] = n
	}
	d.rss = ethtool("-x", ifname)
	d.udp4 = ethtool("-n", ifname, "rx-flow-hash", "udp4")
	return d
}

// snmpIP reads one Ip: field of /proc/net/snmp (0 when absent).
func snmpIP(field string) uint64 {
	var names []string
	for _, line := range strings.Split(readFile("/proc/net/snmp"), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "Ip:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i := 1; i < len(f) && i < len(names); i++ {
			if names[i] == field {
				n, _ := strconv.ParseUint(f[i], 10, 64)
				return n
			}
		}
	}
	return 0
}

// report says what changed between d and after.
func (d flowDiag) report(name string, after flowDiag) {
	var qs []int
	for q := range after.packets {
		qs = append(qs, q)
	}
	sort.Ints(qs)
	var rose []string
	for _, q := range qs {
		rose = append(rose, fmt.Sprintf("q%d +%d", q, after.packets[q]-d.packets[q]))
	}
	info(name+"-diag", "IP reassemblies +%d; rx packets %s; RSS table same: %v; udp4 hash fields same: %v (%s)",
		after.reasm-d.reasm, strings.Join(rose, ", "), d.rss == after.rss, d.udp4 == after.udp4,
		strings.Join(strings.Fields(after.udp4), " "))
}

// udpSockets reads the guest's UDP sockets on port (local or remote),
// as /proc/net/udp gives them.
func udpSockets(port int) []string {
	hex := fmt.Sprintf(":%04X", port)
	var out []string
	for _, line := range strings.Split(readFile("/proc/net/udp"), "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && (strings.HasSuffix(f[1], hex) || strings.HasSuffix(f[2], hex)) {
			out = append(out, f[1]+"->"+f[2])
		}
	}
	return out
}
