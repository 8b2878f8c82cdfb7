package hostmap

import (
	"bytes"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// loadMapHost reads a host tree and its NIC IRQs.
func loadMapHost(t testing.TB, root string) (*topology.Host, *irq.Table) {
	t.Helper()
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := irq.Load(h, irq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h, tb
}

func mustCPU(t *testing.T, m *Map, id int) CPU {
	t.Helper()
	c, ok := m.CPU(id)
	if !ok {
		t.Fatalf("CPU %d not in the map", id)
	}
	return c
}

func TestBuildSeed(t *testing.T) {
	h, tb := loadMapHost(t, hosttest.Root("seed"))
	m := audited(t, h, tb, nil, Options{})

	// Two packages, one node each; eth0 drawn under node 1.
	var got [][]int
	for _, p := range m.Packages {
		var ids []int
		for _, n := range p.Nodes {
			ids = append(ids, n.ID.Or(-1))
		}
		got = append(got, append(p.Packages, ids...))
	}
	if diff := cmp.Diff([][]int{{0, 0}, {1, 1}}, got); diff != "" {
		t.Errorf("packages and nodes (-want +got):\n%s", diff)
	}
	if nics := m.Packages[1].Nodes[0].NICs; !cmp.Equal(nics, []string{"eth0"}) {
		t.Errorf("node 1 NICs = %v, want [eth0]", nics)
	}
	if len(m.UnknownNICs) != 0 {
		t.Errorf("UnknownNICs = %v, want none", m.UnknownNICs)
	}
	// Cores of node 1: 16 of them, siblings n and n+32 stacked.
	n1 := m.Packages[1].Nodes[0]
	if len(n1.Cores) != 16 {
		t.Fatalf("node 1 has %d cores, want 16", len(n1.Cores))
	}
	if c := n1.Cores[5]; c.ID != 21 || len(c.Threads) != 2 || c.Threads[0].ID != 21 || c.Threads[1].ID != 53 {
		t.Errorf("node 1 core 5 = %+v, want core 21 with threads 21, 53", c)
	}

	// IRQs 286 (queue 2) and 290 (queue 6) share CPU 53: the one conflict.
	want := []Conflict{{Kind: ConflictKindSharedCPU, CPU: 53, Node: unknown.Of(1), NIC: "eth0", IRQs: []int{286, 290}, Queues: []int{2, 6}}}
	if diff := cmp.Diff(want, m.Conflicts, exportValues); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
	if len(m.Remote) != 0 {
		t.Errorf("remote = %+v, want none: every queue IRQ is on node 1", m.Remote)
	}
	nic, _ := m.NIC("eth0")
	if nic.Key != "q" || nic.Node.Or(-1) != 1 || len(nic.QueueIRQs) != 16 || !cmp.Equal(nic.OtherIRQs, []int{283}) ||
		nic.QueueCPUs.List() != "17,20-21,23-24,26,30,50-51,53,55,58,60-61,63" || !cmp.Equal(nic.SharedIRQs, []int{286, 290}) {
		t.Errorf("eth0 = %+v", nic)
	}
	labels := map[int]string{50: "q0", 17: "q1", 53: "2q!", 63: "q15", 16: ".", 0: "."}
	for id, want := range labels {
		if got := mustCPU(t, m, id).Label; got != want {
			t.Errorf("CPU %d label = %q, want %q", id, got, want)
		}
	}
}

func TestBuildRemote(t *testing.T) {
	tests := []struct {
		give       string
		wantRemote map[int]int // IRQ -> the one remote CPU
		wantLabels map[int]string
	}{
		{give: "nps2", wantRemote: map[int]int{107: 3, 108: 20},
			wantLabels: map[int]string{3: "q6*", 20: "q7*", 8: "q0", 14: "."}},
		{give: "arm64", wantRemote: map[int]int{62: 4, 63: 5, 64: 6, 65: 7},
			wantLabels: map[int]string{0: "q0", 4: "q4*", 7: "q7*"}},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			h, tb := loadMapHost(t, hosttest.Root(tt.give))
			m := audited(t, h, tb, nil, Options{})
			got := map[int]int{}
			for _, r := range m.Remote {
				if r.CPUs.Len() != 1 {
					t.Errorf("IRQ %d remote on %s, want one CPU", r.IRQ, r.CPUs)
				}
				c, _ := r.CPUs.Min()
				got[r.IRQ] = c
				if r.NICNode != h.NICs[0].Node || len(r.Nodes) != 1 || r.Nodes[0] != h.NodeOf(c).Or(-1) {
					t.Errorf("remote %+v: want NIC node %v and CPU node %v", r, h.NICs[0].Node, h.NodeOf(c))
				}
			}
			if diff := cmp.Diff(tt.wantRemote, got); diff != "" {
				t.Errorf("remote IRQs (-want +got):\n%s", diff)
			}
			for id, want := range tt.wantLabels {
				if got := mustCPU(t, m, id).Label; got != want {
					t.Errorf("CPU %d label = %q, want %q", id, got, want)
				}
			}
			if len(m.Conflicts) != 0 {
				t.Errorf("conflicts = %+v, want none", m.Conflicts)
			}
		})
	}
}

func TestBuildNPS2Packages(t *testing.T) {
	h, tb := loadMapHost(t, hosttest.Root("nps2"))
	m := audited(t, h, tb, nil, Options{})
	var got []string
	for _, p := range m.Packages {
		var ids []int
		for _, n := range p.Nodes {
			ids = append(ids, n.ID.Or(-1))
		}
		got = append(got, packageTitle(p.Packages)+": "+units.Ints(ids, ","))
	}
	if diff := cmp.Diff([]string{"package 0: 0,1", "package 1: 2,3"}, got); diff != "" {
		t.Errorf("packages (-want +got):\n%s", diff)
	}
	if nics := m.Packages[0].Nodes[1].NICs; !cmp.Equal(nics, []string{"enp65s0f0"}) {
		t.Errorf("node 1 NICs = %v, want [enp65s0f0]", nics)
	}
}

// The offline host: offline CPUs are cores of their own marked x,
// isolated CPUs are marked i, and four NICs get letters.
func TestBuildOfflineIsolated(t *testing.T) {
	h, tb := loadMapHost(t, hosttest.Root("offline-2node"))
	m := audited(t, h, tb, nil, Options{})
	keys := map[string]string{}
	for _, n := range m.NICs {
		keys[n.Name] = n.Key
	}
	if diff := cmp.Diff(map[string]string{"ens1f0": "a", "ens2f0": "b", "eth1": "c", "eth10": "d"}, keys); diff != "" {
		t.Errorf("NIC keys (-want +got):\n%s", diff)
	}
	for _, id := range []int{1, 5, 9} {
		c := mustCPU(t, m, id)
		if c.Online || !strings.HasPrefix(c.Label, "x") {
			t.Errorf("CPU %d = %+v, want offline with label x...", id, c)
		}
	}
	for _, id := range []int{10, 11} {
		if c := mustCPU(t, m, id); !c.Isolated || !strings.HasSuffix(c.Label, "i") {
			t.Errorf("CPU %d label %q, want isolated (…i)", id, c.Label)
		}
	}
	// Node 0's cores: (0,4) (1) (2,6) (3,7) (5), ordered by lowest CPU.
	var cores []string
	for _, c := range m.Packages[0].Nodes[0].Cores {
		var ids []int
		for _, th := range c.Threads {
			ids = append(ids, th.ID)
		}
		cores = append(cores, units.Ints(ids, "+"))
	}
	if diff := cmp.Diff([]string{"0+4", "1", "2+6", "3+7", "5"}, cores); diff != "" {
		t.Errorf("node 0 cores (-want +got):\n%s", diff)
	}
	// ens2f0 has numa_node -1; its local_cpulist puts it on node 1.
	if nic, _ := m.NIC("ens2f0"); nic.Node.Or(-1) != 1 || !unknown.Is(nic.Locality, topology.LocalitySourceLocalCPUList) {
		t.Errorf("ens2f0 node %v by %q, want 1 by local_cpulist", nic.Node, nic.Locality.String())
	}
}

func TestBuildProcesses(t *testing.T) {
	h, tb := loadMapHost(t, hosttest.Root("seed"))
	procs := []*proc.Process{{
		PID: 4242, Comm: "iperf3", Allowed: mapSet(t, "16-19"),
		Threads: []proc.Thread{
			{TID: 4242, Allowed: mapSet(t, "16-19"), LastCPU: unknown.Of(16)},
			{TID: 4243, Allowed: mapSet(t, "16-19"), LastCPU: unknown.Of(17)},
		},
	}}
	uses := []nicuse.Use{{PID: 4242, Comm: "iperf3", NICs: []string{"eth0"}, Attribution: unknown.Of(nicuse.AttributionSockets),
		How: []string{"tcp 192.0.2.2:5201 -> 198.51.100.9:40712: routed through eth0 (0.0.0.0/0 via 192.0.2.1)"}}}
	m := audited(t, h, tb, procs, Options{Uses: uses})
	labels := map[int]string{16: "P", 17: "q1P!", 18: "p", 19: "p", 20: "q9", 53: "2q!"}
	for id, want := range labels {
		if got := mustCPU(t, m, id).Label; got != want {
			t.Errorf("CPU %d label = %q, want %q", id, got, want)
		}
	}
	want := Conflict{Kind: ConflictKindThread, CPU: 17, Node: unknown.Of(1), IRQs: []int{285}, PIDs: []int{4242}, LastRan: []int{4243}}
	var got []Conflict
	for _, c := range m.Conflicts {
		if c.Kind == ConflictKindThread {
			got = append(got, c)
		}
	}
	if diff := cmp.Diff([]Conflict{want}, got, exportValues); diff != "" {
		t.Errorf("thread conflicts (-want +got):\n%s", diff)
	}
	if p := m.Processes[0]; p.Threads != 2 || p.Allowed.List() != "16-19" || p.LastCPUs.List() != "16-17" {
		t.Errorf("process = %+v", p)
	}
	// A second process, using eth0, that may run on CPU 17 but ran
	// elsewhere gets a conflict of its own, without last-ran threads.
	procs = append(procs, &proc.Process{PID: 5000, Comm: "netserver", Allowed: mapSet(t, "17"),
		Threads: []proc.Thread{{TID: 5000, Allowed: mapSet(t, "17"), LastCPU: unknown.Of(2)}}})
	netserverEth0 := nicuse.Use{PID: 5000, Comm: "netserver", NICs: []string{"eth0"}, Attribution: unknown.Of(nicuse.AttributionSockets), How: []string{}}
	m = audited(t, h, tb, procs, Options{Uses: append(slices.Clone(uses), netserverEth0)})
	got = nil
	for _, c := range m.Conflicts {
		if c.Kind == ConflictKindThread {
			got = append(got, c)
		}
	}
	want2 := []Conflict{want, {Kind: ConflictKindThread, CPU: 17, Node: unknown.Of(1), IRQs: []int{285}, PIDs: []int{5000}, LastRan: []int{}}}
	if diff := cmp.Diff(want2, got, cmpopts.EquateEmpty(), exportValues); diff != "" {
		t.Errorf("thread conflicts of two processes (-want +got):\n%s", diff)
	}
	if got := mustCPU(t, m, 2).Label; got != "P" {
		t.Errorf("CPU 2 label = %q, want P", got)
	}
	// The conflicts are the audit's proc-irq-overlap findings: a process
	// is in conflict only with the queue IRQs of the NICs the audit judges
	// it against (audit.Processes). netserver's sockets through eth0 make
	// one; staying on the host, or going through another NIC, leave CPU
	// 17's eth0 IRQ alone; when its sockets cannot tell (any NIC,
	// unknown) it is judged against the --nic NICs, and without them
	// against none, where the map used to draw a conflict the audit
	// never reported.
	for _, tt := range []struct {
		use      nicuse.Use
		nics     []string
		conflict bool
	}{
		{netserverEth0, nil, true},
		{nicuse.Use{PID: 5000, Attribution: unknown.Of(nicuse.AttributionLoopback)}, nil, false},
		{nicuse.Use{PID: 5000, Attribution: unknown.Of(nicuse.AttributionSockets), NICs: []string{"eth1"}}, nil, false},
		{nicuse.Use{PID: 5000, Attribution: unknown.Of(nicuse.AttributionAny)}, nil, false},
		{nicuse.Use{PID: 5000, Attribution: unknown.NotAs[nicuse.Attribution](unknown.KindNotReported, "its sockets say nothing of a NIC")}, nil, false},
		{nicuse.Use{PID: 5000, Attribution: unknown.Of(nicuse.AttributionAny)}, []string{"eth0"}, true},
		{nicuse.Use{PID: 5000, Attribution: unknown.NotAs[nicuse.Attribution](unknown.KindNotReported, "its sockets say nothing of a NIC")}, []string{"eth0"}, true},
	} {
		m = audited(t, h, tb, procs, Options{NICs: tt.nics, Uses: append(slices.Clone(uses), tt.use)})
		got := false
		for _, c := range m.Conflicts {
			got = got || (c.Kind == ConflictKindThread && slices.Contains(c.PIDs, 5000))
		}
		if got != tt.conflict {
			t.Errorf("netserver %s %v, --nic %v: conflict %v, want %v", tt.use.Attribution, tt.use.NICs, tt.nics, got, tt.conflict)
		}
	}
	m = audited(t, h, tb, procs, Options{Uses: append(slices.Clone(uses), netserverEth0)})
	var buf bytes.Buffer
	if err := WriteText(&buf, m, Style{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"! iperf3 (pid 4242) last ran on queue CPU 17\n",
		"! netserver (pid 5000) may run on queue CPU 17\n",
		"P iperf3 (pid 4242): 2 threads, may run on 16-19, last ran on 16-17; uses eth0:\n",
		"P netserver (pid 5000): 1 thread, may run on 17, last ran on 2; uses eth0\n",
		"P = a watched thread last ran here",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("map lacks %q:\n%s", want, buf.String())
		}
	}
}

// An IRQ without effective affinity is drawn where it was requested, and
// the cell says so; a managed-less multi-CPU request is not a conflict.
func TestBuildRequested(t *testing.T) {
	h, tb := loadMapHost(t, hosttest.Root("seed"))
	for n, aff := range map[int]string{284: "48", 285: "48-49"} {
		q, _ := tb.Get(n)
		q.Effective = unknown.Value[cpuset.Set]{}
		q.Affinity = unknown.Of(mapSet(t, aff))
	}
	// IRQ 286 reports effective 53 outside its new request 52: the move
	// to 52 is pending.
	q, _ := tb.Get(286)
	q.Affinity = unknown.Of(mapSet(t, "52"))
	m := audited(t, h, tb, nil, Options{})
	for id, want := range map[int]string{48: "2q?", 49: "q1?", 50: ".", 17: ".", 52: "q2?", 53: "q6"} {
		if got := mustCPU(t, m, id).Label; got != want {
			t.Errorf("CPU %d label = %q, want %q", id, got, want)
		}
	}
	for _, c := range m.Conflicts {
		if c.CPU == 48 || c.CPU == 49 || c.CPU == 53 {
			t.Errorf("conflict %+v: IRQ 285 may land on 48 or 49, alone on neither; 286 is moving off 53", c)
		}
	}
	c52 := mustCPU(t, m, 52)
	if len(c52.IRQs) != 1 || c52.IRQs[0].Landing != irq.LandPending || !c52.IRQs[0].Requested {
		t.Errorf("CPU 52 IRQs = %+v, want IRQ 286 pending", c52.IRQs)
	}
}

func TestBuildNICFilter(t *testing.T) {
	h, tb := loadMapHost(t, hosttest.Root("offline-2node"))
	tb2, err := irq.Load(h, irq.Options{NICs: []string{"eth1"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = tb
	m := audited(t, h, tb2, nil, Options{NICs: []string{"eth1"}})
	if len(m.NICs) != 1 || m.NICs[0].Name != "eth1" || m.NICs[0].Key != "q" {
		t.Fatalf("NICs = %+v, want eth1 alone with key q", m.NICs)
	}
	if got := mustCPU(t, m, 0).Label; got != "q0" {
		t.Errorf("CPU 0 label = %q, want q0 (eth1-TxRx-0)", got)
	}
	if got := mustCPU(t, m, 3).Label; got != "." {
		t.Errorf("CPU 3 label = %q, want . (eth10's IRQ is not drawn)", got)
	}
}

// A process or NIC name cannot drive the terminal: control characters
// are printed as '?', in the terminal picture; the SVG escapes them.
func TestWriteTextControlCharacters(t *testing.T) {
	h, tb := loadMapHost(t, hosttest.Root("seed"))
	procs := []*proc.Process{{PID: 9, Comm: "evil\x1b[2J\a", Allowed: mapSet(t, "0"),
		Threads: []proc.Thread{{TID: 9, Allowed: mapSet(t, "0"), LastCPU: unknown.Of(0)}}}}
	m := audited(t, h, tb, procs, Options{})
	for _, color := range []bool{false, true} {
		var buf bytes.Buffer
		if err := WriteText(&buf, m, Style{Color: color}); err != nil {
			t.Fatal(err)
		}
		out := ansiRE.ReplaceAllString(buf.String(), "")
		if strings.ContainsAny(out, "\x1b\a") {
			t.Errorf("color %v: control characters reach the terminal:\n%q", color, out)
		}
		if !strings.Contains(out, "P evil?[2J? (pid 9)") {
			t.Errorf("color %v: process line not sanitised:\n%s", color, out)
		}
	}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, m); err != nil {
		t.Fatal(err)
	}
	parseSVG(t, buf.Bytes())
}

func TestCellLabel(t *testing.T) {
	keys := map[string]string{"eth0": "a", "eth1": "b"}
	q := func(nic string, queue int) IRQ { return IRQ{NIC: nic, Queue: queue} }
	tests := []struct {
		name string
		give CPU
		want string
	}{
		{"idle", CPU{Online: true}, "."},
		{"one queue", CPU{Online: true, IRQs: []IRQ{q("eth0", 3)}}, "a3"},
		{"two of one NIC", CPU{Online: true, IRQs: []IRQ{q("eth0", 3), q("eth0", 5)}, Conflict: true}, "2a!"},
		{"two NICs", CPU{Online: true, IRQs: []IRQ{q("eth0", 3), q("eth1", 1)}}, "2+"},
		{"remote requested", CPU{Online: true, IRQs: []IRQ{q("eth1", 12)}, Remote: true, Requested: true}, "b12*?"},
		{"thread last ran", CPU{Online: true, LastRan: []int{7}, MayRun: 1}, "P"},
		{"thread may run", CPU{Online: true, MayRun: 2}, "p"},
		{"isolated", CPU{Online: true, Isolated: true}, "i"},
		{"offline", CPU{}, "x"},
		{"offline isolated", CPU{Isolated: true}, "xi"},
		{"everything", CPU{Online: true, IRQs: []IRQ{q("eth0", 1)}, LastRan: []int{1}, Conflict: true, Remote: true, Isolated: true}, "a1P!*i"},
	}
	for _, tt := range tests {
		if got := cellLabel(&tt.give, keys); got != tt.want {
			t.Errorf("%s: cellLabel(%+v) = %q, want %q", tt.name, tt.give, got, tt.want)
		}
	}
}

func TestWrapText(t *testing.T) {
	tests := []struct {
		give  string
		width int
		want  []string
	}{
		{"short", 10, []string{"short"}},
		{"one two three", 7, []string{"one two", "three"}},
		{"  on CPUs 1,2,3,4,5", 12, []string{"  on CPUs 1,", "  2,3,4,5"}},
		{"CPUs 17,20-21,23-24,26", 12, []string{"CPUs 17,", "20-21,23-24,", "26"}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"", 5, []string{""}},
	}
	for _, tt := range tests {
		if got := wrapText(tt.give, tt.width); !cmp.Equal(got, tt.want) {
			t.Errorf("wrapText(%q, %d) = %q, want %q", tt.give, tt.width, got, tt.want)
		}
	}
}

var ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Every line fits the width for hosts up to 64 CPUs per node, the
// boxes close, and colour only adds escape codes around the same text.
func TestWriteTextWidth(t *testing.T) {
	root := hosttest.Synthetic(t, hosttest.SyntheticSpec{CPUs: 128, Nodes: 2, SMT: true, NICs: 2, QueuesPerNIC: 64})
	big, bigT := loadMapHost(t, root)
	flat := hosttest.Synthetic(t, hosttest.SyntheticSpec{CPUs: 128, Nodes: 2, NICs: 1, QueuesPerNIC: 64})
	flatH, flatT := loadMapHost(t, flat)
	seed, seedT := loadMapHost(t, hosttest.Root("seed"))
	hosts := []struct {
		name string
		m    *Map
	}{
		{"seed", audited(t, seed, seedT, nil, Options{})},
		{"64 CPUs per node, SMT", audited(t, big, bigT, nil, Options{})},
		{"64 CPUs per node, no SMT", audited(t, flatH, flatT, nil, Options{})},
	}
	for _, hc := range hosts {
		for _, width := range []int{0, 40, 60, 100, 132} {
			var plainOut, colorOut bytes.Buffer
			if err := WriteText(&plainOut, hc.m, Style{Width: width}); err != nil {
				t.Fatal(err)
			}
			if err := WriteText(&colorOut, hc.m, Style{Width: width, Color: true}); err != nil {
				t.Fatal(err)
			}
			limit := width
			if limit == 0 {
				limit = 80
			}
			for i, l := range strings.Split(strings.TrimSuffix(plainOut.String(), "\n"), "\n") {
				if n := utf8.RuneCountInString(l); n > limit {
					t.Errorf("%s width %d: line %d is %d columns: %q", hc.name, width, i+1, n, l)
				}
				if strings.HasSuffix(l, " ") {
					t.Errorf("%s width %d: line %d has trailing spaces: %q", hc.name, width, i+1, l)
				}
				if strings.HasPrefix(l, "|") && !strings.HasSuffix(l, "|") {
					t.Errorf("%s width %d: line %d does not close its box: %q", hc.name, width, i+1, l)
				}
			}
			if strings.Contains(plainOut.String(), "\x1b") {
				t.Errorf("%s width %d: escape codes without colour", hc.name, width)
			}
			if !strings.Contains(colorOut.String(), "\x1b[") {
				t.Errorf("%s width %d: no escape codes with colour", hc.name, width)
			}
			if got := ansiRE.ReplaceAllString(colorOut.String(), ""); got != plainOut.String() {
				t.Errorf("%s width %d: colour changes the text:\n%s", hc.name, width, cmp.Diff(plainOut.String(), got))
			}
		}
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, hosts[0].m, Style{Width: 39}); err == nil {
		t.Error("WriteText width 39: no error")
	}
}

// The seed picture reads at once: eth0 in node 1's box, CPU 53 with two
// queues and a conflict marker, and the conflict said in words.
func TestWriteTextSeed(t *testing.T) {
	h, tb := loadMapHost(t, hosttest.Root("seed"))
	var buf bytes.Buffer
	if err := WriteText(&buf, audited(t, h, tb, nil, Options{}), Style{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	node1 := out[strings.Index(out, "+- node 1"):]
	node1 = node1[:strings.Index(node1, "\n| +---")]
	for _, want := range []string{"NIC eth0 [q]: mlx5_core 0000:98:00.0", "53 2q!", "50 q0"} {
		if !strings.Contains(node1, want) {
			t.Errorf("node 1 box lacks %q:\n%s", want, node1)
		}
	}
	if !strings.Contains(out, "! CPU 53 (node 1): eth0 queues 2 and 6 (IRQs 286, 290) share it\n") {
		t.Errorf("no conflict line for CPU 53:\n%s", out)
	}
}

func BenchmarkBuildMap(b *testing.B) {
	root := hosttest.Synthetic(b, mapBenchHost)
	h, tb := loadMapHost(b, root)
	b.ResetTimer()
	for b.Loop() {
		Build(h, tb, nil, Options{})
	}
}

func BenchmarkWriteMap(b *testing.B) {
	root := hosttest.Synthetic(b, mapBenchHost)
	h, tb := loadMapHost(b, root)
	m := audited(b, h, tb, nil, Options{})
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := WriteText(&buf, m, Style{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteMapSVG(b *testing.B) {
	root := hosttest.Synthetic(b, mapBenchHost)
	h, tb := loadMapHost(b, root)
	m := audited(b, h, tb, nil, Options{})
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := WriteSVG(&buf, m); err != nil {
			b.Fatal(err)
		}
	}
}

// mapBenchHost is the scale the issues name: 512 CPUs on 4 nodes, 1,000
// IRQs (8 NICs of 63 queues).
var mapBenchHost = hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488}

func mapSet(t *testing.T, s string) cpuset.Set {
	t.Helper()
	set, err := cpuset.ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestNICLinesInferred: an inferred NIC whose PCI function the tree
// lacks says so beside its address.
func TestNICLinesInferred(t *testing.T) {
	n := NIC{Name: "0000:19:00.0", Key: "a", PCI: "0000:19:00.0", Node: unknown.NotAs[int](unknown.KindNotReported, "numa_node is -1"), Locality: unknown.NotAs[topology.LocalitySource](unknown.KindNotReported, "numa_node is -1"),
		Inferred: true, PCIAbsent: true, QueueIRQs: []int{268}}
	got := nicLines(n)[0]
	want := "NIC 0000:19:00.0 [a]: 0000:19:00.0 (PCI function not in the tree; known from IRQ names, queues unknown), node unknown"
	if got != want {
		t.Errorf("nicLines = %q, want %q", got, want)
	}
}

// TestAssignKeys: one NIC is "q"; up to 52 get a letter each; more get
// keys of one length that are all distinct.
func TestAssignKeys(t *testing.T) {
	tests := []struct {
		nics              int
		first, at52, last string
	}{
		{1, "q", "", "q"},
		{2, "a", "", "b"},
		{52, "a", "", "Z"},
		{53, "aa", "ba", "ba"},
		{70, "aa", "ba", "br"},
		{52*52 + 1, "aaa", "aba", "baa"},
	}
	for _, tt := range tests {
		nics := make([]NIC, tt.nics+1) // and one without queue IRQs
		for i := range tt.nics {
			nics[i].QueueIRQs = []int{i}
		}
		assignKeys(nics)
		seen := map[string]bool{}
		for i, n := range nics[:tt.nics] {
			if seen[n.Key] || len(n.Key) != len(tt.first) {
				t.Errorf("%d NICs: NIC %d key %q repeats or differs in length from %q", tt.nics, i, n.Key, tt.first)
			}
			seen[n.Key] = true
		}
		if nics[0].Key != tt.first || nics[tt.nics-1].Key != tt.last || (tt.at52 != "" && nics[52].Key != tt.at52) {
			t.Errorf("%d NICs: keys %q ... %q, want %q ... %q (NIC 52: %q)", tt.nics, nics[0].Key, nics[tt.nics-1].Key, tt.first, tt.last, tt.at52)
		}
		if k := nics[tt.nics].Key; k != "" {
			t.Errorf("%d NICs: a NIC without queue IRQs got key %q", tt.nics, k)
		}
	}
}

// exportValues has cmp compare unknown.Values by what they hold, reason
// included.
var exportValues = cmp.Exporter(func(t reflect.Type) bool { return strings.HasPrefix(t.String(), "unknown.Value[") })
