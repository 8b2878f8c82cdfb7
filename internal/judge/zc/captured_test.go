package zc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// sosTree is a copy of the sos-ice tree (a two-node host with one NIC,
// em1 at 0000:63:00.0) whose sosreport holds, for em1, the real captures
// named (sos' file name -> the capture under testdata/realhosts/nic),
// and none of the ethtool output listed in drop.
func sosTree(t *testing.T, captures map[string]string, drop ...string) string {
	t.Helper()
	nic := filepath.Join(realhosts.Require(t), "nic")
	// The tree has no modes file for hosttest.Copy: a plain copy, links kept.
	root := t.TempDir()
	if out, err := exec.Command("cp", "-a", hosttest.Root("sos-ice")+"/.", root).CombinedOutput(); err != nil {
		t.Fatalf("copy sos-ice: %v: %s", err, out)
	}
	dir := filepath.Join(root, "sos_commands", "networking")
	for name, capture := range captures {
		b, err := os.ReadFile(filepath.Join(nic, capture))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range drop {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// check runs Check on the root for em1.
func check(t *testing.T, root string, o Options) *Report {
	t.Helper()
	fsys := hosttest.Open(t, root)
	h, err := topology.Read(fsys)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(fsys, h, "em1", o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// verdict is what a test wants of one prerequisite: its status and a
// piece of its evidence.
type verdict struct {
	status Status
	says   string
}

func assertVerdicts(t *testing.T, r *Report, want map[ID]verdict) {
	t.Helper()
	if len(r.Prereqs) != len(want) {
		t.Errorf("%d prerequisites, want %d", len(r.Prereqs), len(want))
	}
	for _, p := range r.Prereqs {
		w, ok := want[p.ID]
		if !ok {
			t.Errorf("%s: not expected", p.ID)
			continue
		}
		if p.Status.Or(statusUnknown) != w.status || !strings.Contains(p.Evidence, w.says) {
			t.Errorf("%s = %s (%q), want %s saying %q", p.ID, p.Status, p.Evidence, w.status, w.says)
		}
	}
}

// notCaptured are the prerequisites a sosreport never shows: the
// kernel's files, the caller's capabilities, XDP and netdev netlink.
var notCaptured = map[ID]verdict{
	IDKernel:    {statusUnknown, "not captured: the root has no /proc/sys/kernel/osrelease"},
	IDIOURing:   {statusUnknown, "not captured: the root has no /proc/sys/kernel/io_uring_disabled"},
	IDCapNetAdm: {statusUnknown, "not captured"},
	IDXDP:       {statusUnknown, "not captured"},
	IDQueueFree: {statusUnknown, "not captured"},
}

func with(base map[ID]verdict, more map[ID]verdict) map[ID]verdict {
	out := map[ID]verdict{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// iceCaptures are the real E810 em1 captures (kernel 6.15, ntuple on,
// TCP data split n/a); the tree's --show-ntuple is its constructed rule
// sending TCP/IPv4 to 10.0.0.2 port 5201 to queue 2.
var iceCaptures = map[string]string{
	"ethtool_-i_em1": "ethtool-i/ice_em1.txt",
	"ethtool_-k_em1": "ethtool-k/ice_em1_ntuple_on.txt",
	"ethtool_-g_em1": "ethtool-g/ice_em1_8160_newformat.txt",
	"ethtool_-l_em1": "ethtool-l/ice_em1_rx64_tx64_combined64_8.txt",
	"ethtool_-c_em1": "ethtool-c/ice_em1_newformat.txt",
}

func TestCheckIceCapture(t *testing.T) {
	root := sosTree(t, iceCaptures)
	port, q := 5201, 2
	r := check(t, root, Options{Queue: &q, Port: &port})
	if r.Driver != "ice" || !unknown.Is(r.Queue, 2) || r.QueueBy != "--queue" {
		t.Errorf("driver %q queue %v by %q, want ice, 2, --queue", r.Driver, r.Queue, r.QueueBy)
	}
	assertVerdicts(t, r, with(notCaptured, map[ID]verdict{
		IDQueueAPI:   {StatusFails, "ice does not implement netdev_queue_mgmt_ops"},
		IDHeaderSplt: {StatusFails, "TCP data split n/a"},
		IDChannels:   {StatusHolds, "8 rx queue(s)"},
		IDRSS:        {statusUnknown, "not captured (a sosreport does not collect ethtool -x)"},
		IDNtuple:     {StatusHolds, "ntuple-filters: on"},
		IDFlowRule:   {StatusHolds, "rule 1023: tcp4 dst-port 5201 to queue 2"},
	}))
	if b := r.Blocker(); b == nil || b.ID != IDQueueAPI {
		t.Errorf("blocker %+v, want queue-api", b)
	}
	// Without --queue: the last of the 8 queues, which the rule misses.
	r = check(t, root, Options{Port: &port})
	if !unknown.Is(r.Queue, 7) {
		t.Fatalf("default queue %v, want 7", r.Queue)
	}
	for _, p := range r.Prereqs {
		if p.ID == IDFlowRule && (p.Status.Or(statusUnknown) != StatusFails || !strings.Contains(p.Evidence, "rule 1023 sends tcp4 dst-port 5201 to queue 2") ||
			p.Fix != "ethtool -N em1 flow-type tcp6 dst-port 5201 action 7") {
			t.Errorf("flow-rule for queue 7: %+v", p)
		}
	}
}

// bnxtCaptures are the real bnxt_en isp1 captures (4.19 kernel, an older
// ethtool): driver, features (ntuple on), coalescing and the rings in
// the old format, without the newer settings; no -l and no rules.
var bnxtCaptures = map[string]string{
	"ethtool_-i_em1": "ethtool-i/bnxt_en_isp1.txt",
	"ethtool_-k_em1": "ethtool-k/bnxt_en_isp1_ntuple_on.txt",
	"ethtool_-g_em1": "ethtool-g/bnxt_en_isp1_whitespace_stripped.txt",
	"ethtool_-c_em1": "ethtool-c/bnxt_en_isp1.txt",
}

func TestCheckBnxtCapture(t *testing.T) {
	root := sosTree(t, bnxtCaptures, "ethtool_-l_em1", "ethtool_--show-ntuple_em1")
	r := check(t, root, Options{})
	if r.Driver != "bnxt_en" || r.Queue.Known() {
		t.Errorf("driver %q queue %v, want bnxt_en and no queue (channels not captured)", r.Driver, r.Queue)
	}
	base := with(notCaptured, map[ID]verdict{
		IDQueueAPI:   {StatusHolds, "bnxt_en has bnxt_queue_mgmt_ops"},
		IDHeaderSplt: {statusUnknown, "none of the newer ring settings"},
		IDChannels:   {statusUnknown, "not captured (no sos_commands/networking/ethtool_-l_em1)"},
		IDNtuple:     {StatusHolds, "ntuple-filters: on"},
	})
	base[IDQueueFree] = verdict{statusUnknown, "no queue to check"}
	assertVerdicts(t, r, with(base, map[ID]verdict{
		IDRSS:      {statusUnknown, "no queue to check"},
		IDFlowRule: {statusUnknown, "no queue to check"},
	}))
	if b := r.Blocker(); b != nil {
		t.Errorf("blocker %+v, want none: nothing the capture shows fails", b)
	}
	q, port := 1, 9000
	r = check(t, root, Options{Queue: &q, Port: &port})
	base[IDQueueFree] = notCaptured[IDQueueFree]
	assertVerdicts(t, r, with(base, map[ID]verdict{
		IDRSS:      {statusUnknown, "not captured (a sosreport does not collect ethtool -x)"},
		IDFlowRule: {statusUnknown, "not captured (no sos_commands/networking/ethtool_--show-ntuple_em1)"},
	}))
}

type hostRead struct {
	fs kfile.FS
	h  *topology.Host
}

func hostFS(t *testing.T, root string) hostRead {
	t.Helper()
	fsys := hosttest.Open(t, root)
	h, err := topology.Read(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return hostRead{fsys, h}
}

// statusUnknown stands for an unknown verdict in the tests' tables.
const statusUnknown Status = "unknown"
