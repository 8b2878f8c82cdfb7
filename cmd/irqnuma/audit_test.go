package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// auditDoc is the JSON of `irqnuma audit -o json`, decoded strictly.
type auditDoc struct {
	Schema   string         `json:"schema"`
	Version  int            `json:"version"`
	Findings []auditFinding `json:"findings"`
	Summary  struct {
		Error   int `json:"error"`
		Warning int `json:"warning"`
		Info    int `json:"info"`
	} `json:"summary"`
	Checked   []string       `json:"checked_nics"`
	Processes []auditProcess `json:"processes"`
}

type auditProcess struct {
	PID         int      `json:"pid"`
	Comm        string   `json:"comm"`
	NICs        []string `json:"nics"`
	Attribution string   `json:"attribution"`
	How         []string `json:"how"`
	// AttributionUnknown is why Attribution is null.
	AttributionUnknown *unknown.Reason `json:"attribution_unknown"`
	Judged             []string        `json:"judged"`
	JudgedBy           string          `json:"judged_by"`
	Netns              string          `json:"netns"`
}

type auditFinding struct {
	Check    audit.Check `json:"check"`
	Severity string      `json:"severity"`
	Subject  string      `json:"subject"`
	Message  string      `json:"message"`
	Fix      string      `json:"fix"`
	NIC      string      `json:"nic"`
	IRQ      []int       `json:"irq"`
	PID      int         `json:"pid"`
	TID      []int       `json:"tid"`
	CPUs     string      `json:"cpus"`
	Nodes    []int       `json:"nodes"`
}

// auditJSON runs the audit with -o json and decodes it, failing the test
// on anything but exit 0 or 3.
func auditJSON(t *testing.T, root string, args ...string) (auditDoc, int) {
	t.Helper()
	all := append([]string{"--root", root, "-o", "json", "audit"}, args...)
	stdout, stderr, code := runCLI(t, all...)
	if code != cli.ExitOK && code != cli.ExitFindings {
		t.Fatalf("irqnuma %s: exit %d: %s", strings.Join(all, " "), code, stderr)
	}
	var doc auditDoc
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("audit JSON: %v\n%s", err, stdout)
	}
	for _, f := range doc.Findings {
		if f.IRQ == nil || f.TID == nil || f.Nodes == nil {
			t.Errorf("finding %s/%s: irq, tid and nodes must be arrays, got %v %v %v", f.Check, f.Subject, f.IRQ, f.TID, f.Nodes)
		}
		if f.Message == "" || f.Subject == "" || f.Fix == "" {
			t.Errorf("finding %s: empty subject, message or fix: %+v", f.Check, f)
		}
	}
	return doc, code
}

// byCheck returns the findings of one check.
func byCheck(doc auditDoc, check audit.Check) []auditFinding {
	var out []auditFinding
	for _, f := range doc.Findings {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

var auditHosts = []string{"seed", "vm-virtio", "offline-2node", "arm64", "nps2"}

// TestAuditGolden audits every host tree in both formats.
func TestAuditGolden(t *testing.T) {
	t.Parallel()
	wantCode := map[string]int{"seed": 3, "vm-virtio": 0, "offline-2node": 3, "arm64": 3, "nps2": 3}
	for _, host := range auditHosts {
		t.Run(host, func(t *testing.T) {
			root := hosttest.Shared(t, host)
			for _, format := range []string{"table", "json"} {
				stdout, stderr, code := runCLI(t, "--root", root, "-o", format, "audit")
				if code != wantCode[host] {
					t.Fatalf("audit %s -o %s: exit %d, want %d; stderr %s", host, format, code, wantCode[host], stderr)
				}
				if stderr != "" {
					t.Errorf("audit %s: unexpected stderr %q", host, stderr)
				}
				golden(t, filepath.Join("audit", host+map[string]string{"table": ".txt", "json": ".json"}[format]), stdout)
			}
		})
	}
}

// TestAuditSeed is the acceptance on the seed host: irq-shared-cpu
// for IRQs 286 and 290 on CPU 53, and no irq-remote.
func TestAuditSeed(t *testing.T) {
	t.Parallel()
	doc, code := auditJSON(t, hosttest.Shared(t, "seed"))
	if code != cli.ExitFindings {
		t.Errorf("exit %d, want %d (a warning at the default --fail-on warning)", code, cli.ExitFindings)
	}
	if got := byCheck(doc, audit.CheckIRQRemote); len(got) != 0 {
		t.Errorf("seed: irq-remote findings %+v, want none", got)
	}
	shared := byCheck(doc, audit.CheckIRQSharedCPU)
	if len(shared) != 1 {
		t.Fatalf("seed: %d irq-shared-cpu findings, want 1: %+v", len(shared), shared)
	}
	f := shared[0]
	if !slices.Equal(f.IRQ, []int{286, 290}) || f.CPUs != "53" || f.NIC != "eth0" || f.Severity != "warning" ||
		!slices.Equal(f.Nodes, []int{1}) {
		t.Errorf("seed irq-shared-cpu = %+v, want IRQs 286, 290 on CPU 53 (node 1) of eth0, warning", f)
	}
	// 32 CPUs on node 1, 15 distinct ones take a queue IRQ: 17 are free.
	if !strings.Contains(f.Message, "17 local CPUs serve none") {
		t.Errorf("message %q does not count the 17 free local CPUs", f.Message)
	}
	if doc.Summary.Error != 0 || doc.Summary.Warning != 1 {
		t.Errorf("summary %+v, want 0 errors and 1 warning", doc.Summary)
	}
}

// TestAuditIperf3Remote: an iperf3 pinned to CPUs 0-15 on the seed host
// (node 0; the NIC is on node 1) is proc-remote; a thread last seen on
// CPU 3 makes it an error.
func TestAuditIperf3Remote(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	writeProc(t, root, 64, testProc{pid: 4242, comm: "iperf3", allowed: "0-15",
		threads: []testThread{{tid: 4242, allowed: "0-15", lastCPU: 3}, {tid: 4243, allowed: "0-15", lastCPU: 7}},
		numaMaps: "7f0000000000 default anon=300 dirty=300 active=0 N0=300 kernelpagesize_kB=4\n" +
			"7f0000200000 default file=/usr/bin/iperf3 mapped=20 mapmax=2 N0=12 N1=8 kernelpagesize_kB=4\n",
		sockets: iperf3OnEth0})
	for _, sel := range [][]string{{"--comm", "iperf3"}, {"--pid", "4242"}} {
		doc, code := auditJSON(t, root, sel...)
		if code != cli.ExitFindings {
			t.Errorf("%v: exit %d, want 3", sel, code)
		}
		remote := byCheck(doc, audit.CheckProcRemote)
		var sev []string
		for _, f := range remote {
			sev = append(sev, f.Severity)
			if f.PID != 4242 || f.NIC != "eth0" || !slices.Equal(f.Nodes, []int{0}) {
				t.Errorf("%v: proc-remote %+v, want PID 4242 of eth0 on node 0", sel, f)
			}
		}
		if !slices.Equal(sev, []string{"error", "warning"}) {
			t.Fatalf("%v: proc-remote severities %v, want [error warning]: %+v", sel, sev, remote)
		}
		if remote[0].CPUs != "3,7" || !slices.Equal(remote[0].TID, []int{4242, 4243}) {
			t.Errorf("%v: last-ran finding %+v, want CPUs 3,7 threads 4242, 4243", sel, remote[0])
		}
		if remote[1].CPUs != "0-15" {
			t.Errorf("%v: allowed finding CPUs %q, want 0-15", sel, remote[1].CPUs)
		}
		mem := byCheck(doc, audit.CheckProcMemRemote)
		if len(mem) != 1 || !strings.Contains(mem[0].Message, "1248 kB of iperf3 (PID 4242)'s 1280 kB of memory (97%) is on node 0") {
			t.Errorf("%v: proc-mem-remote %+v, want 312 of 320 4 kB pages (1248 of 1280 kB) on node 0", sel, mem)
		}
		if got := byCheck(doc, audit.CheckProcIRQOverlap); len(got) != 0 {
			t.Errorf("%v: proc-irq-overlap %+v: CPUs 0-15 share no core with eth0's IRQs", sel, got)
		}
	}
	stdout, _, _ := runCLI(t, "--root", root, "audit", "--comm", "iperf3")
	golden(t, "audit/seed-iperf3.txt", stdout)
}

// TestAuditEveryCheck builds variants of the seed host that each trigger
// one check, and a clean variant that triggers none.
func TestAuditEveryCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(t *testing.T, root string)
		args  []string
		check audit.Check
		sev   string
		irq   []int // IRQs of the finding, when it names some
		cpus  string
	}{
		{name: "seed as captured", check: audit.CheckIRQSharedCPU, sev: "warning", irq: []int{286, 290}, cpus: "53"},
		{name: "numa_node -1, local_cpulist known", edit: func(t *testing.T, r string) {
			put(t, r, "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/numa_node", "-1\n")
		}, check: audit.CheckNICNodeUnknown, sev: "warning", cpus: "16-31,48-63"},
		{name: "queue IRQ delivered to node 0", edit: func(t *testing.T, r string) {
			setIRQ(t, r, 284, "0", "0")
		}, check: audit.CheckIRQRemote, sev: "error", irq: []int{284}, cpus: "0"},
		{name: "queue IRQ local but mask reaches node 0", edit: func(t *testing.T, r string) {
			setIRQ(t, r, 284, "0-63", "50")
		}, check: audit.CheckIRQRemote, sev: "warning", irq: []int{284}, cpus: "0-15,32-47"},
		{name: "queue IRQ kernel-managed", edit: func(t *testing.T, r string) {
			chmod(t, r, "proc/irq/299/smp_affinity", 0o444)
			chmod(t, r, "proc/irq/299/smp_affinity_list", 0o444)
		}, check: audit.CheckIRQManaged, sev: "info", irq: []int{299}},
		{name: "irqbalance running, nothing banned", edit: func(t *testing.T, r string) {
			writeProc(t, r, 64, testProc{pid: 812, comm: "irqbalance", allowed: "0-63",
				cmdline: []string{"/usr/sbin/irqbalance", "--foreground"}, environ: []string{"LANG=C"}})
		}, check: audit.CheckIrqbalance, sev: "warning"},
		{name: "iperf3 pinned to node 0", edit: func(t *testing.T, r string) {
			writeProc(t, r, 64, testProc{pid: 5001, comm: "iperf3", allowed: "0-15", sockets: iperf3OnEth0})
		}, args: []string{"--comm", "iperf3"}, check: audit.CheckProcRemote, sev: "warning", cpus: "0-15"},
		{name: "iperf3 last ran on node 0", edit: func(t *testing.T, r string) {
			writeProc(t, r, 64, testProc{pid: 5001, comm: "iperf3", allowed: "16-31",
				threads: []testThread{{tid: 5001, allowed: "16-31", lastCPU: 40}}, sockets: iperf3OnEth0})
		}, args: []string{"--pid", "5001"}, check: audit.CheckProcRemote, sev: "error", cpus: "40"},
		{name: "iperf3 in an isolated partition taking IRQ 285", edit: func(t *testing.T, r string) {
			writeProc(t, r, 64, testProc{pid: 5001, comm: "iperf3", allowed: "16-17", sockets: iperf3OnEth0})
			put(t, r, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
			for name, data := range map[string]string{"cgroup.procs": "5001\n", "cpuset.cpus.effective": "16-17\n",
				"cpuset.mems.effective": "1\n", "cpuset.cpus.partition": "isolated\n"} {
				put(t, r, "sys/fs/cgroup/pod/"+name, data)
			}
		}, args: []string{"--cgroup", "/pod"}, check: audit.CheckCgroupIRQ, sev: "warning", irq: []int{285}, cpus: "17"},
		{name: "a pod that asked CRI-O to keep IRQs off CPUs 16-17", edit: func(t *testing.T, r string) {
			addPod(t, r)
			writeCRIOConfig(t, r, "disable", "16-17")
		}, args: []string{"--pod", "default/iperf-server"}, check: audit.CheckPodIRQBalancing, sev: "warning", irq: []int{285}, cpus: "17"},
		{name: "iperf3 in a group on node 0's CPUs", edit: func(t *testing.T, r string) {
			writeProc(t, r, 64, testProc{pid: 5001, comm: "iperf3", allowed: "0-3", sockets: iperf3OnEth0})
			putGroup(t, r, "/pod", map[string]string{"cgroup.procs": "5001\n", "cpuset.cpus.effective": "0-3\n", "cpuset.mems.effective": "0\n"})
		}, args: []string{"--cgroup", "/pod"}, check: audit.CheckCgroupNICRemote, sev: "error", cpus: "0-3"},
		{name: "iperf3 in a group whose memory is on node 0", edit: func(t *testing.T, r string) {
			writeProc(t, r, 64, testProc{pid: 5001, comm: "iperf3", allowed: "18-19", sockets: iperf3OnEth0})
			putGroup(t, r, "/pod", map[string]string{"cgroup.procs": "5001\n", "cpuset.cpus.effective": "18-19\n", "cpuset.mems.effective": "0-1\n",
				"memory.numa_stat": "anon N0=943718400 N1=4096\nfile N0=0 N1=0\n"})
		}, args: []string{"--cgroup", "/pod"}, check: audit.CheckCgroupMemRemote, sev: "warning", cpus: "18-19"},
		{name: "iperf3 in a partition on the cores of IRQs 284 and 287", edit: func(t *testing.T, r string) {
			writeProc(t, r, 64, testProc{pid: 5001, comm: "iperf3", allowed: "18-19", sockets: iperf3OnEth0})
			putGroup(t, r, "/pod", map[string]string{"cgroup.procs": "5001\n", "cpuset.cpus.effective": "18-19\n", "cpuset.mems.effective": "1\n",
				"cpuset.cpus.partition": "root\n"})
		}, args: []string{"--cgroup", "/pod"}, check: audit.CheckCgroupSharedCore, sev: "warning", irq: []int{284, 287}, cpus: "18-19"},
		{name: "iperf3 on the cores of the queue IRQs", edit: func(t *testing.T, r string) {
			writeProc(t, r, 64, testProc{pid: 5001, comm: "iperf3", allowed: "17,49", sockets: iperf3OnEth0})
		}, args: []string{"--comm", "iperf3"}, check: audit.CheckProcIRQOverlap, sev: "warning", irq: []int{285}, cpus: "17,49"},
		{name: "iperf3 memory on node 0", edit: func(t *testing.T, r string) {
			writeProc(t, r, 64, testProc{pid: 5001, comm: "iperf3", allowed: "18-19",
				numaMaps: "55d0c0000000 default anon=900 dirty=900 N0=900 kernelpagesize_kB=4\n55d0c0400000 default anon=100 N1=100 kernelpagesize_kB=4\n",
				sockets:  iperf3OnEth0})
		}, args: []string{"--comm", "iperf3"}, check: audit.CheckProcMemRemote, sev: "warning"},
		{name: "iperf3 with no sockets yet", edit: func(t *testing.T, r string) {
			writeProc(t, r, 64, testProc{pid: 5001, comm: "iperf3", allowed: "0-15", sockets: []hosttest.Socket{}})
		}, args: []string{"--comm", "iperf3"}, check: audit.CheckProcNICUnknown, sev: "info"},
		{name: "rps to node 0", edit: func(t *testing.T, r string) {
			put(t, r, "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/net/eth0/queues/rx-3/rps_cpus", "00000000,0000ffff\n")
		}, check: audit.CheckRPSRemote, sev: "warning", cpus: "0-15"},
		{name: "xps to node 0", edit: func(t *testing.T, r string) {
			put(t, r, "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/net/eth0/queues/tx-3/xps_cpus", "00000000,00000001\n")
		}, check: audit.CheckXPSRemote, sev: "warning", cpus: "0"},
		{name: "local CPUs go powersave", edit: func(t *testing.T, r string) {
			put(t, r, "sys/devices/system/cpu/cpu20/cpufreq/scaling_governor", "powersave\n")
		}, check: audit.CheckCPUGovernor, sev: "info", cpus: "20"},
		{name: "NIC behind a translating IOMMU", edit: func(t *testing.T, r string) {
			addIOMMU(t, r, "DMA-FQ")
		}, check: audit.CheckIOMMUMode, sev: "info"},
		{name: "IOMMU active, no iommu=pt, group type unknown", edit: func(t *testing.T, r string) {
			addIOMMU(t, r, "")
		}, check: audit.CheckIOMMUMode, sev: "info"},
		{name: "queue IRQ on an isolated CPU", edit: func(t *testing.T, r string) {
			put(t, r, "sys/devices/system/cpu/isolated", "50\n")
		}, check: audit.CheckIsolatedIRQ, sev: "warning", irq: []int{284}, cpus: "50"},
		{name: "CPUs 50-51 kept for the application", args: []string{"--app-cpus", "50-51"},
			check: audit.CheckIRQAppCPU, sev: "warning", irq: []int{284, 287}, cpus: "50-51"},
		{name: "capture without process folders", check: audit.CheckNotChecked, sev: "info"},

		{name: "benchmark not started yet", args: []string{"--comm", "iperf3"}, check: audit.CheckProcAbsent, sev: "warning"},
	}
	seen := map[audit.Check]bool{}
	var mu sync.Mutex
	t.Run("variants", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				root := hosttest.Copy(t, "seed")
				if tt.edit != nil {
					tt.edit(t, root)
				}
				doc, _ := auditJSON(t, root, tt.args...)
				got := byCheck(doc, tt.check)
				for _, f := range got {
					if f.Severity == tt.sev && (tt.irq == nil || slices.Equal(f.IRQ, tt.irq)) && (tt.cpus == "" || f.CPUs == tt.cpus) {
						mu.Lock()
						seen[tt.check] = true
						mu.Unlock()
						return
					}
				}
				t.Errorf("no %s %s finding with IRQs %v CPUs %q; got %+v", tt.sev, tt.check, tt.irq, tt.cpus, got)
			})
		}
	})
	// queues-vs-cpus needs a NIC with more queues than local CPUs: arm64
	// has 8 queue IRQs for node 0's 4 CPUs.
	doc, _ := auditJSON(t, hosttest.Copy(t, "arm64"))
	if f := byCheck(doc, audit.CheckQueuesVsCPUs); len(f) == 1 && f[0].NIC == "eth0" && strings.Contains(f[0].Message, "8 queues for 4 local online CPUs") {
		seen[audit.CheckQueuesVsCPUs] = true
	} else {
		t.Errorf("arm64: queues-vs-cpus %+v, want one for eth0's 8 queues on 4 CPUs", f)
	}
	// proc-nic-unaudited needs a second NIC: offline-2node's ens1f0 is
	// used, eth1 audited.
	root := hosttest.Copy(t, "offline-2node")
	writeProc(t, root, 16, testProc{pid: 5001, comm: "iperf3", allowed: "15",
		sockets: []hosttest.Socket{{Proto: "tcp", Local: "10.1.0.2:5201", Inode: 9}}})
	hosttest.WriteRoutes(t, filepath.Join(root, "proc/5001/net"), []hosttest.Route{{Iface: "ens1f0", Dst: "10.1.0.0/24"}}, nil)
	doc, _ = auditJSON(t, root, "--nic", "eth1", "--pid", "5001")
	if f := byCheck(doc, audit.CheckProcNICUnaudited); len(f) == 1 && strings.Contains(f[0].Message, "uses ens1f0") && f[0].Fix == "irqnuma audit --nic ens1f0 --pid 5001" {
		seen[audit.CheckProcNICUnaudited] = true
	} else {
		t.Errorf("offline-2node: proc-nic-unaudited %+v, want ens1f0 named with its fix", f)
	}
	// The steering: sos-ice's ethtool text has one flow rule, to queue 2,
	// whose IRQ 159 lands on node 0, and 8 combined channels for node
	// 1's 4 cores.
	doc, _ = auditJSON(t, hosttest.Root("sos-ice"))
	if f := byCheck(doc, audit.CheckNtupleRemote); len(f) == 1 && f[0].NIC == "em1" && strings.Contains(f[0].Message, "ntuple rule 1023 of em1 (tcp4 dst-ip 10.0.0.2 dst-port 5201) sends its flows to queue 2, whose IRQ 159") {
		seen[audit.CheckNtupleRemote] = true
	} else {
		t.Errorf("sos-ice: ntuple-remote %+v, want rule 1023 to queue 2 on IRQ 159", f)
	}
	if f := byCheck(doc, audit.CheckChannelsVsCores); len(f) == 1 && strings.Contains(f[0].Message, "em1 has 8 combined channels (at most 64) for 4 local cores") {
		seen[audit.CheckChannelsVsCores] = true
	} else {
		t.Errorf("sos-ice: channels-vs-cores %+v, want 8 channels (at most 64) for 4 cores", f)
	}
	// --zc rx on sos-ice: ice has no queue API and no header split
	// (blocked); the kernel's files are not captured (unknown).
	doc, _ = auditJSON(t, hosttest.Root("sos-ice"), "--zc", "rx")
	if f := byCheck(doc, audit.CheckZCBlocked); len(f) == 3 && f[0].NIC == "em1" {
		seen[audit.CheckZCBlocked] = true
	} else {
		t.Errorf("sos-ice --zc rx: zc-blocked %+v, want queue-api, header-split and flow-rule", f)
	}
	if f := byCheck(doc, audit.CheckZCUnknown); len(f) == 6 {
		seen[audit.CheckZCUnknown] = true
	} else {
		t.Errorf("sos-ice --zc rx: zc-unknown %+v, want 6", f)
	}
	// steering-malformed needs a recorded reply that claims more queues
	// than sysfs shows: the seed's eth0 has 16 rx queues, its GRXRINGS
	// answer is set to 17.
	root = seedWithSteering(t)
	patchReply(t, root, "ioctl.rxrings", rxringsData, 8, 17)
	doc, _ = auditJSON(t, root)
	if f := byCheck(doc, audit.CheckSteeringMalformed); len(f) == 1 && f[0].NIC == "eth0" &&
		strings.Contains(f[0].Message, "rss-rings: malformed (claims 17 rx rings, but /sys/class/net shows 16 rx queues)") {
		seen[audit.CheckSteeringMalformed] = true
	} else {
		t.Errorf("seed with 17 rings: steering-malformed %+v, want one naming the 17 rings and the 16 queues", f)
	}
	// No committed tree holds an RSS table, hash fields or NAPI (a
	// sosreport does not collect them, and only a live host's recording
	// does): those checks are held by the audit package's tests on
	// readings built from the real captures' numbers.
	for _, c := range []audit.Check{audit.CheckRSSQueueMissing, audit.CheckRSSQueueUnused, audit.CheckNAPIThreadRemote,
		audit.CheckNAPIThreadUnpinned, audit.CheckNAPIThreadShared, audit.CheckUDPHashNoPorts, audit.CheckNAPISettings} {
		seen[c] = true
	}
	for _, c := range audit.Checks() {
		if !seen[c] {
			t.Errorf("no test tree triggers %s", c)
		}
	}
}

// TestAuditClean: the seed host after pinning IRQ 290 to a free local CPU,
// on a live-like tree (processes, an empty /sys/class/iommu), with a
// well-placed iperf3 and irqbalance banning eth0's IRQs, has no findings
// but the one saying the tree holds no steering (no ethtool or netdev
// capture), so --fail-on warning passes and --fail-on info does not.
func TestAuditClean(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	setIRQ(t, root, 290, "16", "16")
	put(t, root, "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/net/eth0/queues/tx-6/xps_cpus", "00000000,00010000\n")
	mkdir(t, root, "sys/class/iommu")
	writeProc(t, root, 64, testProc{pid: 812, comm: "irqbalance", allowed: "0-63",
		cmdline: []string{"/usr/sbin/irqbalance", "--foreground", "--banmod=mlx5"}})
	writeProc(t, root, 64, testProc{pid: 5001, comm: "iperf3", allowed: "22,25,27",
		threads:  []testThread{{tid: 5001, allowed: "22,25,27", lastCPU: 25}, {tid: 5002, allowed: "22,25,27", lastCPU: 22}},
		numaMaps: "55d0c0000000 default anon=900 dirty=900 N1=900 kernelpagesize_kB=4\n", sockets: iperf3OnEth0})
	doc, code := auditJSON(t, root, "--comm", "iperf3", "--fail-on", "warning")
	if code != cli.ExitOK || len(doc.Findings) != 1 || doc.Findings[0].Check != audit.CheckNotChecked || doc.Findings[0].Subject != "steering" || doc.Findings[0].NIC != "" {
		t.Errorf("clean seed: exit %d, findings %+v; want exit 0 and only the host's not-checked steering", code, doc.Findings)
	}
	if _, code := auditJSON(t, root, "--comm", "iperf3", "--fail-on", "info"); code != cli.ExitFindings {
		t.Errorf("clean seed, --fail-on info: exit %d, want %d: the steering was not checked", code, cli.ExitFindings)
	}
	stdout, _, _ := runCLI(t, "--root", root, "audit", "--comm", "iperf3")
	// The clean NIC is still seen to be checked, and the process's NIC said.
	if !strings.HasPrefix(stdout, "verdict: ready: nothing at or above warning (1 info)\n") ||
		!strings.Contains(stdout, "\n\nprocesses\nPID   COMM    USES  JUDGED AGAINST  HOW\n5001  iperf3  eth0  eth0 (sockets)  ") ||
		!strings.HasSuffix(stdout, "\n\neth0: mlx5_core 0000:98:00.0, local node 1, 16 queue IRQs\nno findings\n\nverdict: ready: nothing at or above warning (1 info)\n") {
		t.Errorf("clean seed table = %q", stdout)
	}
	if !slices.Equal(doc.Checked, []string{"eth0"}) {
		t.Errorf("checked_nics %q, want eth0", doc.Checked)
	}
}

// TestAuditExitCodes: 0/3 by --fail-on, 1 for runtime errors, 2 for usage.
func TestAuditExitCodes(t *testing.T) {
	t.Parallel()
	seed := hosttest.Shared(t, "seed")        // 1 warning, 2 info
	nps2 := hosttest.Shared(t, "nps2")        // errors
	virtio := hosttest.Shared(t, "vm-virtio") // info only
	tests := []struct {
		give []string
		want int
	}{
		{give: []string{"--root", seed, "audit"}, want: 3},
		{give: []string{"--root", seed, "audit", "--fail-on", "info"}, want: 3},
		{give: []string{"--root", seed, "audit", "--fail-on", "warning"}, want: 3},
		{give: []string{"--root", seed, "audit", "--fail-on", "error"}, want: 0},
		{give: []string{"--root", seed, "audit", "--fail-on", "never"}, want: 0},
		{give: []string{"--root", nps2, "audit", "--fail-on", "error"}, want: 3},
		{give: []string{"--root", virtio, "audit"}, want: 0},
		{give: []string{"--root", virtio, "audit", "--fail-on", "info"}, want: 3},
		{give: []string{"--root", seed, "audit", "--fail-on", "bad"}, want: 2},
		{give: []string{"--root", seed, "audit", "--nic", "eth9"}, want: 2},
		{give: []string{"--root", seed, "audit", "--pid", "abc"}, want: 2},
		{give: []string{"--root", seed, "audit", "--pid", "-4"}, want: 2},
		{give: []string{"--root", seed, "audit", "extra"}, want: 2},
		// A process that does not run is a proc-absent warning, not a
		// failure to run the audit.
		{give: []string{"--root", seed, "audit", "--pid", "99999"}, want: 3},
		{give: []string{"--root", seed, "audit", "--comm", "iperf3"}, want: 3},
		{give: []string{"--root", seed, "audit", "--comm", "iperf3", "--fail-on", "error"}, want: 0},
		{give: []string{"--root", filepath.Join(seed, "nonexistent"), "audit"}, want: 2},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, tt.give...)
		if code != tt.want {
			t.Errorf("irqnuma %s: exit %d, want %d (stderr %q)", strings.Join(tt.give[2:], " "), code, tt.want, stderr)
		}
		if (code == 1 || code == 2) && (!strings.HasPrefix(stderr, "irqnuma: ") || strings.Count(stderr, "\n") != 1) {
			t.Errorf("irqnuma %s: stderr %q, want one line starting irqnuma:", strings.Join(tt.give[2:], " "), stderr)
		}
		if code == 0 || code == 3 {
			if stderr != "" {
				t.Errorf("irqnuma %s: stderr %q, want none", strings.Join(tt.give[2:], " "), stderr)
			}
		}
	}
}

// TestAuditGateScript runs the built binary from a shell script the way
// the README shows: the benchmark runs only when the audit passes.
func TestAuditGateScript(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	bin := cliBinary(t)
	script := `if "$IRQNUMA" --root "$1" audit --fail-on "$2" >/dev/null; then echo run benchmark; else echo "audit says no ($?)"; fi`
	tests := []struct {
		host, failOn, want string
	}{
		{host: "seed", failOn: "warning", want: "audit says no (3)"},
		{host: "seed", failOn: "error", want: "run benchmark"},
		{host: "vm-virtio", failOn: "warning", want: "run benchmark"},
	}
	for _, tt := range tests {
		cmd := exec.Command("sh", "-c", script, "gate", hosttest.Root(tt.host), tt.failOn)
		cmd.Env = append(os.Environ(), "IRQNUMA="+bin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gate script: %v", err)
		}
		if got := strings.TrimSpace(string(out)); got != tt.want {
			t.Errorf("gate on %s --fail-on %s = %q, want %q", tt.host, tt.failOn, got, tt.want)
		}
	}
}

// TestAuditLive audits this machine: it must finish with a verdict and
// well-formed JSON, and every NIC it reports must exist here.
func TestAuditLive(t *testing.T) {
	t.Parallel()
	hosttest.Live(t)
	if _, err := os.Stat("/proc/interrupts"); err != nil {
		t.Skipf("no live /proc: %v", err)
	}
	doc, _ := auditJSON(t, "/")
	for _, f := range doc.Findings {
		if f.NIC != "" {
			if _, err := os.Stat("/sys/class/net/" + f.NIC); err != nil {
				t.Errorf("finding about NIC %s, which this host lacks: %+v", f.NIC, f)
			}
		}
	}
	// Watching this test process: every process finding is about it.
	doc, _ = auditJSON(t, "/", "--pid", strconv.Itoa(os.Getpid()))
	for _, f := range doc.Findings {
		if strings.HasPrefix(string(f.Check), "proc-") && f.PID != os.Getpid() {
			t.Errorf("finding about PID %d, want %d: %+v", f.PID, os.Getpid(), f)
		}
	}
}

// testThread is one task of a test process.
type testThread struct {
	tid     int
	allowed string // Cpus_allowed_list
	lastCPU int    // stat field 39
}

// testProc is a process written into a host tree in the kernel's formats.
type testProc struct {
	pid      int
	comm     string
	allowed  string
	threads  []testThread // nil: one thread, the main one, last on its first allowed CPU
	numaMaps string       // "": no numa_maps file
	cmdline  []string
	environ  []string
	// sockets are its TCP and UDP sockets, with routes as test input:
	// an on-link 192.0.2.0/24 and the default route via 192.0.2.1, both
	// through eth0 (the seed's NIC), in its /proc/<pid>/net. nil: none,
	// and no fd folder.
	sockets []hosttest.Socket
}

// seedRoutes are the routes of testProc's namespace (test input: the
// seed tree has none).
var seedRoutes = []hosttest.Route{
	{Iface: "eth0", Dst: "0.0.0.0/0", Gateway: "192.0.2.1", Metric: 100},
	{Iface: "eth0", Dst: "192.0.2.0/24", Metric: 100},
}

// iperf3OnEth0 is an iperf3 server's sockets on the seed: it listens on
// eth0's address and has a test's connection through it.
var iperf3OnEth0 = []hosttest.Socket{
	{Proto: "tcp", Local: "192.0.2.2:5201", Inode: 41001},
	{Proto: "tcp", Local: "192.0.2.2:5201", Remote: "198.51.100.9:40712", Inode: 41002},
}

// writeProc writes /proc/<pid>/{comm,status,stat,cmdline,environ,
// numa_maps} and /proc/<pid>/task/<tid>/{comm,stat,status}. nbits is the
// host's nr_cpu_ids (the width of Cpus_allowed).
func writeProc(t testing.TB, root string, nbits int, p testProc) {
	t.Helper()
	if p.threads == nil {
		set, err := cpuset.ParseList(p.allowed)
		if err != nil {
			t.Fatal(err)
		}
		first, _ := set.Min()
		p.threads = []testThread{{tid: p.pid, allowed: p.allowed, lastCPU: first}}
	}
	base := fmt.Sprintf("proc/%d", p.pid)
	mkdir(t, root, base+"/task")
	put(t, root, base+"/comm", p.comm+"\n")
	put(t, root, base+"/status", statusText(t, p.comm, p.pid, p.pid, len(p.threads), p.allowed, nbits))
	put(t, root, base+"/stat", statText(p.pid, p.comm, len(p.threads), p.threads[0].lastCPU))
	argv := p.cmdline
	if argv == nil {
		argv = []string{p.comm}
	}
	put(t, root, base+"/cmdline", strings.Join(argv, "\x00")+"\x00")
	env := ""
	if len(p.environ) > 0 {
		env = strings.Join(p.environ, "\x00") + "\x00"
	}
	put(t, root, base+"/environ", env)
	if p.numaMaps != "" {
		put(t, root, base+"/numa_maps", p.numaMaps)
	}
	if p.sockets != nil {
		hosttest.WriteSockets(t, root, p.pid, p.sockets)
		hosttest.WriteRoutes(t, filepath.Join(root, base, "net"), seedRoutes, nil)
	}
	for _, th := range p.threads {
		tb := fmt.Sprintf("%s/task/%d", base, th.tid)
		mkdir(t, root, tb)
		put(t, root, tb+"/comm", p.comm+"\n")
		put(t, root, tb+"/status", statusText(t, p.comm, th.tid, p.pid, len(p.threads), th.allowed, nbits))
		put(t, root, tb+"/stat", statText(th.tid, p.comm, len(p.threads), th.lastCPU))
	}
}

// statusText is /proc/<pid>/status as Linux 6.x prints it (the fields
// irqnuma and procfs read, in the kernel's order and layout).
func statusText(t testing.TB, comm string, pid, tgid, threads int, allowed string, nbits int) string {
	t.Helper()
	set, err := cpuset.ParseList(allowed)
	if err != nil {
		t.Fatal(err)
	}
	mems := strings.TrimSuffix(strings.Repeat("00000000,", 31), ",") + ",00000003"
	return fmt.Sprintf("Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t1\nTracerPid:\t0\n"+
		"Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t64\nGroups:\t \nThreads:\t%d\n"+
		"Cpus_allowed:\t%s\nCpus_allowed_list:\t%s\nMems_allowed:\t%s\nMems_allowed_list:\t0-1\n"+
		"voluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n",
		comm, tgid, pid, threads, set.Mask(nbits), set.List(), mems)
}

// statText is /proc/<pid>/stat: 52 fields, processor (the last CPU) 39th.
func statText(pid int, comm string, threads, lastCPU int) string {
	f := []string{strconv.Itoa(pid), "(" + comm + ")", "S", "1", strconv.Itoa(pid), strconv.Itoa(pid), "0", "-1", "4194560",
		"120", "0", "0", "0", "35", "12", "0", "0", "20", "0", strconv.Itoa(threads), "0", "64793", "5259264", "1036",
		"18446744073709551615", "93928839999488", "93928840788893", "140724007136560", "0", "0", "0", "0", "0", "0",
		"1", "0", "0", "17", strconv.Itoa(lastCPU), "0", "0", "0", "0", "0", "93928841022192", "93928841070436",
		"93928846381056", "140724007144285", "140724007144300", "140724007144300", "140724007145450", "0"}
	return strings.Join(f, " ") + "\n"
}

// put writes a file in a host tree, keeping the mode of an existing file
// (0444 for a new one).
func put(t testing.TB, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, rel)
	mode := os.FileMode(0o444)
	if fi, err := os.Stat(p); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".tmp", []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p+".tmp", mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t testing.TB, root, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, rel), 0o755); err != nil {
		t.Fatal(err)
	}
}

func chmod(t testing.TB, root, rel string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(root, rel), mode); err != nil {
		t.Fatal(err)
	}
}

// setIRQ rewrites /proc/irq/N's requested and effective affinity in both
// forms, 64 bits wide as on the seed host.
func setIRQ(t testing.TB, root string, n int, affinity, effective string) {
	t.Helper()
	aff, err := cpuset.ParseList(affinity)
	if err != nil {
		t.Fatal(err)
	}
	eff, err := cpuset.ParseList(effective)
	if err != nil {
		t.Fatal(err)
	}
	dir := fmt.Sprintf("proc/irq/%d/", n)
	put(t, root, dir+"smp_affinity_list", aff.List()+"\n")
	put(t, root, dir+"smp_affinity", aff.Mask(64)+"\n")
	put(t, root, dir+"effective_affinity_list", eff.List()+"\n")
	put(t, root, dir+"effective_affinity", eff.Mask(64)+"\n")
}

// addIOMMU gives the seed host an active VT-d IOMMU (dmar0, dmar1) with
// eth0's PCI function in group 40; typ is the group's type file ("" for
// none, as before Linux 5.11).
func addIOMMU(t testing.TB, root, typ string) {
	t.Helper()
	mkdir(t, root, "sys/devices/virtual/iommu/dmar0")
	mkdir(t, root, "sys/devices/virtual/iommu/dmar1")
	mkdir(t, root, "sys/class/iommu")
	mkdir(t, root, "sys/kernel/iommu_groups/40/devices")
	for _, l := range [][2]string{
		{"sys/class/iommu/dmar0", "../../devices/virtual/iommu/dmar0"},
		{"sys/class/iommu/dmar1", "../../devices/virtual/iommu/dmar1"},
		{"sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/iommu_group", "../../../../kernel/iommu_groups/40"},
	} {
		if err := os.Symlink(l[1], filepath.Join(root, l[0])); err != nil {
			t.Fatal(err)
		}
	}
	if typ != "" {
		put(t, root, "sys/kernel/iommu_groups/40/type", typ+"\n")
	}
}

// BenchmarkAuditHost is the number: the whole audit (read the
// topology, the 1,000 IRQs, 20 watched processes with 8 threads each,
// irqbalance, cmdline and IOMMU, then every check) of a 512-CPU host.
func BenchmarkAuditHost(b *testing.B) {
	spec := hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488}
	if spec.IRQs() != 1000 {
		b.Fatalf("spec has %d IRQs, want 1000", spec.IRQs())
	}
	root := hosttest.Synthetic(b, spec)
	var pids []int
	for i := range 20 {
		pid := 2000 + 10*i
		p := testProc{pid: pid, comm: "iperf3", allowed: fmt.Sprintf("%d-%d", 16*i, 16*i+31),
			numaMaps: "55d0c0000000 default anon=900 dirty=900 N0=600 N1=300 kernelpagesize_kB=4\n"}
		for j := range 8 {
			p.threads = append(p.threads, testThread{tid: pid + j, allowed: p.allowed, lastCPU: 16*i + j})
		}
		writeProc(b, root, 512, p)
		pids = append(pids, pid)
	}
	b.ReportAllocs()
	fsys := hosttest.Open(b, root)
	for b.Loop() {
		st, err := audit.Read(fsys, audit.Selection{Selection: proc.Selection{PIDs: pids}})
		if err != nil {
			b.Fatal(err)
		}
		if len(st.Findings) == 0 {
			b.Fatal("no findings")
		}
	}
}

// TestAuditRealhosts audits every real capture: each must finish with a
// verdict, and the findings checked by hand against the capture's files
// must be there exactly.
func TestAuditRealhosts(t *testing.T) {
	t.Parallel()
	caps := realhosts.MustCaptures(t)
	// Checked by hand in the unpacked captures (see the comments).
	type handCheck struct {
		nic     string
		check   audit.Check
		irq     []int
		cpus    string
		message string // a part of the message
	}
	hand := map[string][]handCheck{
		// /proc/irq/{87,93}/effective_affinity_list are 2 and
		// /proc/irq/{89,92}/... are 8 (eno4-TxRx-0, -6, -2, -5 in
		// /proc/interrupts); 0000:1a:00.1/numa_node is 0, node 0 is the
		// even CPUs 0-30 and eno4's queue IRQs use 2, 8, 12, 14, 22, 24.
		"cnto-worker2": {
			{nic: "eno4", check: audit.CheckIRQSharedCPU, irq: []int{87, 93}, cpus: "2",
				message: "10 local CPUs serve none of eno4's queue IRQs (0,4,6,10,16,18,20,26,28,30)"},
			{nic: "eno4", check: audit.CheckIRQSharedCPU, irq: []int{89, 92}, cpus: "8"},
		},
		// 104 ens1f1-TxRx rows; 0000:3b:00.1/numa_node is 0 (52 even
		// CPUs); 9 of them (529 531 545 556 558 560 569 592 601) have
		// effective_affinity_list 98, and even CPUs 0,16,18,58,66,70
		// take none.
		"dell-2numa": {
			{nic: "ens1f1", check: audit.CheckIRQSharedCPU,
				message: "ens1f1 has 104 queues for 52 local CPUs, so an even spread puts at most 2 on each; instead CPU 98 takes 9"},
			{nic: "ens1f1", check: audit.CheckIRQSharedCPU, message: "while 6 local CPUs serve none (0,16,18,58,66,70)"},
			{nic: "ens1f1", check: audit.CheckQueuesVsCPUs, message: "ens1f1 has 104 queues for 52 local online CPUs"},
		},
	}
	// The hwloc captures hold no NIC (or no /proc/interrupts): their
	// audit checks nothing, and no gate may pass on it.
	emptyAudit := map[string]bool{
		"hwloc-128arm-2pa2n8cluster4co": true, "hwloc-16em64t-4s2c2t-offlines": true,
		"hwloc-32em64t-2n8c+dax+nvme+mic+dimms": true, "hwloc-32intel64-2p8co2t+8ve": true,
		"hwloc-48amd64-4pa2n6c-sparse": true,
	}
	for _, c := range caps {
		t.Run(c.Name, func(t *testing.T) {
			root := realhosts.Root(t, c)
			doc, code := auditJSON(t, root, "--fail-on", "warning")
			nothing := false
			for _, f := range byCheck(doc, audit.CheckNotChecked) {
				if f.Subject == "nics" {
					nothing = true
					if f.Severity != string(audit.SeverityError) || !strings.Contains(f.Message, "no NIC") {
						t.Errorf("nothing audited, but the finding says %s %q", f.Severity, f.Message)
					}
				}
			}
			if emptyAudit[c.Name] && !nothing {
				t.Errorf("no not-checked nics finding on a capture without NICs")
			}
			if nothing && code != cli.ExitFindings {
				t.Errorf("an audit that checked no NIC passed --fail-on warning (exit %d)", code)
			}
			if _, _, code := runCLI(t, "--root", root, "audit", "--fail-on", "error"); nothing && code != cli.ExitFindings {
				t.Errorf("an audit that checked no NIC passed --fail-on error (exit %d)", code)
			}
			if len(doc.Findings) == 0 {
				t.Fatalf("no findings at all; a capture always lacks something (irqbalance, IOMMU)")
			}
			for _, f := range doc.Findings {
				// Captures hold no processes, no cpufreq and no
				// IOMMU folders: those checks must say not-checked,
				// never guess.
				switch f.Check {
				case audit.CheckIrqbalance, audit.CheckIOMMUMode, audit.CheckCPUGovernor,
					audit.CheckProcRemote, audit.CheckProcIRQOverlap, audit.CheckProcMemRemote:
					t.Errorf("%s on a capture without the files for it: %+v", f.Check, f)
				}
			}
			for _, want := range hand[c.Name] {
				found := false
				for _, f := range byCheck(doc, want.check) {
					if f.NIC == want.nic && (want.irq == nil || slices.Equal(f.IRQ, want.irq)) &&
						(want.cpus == "" || f.CPUs == want.cpus) && strings.Contains(f.Message, want.message) {
						found = true
					}
				}
				if !found {
					t.Errorf("missing hand-checked %s of %s (IRQs %v, CPUs %q, %q); got %+v", want.check, want.nic,
						want.irq, want.cpus, want.message, byCheck(doc, want.check))
				}
			}
		})
	}
}

// TestAuditNAPIThreadsByName: threaded NAPI (sysfs threaded 1) on a tree
// whose netdev names no kthread (as 6.1, which has no napi-get): the
// audit finds eth0's napi/eth0-N kthreads by name in /proc and judges
// them, a kthread pinned to node 0 remote and one allowed everywhere
// unpinned, each named by its name and PID; another NIC's kthread
// (napi/eth0-x-5) is not eth0's.
func TestAuditNAPIThreadsByName(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	put(t, root, "sys/class/net/eth0/threaded", "1\n")
	writeProc(t, root, 64, testProc{pid: 900, comm: "napi/eth0-8193", allowed: "0-15"})
	writeProc(t, root, 64, testProc{pid: 901, comm: "napi/eth0-0", allowed: "0-63",
		threads: []testThread{{tid: 901, allowed: "0-63", lastCPU: 20}}})
	writeProc(t, root, 64, testProc{pid: 902, comm: "napi/eth0-x-5", allowed: "0-15"})
	doc, _ := auditJSON(t, root, "--nic", "eth0")
	remote, unpinned := byCheck(doc, audit.CheckNAPIThreadRemote), byCheck(doc, audit.CheckNAPIThreadUnpinned)
	if len(remote) != 1 || !slices.Equal(remote[0].TID, []int{900}) || !strings.Contains(remote[0].Message, "the NAPI kthread napi/eth0-8193 (PID 900) of eth0 runs on CPUs 0-15") {
		t.Errorf("napi-thread-remote %+v, want napi/eth0-8193 (PID 900) named", remote)
	}
	if len(unpinned) != 1 || !slices.Equal(unpinned[0].TID, []int{901}) || !strings.Contains(unpinned[0].Message, "napi/eth0-0 (PID 901)") {
		t.Errorf("napi-thread-unpinned %+v, want napi/eth0-0 (PID 901) named", unpinned)
	}
	for _, f := range byCheck(doc, audit.CheckNotChecked) {
		if strings.Contains(f.Message, "kthread") {
			t.Errorf("not-checked: %s", f.Message)
		}
	}
	// Threaded NAPI off: the same kthreads are not judged.
	put(t, root, "sys/class/net/eth0/threaded", "0\n")
	doc, _ = auditJSON(t, root, "--nic", "eth0")
	if got := append(byCheck(doc, audit.CheckNAPIThreadRemote), byCheck(doc, audit.CheckNAPIThreadUnpinned)...); len(got) != 0 {
		t.Errorf("threaded 0: %+v", got)
	}
}

// putGroup puts a cgroup v2 group with files under root, the unified
// hierarchy's root marked as cgroup v2 mounts it.
func putGroup(t *testing.T, root, group string, files map[string]string) {
	t.Helper()
	put(t, root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
	for name, data := range files {
		put(t, root, "sys/fs/cgroup"+group+"/"+name, data)
	}
}
