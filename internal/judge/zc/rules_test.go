package zc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func ptr[T any](v T) *T { return &v }

// writeFiles writes rel -> content under root, making folders.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, s := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// prereq returns the prerequisite id of r.
func prereq(t *testing.T, r *Report, id ID) Prereq {
	t.Helper()
	for _, p := range r.Prereqs {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no %s in %+v", id, r.Prereqs)
	return Prereq{}
}

// ready is a steering reading on which every receive prerequisite
// steering decides holds for queue 3, port 9000: 4 rx queues, header
// split on at threshold 0, a table over 0-2, ntuple on, a rule sending
// TCP/IPv6 port 9000 to queue 3, queue 3 free.
func ready() *steer.NIC {
	return &steer.NIC{
		Name:     "em1",
		Driver:   &steer.DriverInfo{Driver: "mlx5_core"},
		Channels: &steer.Channels{MaxCombined: 8, Combined: 4},
		Rings:    &steer.Rings{RX: 1024, TxPush: ptr(false), TCPDataSplit: unknown.Of(steer.TCPDataSplitEnabled), HDSThresh: ptr(uint32(0))},
		RSS:      &steer.RSS{Table: []uint32{0, 1, 2, 0, 1, 2, 0, 1}},
		Features: map[string]steer.Feature{"rx-ntuple-filter": {On: true}},
		Rules: &steer.Rules{Count: 1, Rules: []steer.Rule{{Location: 0, FlowType: "tcp6", DstPort: ptr(uint16(9000)), DstPortMask: 0xffff,
			Action: steer.RuleActionQueue, Queue: 3}}},
		Queues: []steer.NetdevQueue{{ID: 3, Type: steer.QueueTypeRX}, {ID: 3, Type: steer.QueueTypeTX}},
	}
}

// TestCheckSteering judges each steering prerequisite on readings that
// differ from a ready one by one setting, on a tree whose kernel is 6.18
// with io_uring enabled.
func TestCheckSteering(t *testing.T) {
	root := sosTree(t, iceCaptures)
	writeFiles(t, root, map[string]string{fileOSRelease: "6.18.44-fc-v857\n", fileIOURingOff: "0\n"})
	q, port := 3, 9000
	tests := []struct {
		name   string
		change func(n *steer.NIC)
		id     ID
		status Status
		says   string
		fix    string
	}{
		{"ready header split", func(*steer.NIC) {}, IDHeaderSplt, StatusHolds, "TCP data split on, hds-thresh 0", ""},
		{"split off", func(n *steer.NIC) { n.Rings.TCPDataSplit = unknown.Of(steer.TCPDataSplitDisabled) }, IDHeaderSplt, StatusFails, "TCP data split off",
			"ethtool -G em1 tcp-data-split on hds-thresh 0"},
		{"threshold", func(n *steer.NIC) { n.Rings.HDSThresh = ptr(uint32(256)) }, IDHeaderSplt, StatusFails, "hds-thresh 256", "ethtool -G em1 hds-thresh 0"},
		{"ready channels", func(*steer.NIC) {}, IDChannels, StatusHolds, "4 rx queue(s)", ""},
		{"one channel", func(n *steer.NIC) { n.Channels.Combined = 1 }, IDChannels, StatusFails, "queue 3 does not exist", "ethtool -L em1 combined 4"},
		{"ready rss", func(*steer.NIC) {}, IDRSS, StatusHolds, "none of the table's 8 entries is queue 3", ""},
		{"rss over all", func(n *steer.NIC) { n.RSS.Table = []uint32{0, 1, 2, 3} }, IDRSS, StatusFails, "1 of the table's 4 entries", "ethtool -X em1 equal 3"},
		{"rss not last", func(n *steer.NIC) { n.Channels.Combined = 5; n.RSS.Table = []uint32{0, 1, 2, 3, 4} }, IDRSS, StatusFails, "1 of the table's 5",
			"ethtool -X em1 weight 1 1 1 0 1"},
		{"ntuple off", func(n *steer.NIC) { n.Features["rx-ntuple-filter"] = steer.Feature{} }, IDNtuple, StatusFails, "ntuple-filters: off", "ethtool -K em1 ntuple on"},
		{"ready rule", func(*steer.NIC) {}, IDFlowRule, StatusHolds, "rule 0: tcp6 dst-port 9000 to queue 3", ""},
		{"rule elsewhere", func(n *steer.NIC) { n.Rules.Rules[0].Queue = 1 }, IDFlowRule, StatusFails, "rule 0 sends tcp6 dst-port 9000 to queue 1",
			"ethtool -N em1 flow-type tcp6 dst-port 9000 action 3"},
		{"rule masked port", func(n *steer.NIC) { n.Rules.Rules[0].DstPortMask = 0xff00 }, IDFlowRule, StatusFails, "none of the 1 rules", ""},
		{"rule via context", func(n *steer.NIC) {
			n.Rules.Rules[0].Context, n.Rules.Rules[0].Queue = ptr(uint32(1)), 0
			n.Contexts = []steer.RSS{{Context: 1, Table: []uint32{3, 3, 3, 3}}}
		}, IDFlowRule, StatusHolds, "rule 0", ""},
		{"context of two queues", func(n *steer.NIC) {
			n.Rules.Rules[0].Context, n.Rules.Rules[0].Queue = ptr(uint32(1)), 0
			n.Contexts = []steer.RSS{{Context: 1, Table: []uint32{2, 3}}}
		}, IDFlowRule, StatusFails, "RSS context 1", ""},
		{"ready queue", func(*steer.NIC) {}, IDQueueFree, StatusHolds, "rx queue 3: no dmabuf, io-uring or xsk", ""},
		{"io_uring on queue", func(n *steer.NIC) { n.Queues[0].IOURing = true }, IDQueueFree, StatusFails, "io_uring zero-copy area", ""},
		{"dmabuf on queue", func(n *steer.NIC) { n.Queues[0].DMABuf = ptr(uint32(4)) }, IDQueueFree, StatusFails, "dmabuf 4", ""},
		{"xsk on queue", func(n *steer.NIC) { n.Queues[0].XSK = true }, IDQueueFree, StatusFails, "AF_XDP", ""},
		{"queue-api", func(*steer.NIC) {}, IDQueueAPI, StatusHolds, "mlx5_core has mlx5e_queue_mgmt_ops", ""},
		{"kernel", func(*steer.NIC) {}, IDKernel, StatusHolds, "6.18.44-fc-v857", ""},
		{"io_uring", func(*steer.NIC) {}, IDIOURing, StatusHolds, "io_uring_disabled: 0", ""},
	}
	for _, tt := range tests {
		n := ready()
		tt.change(n)
		r := check(t, root, Options{Queue: &q, Port: &port, Steer: n})
		p := prereq(t, r, tt.id)
		if p.Status.Or(statusUnknown) != tt.status || !strings.Contains(p.Evidence, tt.says) || tt.fix != "" && p.Fix != tt.fix {
			t.Errorf("%s: %s = %s (%q, fix %q), want %s saying %q, fix %q", tt.name, tt.id, p.Status, p.Evidence, p.Fix, tt.status, tt.says, tt.fix)
		}
	}
	// On a kernel before 6.15 a queue reporting nothing may still have an
	// AF_XDP socket: unknown, and the kernel itself fails.
	writeFiles(t, root, map[string]string{fileOSRelease: "6.12.0\n"})
	r := check(t, root, Options{Queue: &q, Port: &port, Steer: ready()})
	if p := prereq(t, r, IDQueueFree); p.Status.Or(statusUnknown) != statusUnknown {
		t.Errorf("queue-free on 6.12: %+v", p)
	}
	if p := prereq(t, r, IDKernel); p.Status.Or(statusUnknown) != StatusFails || r.Blocker() == nil || r.Blocker().ID != IDKernel {
		t.Errorf("kernel 6.12: %+v, blocker %+v", p, r.Blocker())
	}
}

// TestCheckIOURing judges kernel.io_uring_disabled's values.
func TestCheckIOURing(t *testing.T) {
	root := sosTree(t, iceCaptures)
	tests := []struct {
		give, group string
		status      Status
		says        string
	}{
		{"0\n", "-1\n", StatusHolds, "every process"},
		{"1\n", "-1\n", statusUnknown, "only CAP_SYS_ADMIN may create rings"},
		{"1\n", "1001\n", statusUnknown, "or members of group 1001"},
		{"2\n", "-1\n", StatusFails, "no process may create rings"},
		{"3\n", "-1\n", statusUnknown, "not 0, 1 or 2"},
	}
	for _, tt := range tests {
		writeFiles(t, root, map[string]string{fileIOURingOff: tt.give, fileIOURingGID: tt.group})
		p := prereq(t, check(t, root, Options{}), IDIOURing)
		if p.Status.Or(statusUnknown) != tt.status || !strings.Contains(p.Evidence, tt.says) {
			t.Errorf("io_uring_disabled %q: %s (%q), want %s saying %q", tt.give, p.Status, p.Evidence, tt.status, tt.says)
		}
	}
}

// TestCheckIOMMU judges the NIC's IOMMU group type for --send.
func TestCheckIOMMU(t *testing.T) {
	tests := []struct {
		typ    string
		status Status
		says   string
	}{
		{"identity", StatusHolds, "passthrough"},
		{"DMA", StatusFails, "strict"},
		{"DMA-FQ", StatusFails, "lazy"},
		{"unmanaged", statusUnknown, "not a default DMA domain"},
	}
	for _, tt := range tests {
		root := sosTree(t, iceCaptures)
		dev := "sys/devices/pci0000:60/0000:60:03.0/0000:63:00.0"
		writeFiles(t, root, map[string]string{"sys/kernel/iommu_groups/12/type": tt.typ + "\n"})
		if err := os.MkdirAll(filepath.Join(root, "sys/bus/pci/devices"), 0o755); err != nil {
			t.Fatal(err)
		}
		for link, target := range map[string]string{
			"sys/bus/pci/devices/0000:63:00.0": "../../../devices/pci0000:60/0000:60:03.0/0000:63:00.0",
			dev + "/iommu_group":               "../../../../kernel/iommu_groups/12",
		} {
			if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
				t.Fatal(err)
			}
		}
		r := check(t, root, Options{Send: true})
		p := prereq(t, r, IDIOMMU)
		if p.Status.Or(statusUnknown) != tt.status || !strings.Contains(p.Evidence, "group 12") || !strings.Contains(p.Evidence, tt.says) {
			t.Errorf("type %s: %+v, want %s saying %q", tt.typ, p, tt.status, tt.says)
		}
		if (p.Status.Or(statusUnknown) == StatusFails) != strings.Contains(p.Cost, "721 -> 1,130 MB/s at 4 KiB") {
			t.Errorf("type %s: cost %q", tt.typ, p.Cost)
		}
		if len(r.Prereqs) != 3 || r.Queue.Known() {
			t.Errorf("send: %d prerequisites, queue %v; want 3 and none", len(r.Prereqs), r.Queue)
		}
	}
	// Without iommu_groups in the capture: not captured.
	p := prereq(t, check(t, sosTree(t, iceCaptures), Options{Send: true}), IDIOMMU)
	if p.Status.Or(statusUnknown) != statusUnknown || !strings.Contains(p.Evidence, "not captured") {
		t.Errorf("no iommu_groups: %+v", p)
	}
}

// TestCheckErrors: bad options and an unknown NIC are errors, never a
// report.
func TestCheckErrors(t *testing.T) {
	root := sosTree(t, iceCaptures)
	for _, o := range []Options{{Queue: ptr(-1)}, {Port: ptr(0)}, {Port: ptr(65536)}, {Send: true, Queue: ptr(1)}} {
		fsys := hostFS(t, root)
		if _, err := Check(fsys.fs, fsys.h, "em1", o); err == nil {
			t.Errorf("Check(%+v): no error", o)
		}
	}
	fsys := hostFS(t, root)
	if _, err := Check(fsys.fs, fsys.h, "eth9", Options{}); err == nil || !strings.Contains(err.Error(), "eth9") {
		t.Errorf("Check(eth9): %v", err)
	}
}

// TestCheckBadKernelFiles: a release or io_uring file that does not parse
// leaves its prerequisite unknown, naming the file, never a guess.
func TestCheckBadKernelFiles(t *testing.T) {
	root := sosTree(t, iceCaptures)
	writeFiles(t, root, map[string]string{fileOSRelease: "linux\x1b[2J\n", fileIOURingOff: "off\n"})
	r := check(t, root, Options{})
	if p := prereq(t, r, IDKernel); p.Status.Or(statusUnknown) != statusUnknown || !strings.Contains(p.Evidence, "osrelease") || !strings.Contains(p.Evidence, "no MAJOR.MINOR") {
		t.Errorf("bad osrelease: %+v", p)
	}
	if p := prereq(t, r, IDIOURing); p.Status.Or(statusUnknown) != statusUnknown || !strings.Contains(p.Evidence, "io_uring_disabled") {
		t.Errorf("bad io_uring_disabled: %+v", p)
	}
}

// TestCheckXDP judges the NIC's IFLA_XDP in the host namespace's links a
// root records: none holds, a program fails with its id and mode, no
// recording or no such link is unknown.
func TestCheckXDP(t *testing.T) {
	q, port := 3, 9000
	tests := []struct {
		name   string
		xdp    *hosttest.NsXDP
		link   string
		status Status
		says   string
	}{
		{"none", &hosttest.NsXDP{}, "em1", StatusHolds, "no XDP program attached (IFLA_XDP: none)"},
		{"driver", &hosttest.NsXDP{Attached: 1, ProgID: 42}, "em1", StatusFails, "program id 42 attached in driver mode"},
		{"generic", &hosttest.NsXDP{Attached: 2, ProgID: 7}, "em1", StatusFails, "program id 7 attached in generic mode"},
		{"not sent", nil, "em1", statusUnknown, "sent no IFLA_XDP for em1"},
		{"other link", &hosttest.NsXDP{}, "em2", statusUnknown, "em1 is not among the links of net:[4026531840]"},
	}
	for _, tt := range tests {
		root := sosTree(t, iceCaptures)
		hosttest.WriteNsLinks(t, root, 4026531840, "net:[4026531840]", 0, []hosttest.NsLink{
			{Index: 1, Name: "lo", Flags: 0x9, XDP: &hosttest.NsXDP{}},
			{Index: 2, Name: tt.link, Flags: 0x1003, XDP: tt.xdp},
		})
		p := prereq(t, check(t, root, Options{Queue: &q, Port: &port, Steer: ready()}), IDXDP)
		if p.Status.Or(statusUnknown) != tt.status || !strings.Contains(p.Evidence, tt.says) {
			t.Errorf("%s: %s = %s (%q), want %s saying %q", tt.name, IDXDP, p.Status, p.Evidence, tt.status, tt.says)
		}
		if tt.status == StatusFails && p.Fix != "ip link set dev em1 xdp off" {
			t.Errorf("%s: fix %q", tt.name, p.Fix)
		}
	}
	root := sosTree(t, iceCaptures)
	p := prereq(t, check(t, root, Options{Queue: &q, Port: &port, Steer: ready()}), IDXDP)
	if p.Status.Or(statusUnknown) != statusUnknown || !strings.Contains(p.Evidence, "not captured") {
		t.Errorf("no recording: %+v", p)
	}
}

// TestCheckXDPSos judges the NIC's XDP from a sosreport's `ip -s -d
// link` (else `ip -d address`) when the root records no links: the real
// output of a namespace with a program on g0 (generic) and v0 (driver)
// (nslink/testdata/sos), with one of its links renamed em1.
func TestCheckXDPSos(t *testing.T) {
	q, port := 3, 9000
	const src = "sosreport sos_commands/networking/"
	tests := []struct {
		file, rename string
		status       Status
		says         string
	}{
		{"ip_-s_-d_link", "g0@g1", StatusFails, "program id 97 attached in generic mode (" + src + "ip_-s_-d_link)"},
		{"ip_-s_-d_link", "v0@v1", StatusFails, "program id 97 attached in driver mode (" + src + "ip_-s_-d_link)"},
		{"ip_-s_-d_link", "g1@g0", StatusHolds, "no XDP program attached (" + src + "ip_-s_-d_link: no xdp on em1)"},
		{"ip_-s_-d_link", "", statusUnknown, "em1 is not among the links of the " + src + "ip_-s_-d_link"},
		{"ip_-d_address", "v0@v1", StatusFails, "program id 97 attached in driver mode (" + src + "ip_-d_address)"},
		{"ip_-s_-d_link", "garbage", statusUnknown, `ip_-s_-d_link: line 1: "em1": no link index: not ip link output`},
	}
	for _, tt := range tests {
		b, err := os.ReadFile(hosttest.Path("internal", "host", "nslink", "testdata", "sos", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		switch tt.rename {
		case "":
		case "garbage":
			text = "em1\n"
		default:
			text = strings.Replace(text, " "+tt.rename+": ", " em1: ", 1)
		}
		root := sosTree(t, iceCaptures)
		writeFiles(t, root, map[string]string{"sos_commands/networking/" + tt.file: text})
		p := prereq(t, check(t, root, Options{Queue: &q, Port: &port, Steer: ready()}), IDXDP)
		if p.Status.Or(statusUnknown) != tt.status || !strings.Contains(p.Evidence, tt.says) {
			t.Errorf("%s with %s as em1: %s = %s (%q), want %s saying %q", tt.file, tt.rename, IDXDP, p.Status, p.Evidence, tt.status, tt.says)
		}
	}
}
