package hosttest_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest/hostgen"
)

func read(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

func TestRoot(t *testing.T) {
	for _, name := range hosttest.Names() {
		root := hosttest.Root(name)
		if !filepath.IsAbs(root) {
			t.Errorf("Root(%q) = %q, want an absolute path", name, root)
		}
		for _, p := range []string{"README", "modes", "proc/interrupts", "sys/devices/system/node/online"} {
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("Root(%q): %v", name, err)
			}
		}
	}
}

// TestTreesUpToDate regenerates every tree and compares it with the
// committed one, so the generator and testdata cannot drift apart.
func TestTreesUpToDate(t *testing.T) {
	for _, name := range hostgen.Names {
		t.Run(name, func(t *testing.T) {
			h, err := hostgen.ByName(name)
			if err != nil {
				t.Fatal(err)
			}
			tr := h.Render()
			tr.File("README", []byte(h.Readme))
			want := tr.Snapshot(hostgen.WriteOptions{ModesFile: true, KeepEmpty: true})
			got := snapshot(t, hosttest.Root(name))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("testdata/hosts/%s differs from the generator; run go run ./internal/hosttest/gen (-want +got):\n%s", name, diff)
			}
		})
	}
}

// snapshot maps every path under root to its content or "-> target".
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			m[rel] = "-> " + target
			return err
		case d.IsDir():
			return nil
		}
		b, err := os.ReadFile(p)
		m[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCopyKeepsSymlinksAndModes(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	const eth0 = "sys/class/net/eth0"
	target, err := os.Readlink(filepath.Join(root, eth0))
	if err != nil {
		t.Fatalf("Readlink(%s): %v", eth0, err)
	}
	if want := "../../devices/pci0000:97/0000:97:01.0/0000:98:00.0/net/eth0"; target != want {
		t.Errorf("Readlink(%s) = %q, want %q", eth0, target, want)
	}
	if got := read(t, root, eth0+"/device/numa_node"); got != "1" {
		t.Errorf("%s/device/numa_node = %q, want 1", eth0, got)
	}
	drv, err := filepath.EvalSymlinks(filepath.Join(root, eth0, "device/driver"))
	if err != nil || filepath.Base(drv) != "mlx5_core" {
		t.Errorf("EvalSymlinks(device/driver) = %q, %v, want .../mlx5_core", drv, err)
	}
	if _, err := os.Stat(filepath.Join(root, "modes")); !os.IsNotExist(err) {
		t.Errorf("copy holds the modes file (err %v)", err)
	}

	tests := []struct {
		give string
		want fs.FileMode
	}{
		{"proc/irq/284/smp_affinity", 0o644},
		{"proc/irq/284/smp_affinity_list", 0o644},
		{"proc/irq/284/effective_affinity", 0o444},
		{"proc/irq/284/node", 0o444},
		{"proc/irq/41/smp_affinity", 0o444}, // managed nvme0q1
		{"proc/irq/41/smp_affinity_list", 0o444},
		{"proc/irq/0/smp_affinity", 0o444}, // timer, IRQF_NOBALANCING
		{"proc/irq/default_smp_affinity", 0o644},
		{"proc/interrupts", 0o444},
		{"sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/net/eth0/queues/rx-0/rps_cpus", 0o644},
		{"sys/devices/system/cpu/cpu1/online", 0o644},
		{"sys/devices/system/cpu/cpu1/topology/core_id", 0o444},
	}
	for _, tt := range tests {
		fi, err := os.Stat(filepath.Join(root, tt.give))
		if err != nil {
			t.Error(err)
			continue
		}
		if got := fi.Mode().Perm(); got != tt.want {
			t.Errorf("mode of %s = %04o, want %04o", tt.give, got, tt.want)
		}
	}
	p := filepath.Join(root, "proc/irq/284/smp_affinity")
	if err := os.WriteFile(p, []byte("1\n"), 0); err != nil {
		t.Errorf("write %s: %v", p, err)
	}
	// The committed tree is untouched.
	if got := read(t, hosttest.Root("seed"), "proc/irq/284/smp_affinity"); got != hostgen.SeedMasks[0] {
		t.Errorf("committed smp_affinity changed to %q", got)
	}
}

func TestReadModes(t *testing.T) {
	tests := []struct {
		give    string
		want    map[string]fs.FileMode
		wantErr bool
	}{
		{give: "# c\n\nproc/irq/1/smp_affinity 0444\n", want: map[string]fs.FileMode{"proc/irq/1/smp_affinity": 0o444}},
		{give: "sys/bus/pci/drivers/x/PCIe PME 0644\n", want: map[string]fs.FileMode{"sys/bus/pci/drivers/x/PCIe PME": 0o644}},
		{give: "proc/irq/1/smp_affinity\n", wantErr: true},
		{give: "proc/irq/1/smp_affinity 0999\n", wantErr: true},
	}
	for _, tt := range tests {
		p := filepath.Join(t.TempDir(), "modes")
		if err := os.WriteFile(p, []byte(tt.give), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := hosttest.ReadModes(p)
		if (err != nil) != tt.wantErr {
			t.Errorf("ReadModes(%q) error = %v, want error %v", tt.give, err, tt.wantErr)
			continue
		}
		if !tt.wantErr {
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ReadModes(%q) (-want +got):\n%s", tt.give, diff)
			}
		}
	}
}

func TestSeed(t *testing.T) {
	root := hosttest.Root("seed")
	for i, m := range hostgen.SeedMasks {
		d := "proc/irq/" + strconv.Itoa(284+i) + "/"
		if got := read(t, root, d+"smp_affinity"); got != m {
			t.Errorf("%ssmp_affinity = %q, want %q", d, got, m)
		}
		if got, want := read(t, root, d+"effective_affinity"), m; got != want {
			t.Errorf("%seffective_affinity = %q, want %q", d, got, want)
		}
		if _, err := os.Stat(filepath.Join(root, d, "mlx5_comp"+strconv.Itoa(i)+"@pci:0000:98:00.0")); err != nil {
			t.Errorf("action folder: %v", err)
		}
	}
	for irq, want := range map[int]string{284: "50", 285: "17", 286: "53", 290: "53"} {
		if got := read(t, root, "proc/irq/"+strconv.Itoa(irq)+"/effective_affinity_list"); got != want {
			t.Errorf("IRQ %d effective_affinity_list = %q, want %q", irq, got, want)
		}
	}
	files := map[string]string{
		"sys/devices/system/node/node0/cpulist":                      "0-15,32-47",
		"sys/devices/system/node/node1/cpulist":                      "16-31,48-63",
		"sys/devices/system/node/node1/distance":                     "21 10",
		"sys/class/net/eth0/device/local_cpulist":                    "16-31,48-63",
		"sys/class/net/eth0/queues/rx-3/rps_cpus":                    "00000000,00000000",
		"sys/class/net/eth0/queues/tx-0/xps_cpus":                    hostgen.SeedMasks[0],
		"sys/devices/system/cpu/cpu48/topology/thread_siblings_list": "16,48",
		"sys/devices/system/cpu/nohz_full":                           "(null)",
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor":       "performance",
	}
	for p, want := range files {
		if got := read(t, root, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if got := read(t, root, "sys/devices/system/node/node1/meminfo"); !strings.HasPrefix(got, "Node 1 MemTotal:       131899412 kB\n") {
		t.Errorf("node1/meminfo starts %q", got[:40])
	}
	row := interruptRow(t, root, 284)
	if want := "  IR-PCI-MSIX-0000:98:00.0    1-edge      mlx5_comp0@pci:0000:98:00.0"; !strings.HasSuffix(row, want) {
		t.Errorf("IRQ 284 row ends %q, want %q", row[len(row)-len(want):], want)
	}
}

func interruptRow(t *testing.T, root string, irq int) string {
	t.Helper()
	for _, l := range strings.Split(read(t, root, "proc/interrupts"), "\n") {
		k, _, _ := strings.Cut(l, ":")
		if strings.TrimSpace(k) == strconv.Itoa(irq) {
			return l
		}
	}
	t.Fatalf("IRQ %d not in /proc/interrupts", irq)
	return ""
}

func TestOffline2Node(t *testing.T) {
	root := hosttest.Root("offline-2node")
	header := strings.Fields(strings.SplitN(read(t, root, "proc/interrupts"), "\n", 2)[0])
	if want := "CPU0 CPU2 CPU3 CPU4 CPU6 CPU7 CPU8 CPU10 CPU11 CPU12 CPU13 CPU14 CPU15"; strings.Join(header, " ") != want {
		t.Errorf("interrupts header = %q, want %q", strings.Join(header, " "), want)
	}
	if got := read(t, root, "sys/devices/system/cpu/offline"); got != "1,5,9" {
		t.Errorf("cpu/offline = %q, want 1,5,9", got)
	}
	for _, c := range []string{"1", "5", "9"} {
		if _, err := os.Stat(filepath.Join(root, "sys/devices/system/cpu/cpu"+c+"/topology")); !os.IsNotExist(err) {
			t.Errorf("cpu%s/topology exists (err %v)", c, err)
		}
		if got := read(t, root, "sys/devices/system/cpu/cpu"+c+"/online"); got != "0" {
			t.Errorf("cpu%s/online = %q", c, got)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "sys/devices/system/cpu/cpu0/online")); !os.IsNotExist(err) {
		t.Errorf("x86 cpu0/online exists (err %v)", err)
	}
	if got := read(t, root, "sys/devices/system/cpu/cpu13/topology/thread_siblings_list"); got != "13" {
		t.Errorf("cpu13 thread_siblings_list = %q, want 13", got)
	}
	if got := read(t, root, "sys/class/net/ens2f0/device/numa_node"); got != "-1" {
		t.Errorf("ens2f0 numa_node = %q, want -1", got)
	}
	if got := strings.Count(read(t, root, "proc/net/softnet_stat"), "\n") + 1; got != 13 {
		t.Errorf("softnet_stat has %d lines, want 13", got)
	}
	if got := len(strings.Fields(strings.SplitN(read(t, root, "proc/softirqs"), "\n", 2)[0])); got != 16 {
		t.Errorf("softirqs header has %d CPUs, want 16", got)
	}
}

func TestARM64(t *testing.T) {
	root := hosttest.Root("arm64")
	for _, want := range []string{
		" 11:",
		"     GICv3  30 Level     arch_timer\n",
		"   ITS-MSI 81921 Edge      eth0-Tx-Rx-0\n",
		"\nIPI0:",
		"       Rescheduling interrupts\n",
		"\nErr:          0\n",
	} {
		if !strings.Contains(read(t, root, "proc/interrupts")+"\n", want) {
			t.Errorf("arm64 /proc/interrupts lacks %q", want)
		}
	}
	if got := read(t, root, "sys/devices/system/cpu/cpu0/online"); got != "1" {
		t.Errorf("arm64 cpu0/online = %q, want 1", got)
	}
	if got := read(t, root, "sys/devices/system/cpu/cpu5/topology/cluster_cpus_list"); got != "4-5" {
		t.Errorf("cpu5 cluster_cpus_list = %q, want 4-5", got)
	}
}

// TestTreesConsistent checks what every tree, synthetic ones included,
// must hold for readers to agree with each other.
func TestTreesConsistent(t *testing.T) {
	for _, name := range hostgen.Names {
		t.Run(name, func(t *testing.T) { checkTree(t, hosttest.Root(name)) })
	}
	t.Run("synthetic", func(t *testing.T) {
		checkTree(t, hosttest.Synthetic(t, hosttest.SyntheticSpec{CPUs: 24, Nodes: 3, SMT: true, NICs: 2, QueuesPerNIC: 5, ExtraIRQs: 40}))
	})
}

func checkTree(t *testing.T, root string) {
	online, err := cpuset.ParseList(read(t, root, "sys/devices/system/cpu/online"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(read(t, root, "proc/interrupts"), "\n")
	var cols []int
	for _, f := range strings.Fields(lines[0]) {
		n, err := strconv.Atoi(strings.TrimPrefix(f, "CPU"))
		if err != nil {
			t.Fatalf("header field %q", f)
		}
		cols = append(cols, n)
	}
	if !cpuset.New(cols...).Equal(online) {
		t.Errorf("interrupts header CPUs %v, online %s", cols, online)
	}
	var irqs []int
	for _, l := range lines[1:] {
		k, rest, _ := strings.Cut(l, ":")
		n, err := strconv.Atoi(strings.TrimSpace(k))
		if err != nil {
			continue // named row
		}
		irqs = append(irqs, n)
		f := strings.Fields(rest)
		if len(f) < len(cols)+2 {
			t.Errorf("IRQ %d row has %d fields", n, len(f))
			continue
		}
		d := filepath.Join("proc/irq", strconv.Itoa(n))
		eff, err := cpuset.ParseList(read(t, root, d+"/effective_affinity_list"))
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cols {
			if f[i] != "0" && !eff.Contains(c) {
				t.Errorf("IRQ %d counts on CPU %d outside effective %s", n, c, eff)
			}
		}
		for _, pair := range [][2]string{{"smp_affinity", "smp_affinity_list"}, {"effective_affinity", "effective_affinity_list"}} {
			m, err := cpuset.ParseMask(read(t, root, d+"/"+pair[0]))
			if err != nil {
				t.Fatal(err)
			}
			l, err := cpuset.ParseList(read(t, root, d+"/"+pair[1]))
			if err != nil {
				t.Fatal(err)
			}
			if !m.Equal(l) {
				t.Errorf("IRQ %d %s %s != %s %s", n, pair[0], m, pair[1], l)
			}
		}
	}
	if !slices.IsSorted(irqs) || len(irqs) == 0 {
		t.Errorf("IRQ rows not sorted or missing: %v", irqs)
	}
	// Every symlink resolves inside the tree.
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("dangling symlink: %v", err)
			}
		}
		if d.IsDir() && strings.HasSuffix(filepath.Dir(p), "msi_irqs") {
			t.Errorf("%s is a folder", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every msi_irqs entry names an IRQ of /proc/interrupts.
	msi, _ := filepath.Glob(filepath.Join(root, "sys/devices/*/*/msi_irqs/*"))
	deeper, _ := filepath.Glob(filepath.Join(root, "sys/devices/*/*/*/msi_irqs/*"))
	for _, p := range append(msi, deeper...) {
		n, _ := strconv.Atoi(filepath.Base(p))
		if _, ok := slices.BinarySearch(irqs, n); !ok {
			t.Errorf("%s names an IRQ not in /proc/interrupts", p)
		}
		if b, _ := os.ReadFile(p); !bytes.Equal(b, []byte("msix\n")) {
			t.Errorf("%s = %q", p, b)
		}
	}
}

func TestSynthetic(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 21,000 files; slow where the temp folder is on disk (try TMPDIR=/dev/shm)")
	}
	spec := hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 64, ExtraIRQs: 480}
	start := time.Now()
	root := hosttest.Synthetic(t, spec)
	t.Logf("512 CPUs, %d IRQs written in %v", spec.IRQs(), time.Since(start))
	if spec.IRQs() != 1000 {
		t.Fatalf("spec has %d IRQs, want 1000", spec.IRQs())
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "proc/irq/[0-9]*"))
	if len(dirs) != 1000 {
		t.Errorf("%d /proc/irq/N folders, want 1000", len(dirs))
	}
	lines := strings.Split(read(t, root, "proc/interrupts"), "\n")
	if got := len(strings.Fields(lines[0])); got != 512 {
		t.Errorf("interrupts header has %d CPUs, want 512", got)
	}
	rows := 0
	for _, l := range lines[1:] {
		k, _, _ := strings.Cut(l, ":")
		if _, err := strconv.Atoi(strings.TrimSpace(k)); err == nil {
			rows++
		}
	}
	if rows != 1000 {
		t.Errorf("%d IRQ rows, want 1000", rows)
	}
	nets, _ := os.ReadDir(filepath.Join(root, "sys/class/net"))
	if len(nets) != 9 { // lo + 8
		t.Errorf("%d interfaces, want 9", len(nets))
	}
	for _, c := range []struct{ p, want string }{
		{"sys/devices/system/node/node0/cpulist", "0-63,256-319"},
		{"sys/devices/system/node/node3/cpulist", "192-255,448-511"},
		{"sys/devices/system/cpu/cpu300/topology/thread_siblings_list", "44,300"},
		{"sys/class/net/eth1/device/numa_node", "1"},
		{"sys/class/net/eth1/queues/tx-0/xps_cpus", cpuset.New(64).Mask(512)},
	} {
		if got := read(t, root, c.p); got != c.want {
			t.Errorf("%s = %q, want %q", c.p, got, c.want)
		}
	}
	if got := strings.Count(read(t, root, "proc/net/softnet_stat"), "\n") + 1; got != 512 {
		t.Errorf("softnet_stat has %d lines, want 512", got)
	}
	msi, _ := os.ReadDir(filepath.Join(root, "sys/class/net/eth0/device/msi_irqs"))
	if len(msi) != 65 {
		t.Errorf("eth0 has %d msi_irqs, want 65", len(msi))
	}
	// Managed NVMe queues are read-only, NIC queues writable.
	managed := 0
	for _, d := range dirs {
		fi, err := os.Stat(filepath.Join(d, "smp_affinity"))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() == 0o444 {
			managed++
		}
	}
	if want := 480 - 480/32; managed != want {
		t.Errorf("%d read-only smp_affinity, want %d", managed, want)
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	spec := hosttest.SyntheticSpec{CPUs: 16, Nodes: 2, NICs: 2, QueuesPerNIC: 4, ExtraIRQs: 10}
	a, b := snapshot(t, hosttest.Synthetic(t, spec)), snapshot(t, hosttest.Synthetic(t, spec))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two synthetic trees differ (-first +second):\n%s", diff)
	}
}

func BenchmarkSynthetic512x1000(b *testing.B) {
	spec := hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 64, ExtraIRQs: 480}
	for b.Loop() {
		hosttest.Synthetic(b, spec)
	}
}

// TestShared: the shared copy has the real modes and stays one folder
// across calls; a read-only folder stops a stray write by a non-root test.
func TestShared(t *testing.T) {
	a, b := hosttest.Shared(t, "seed"), hosttest.Shared(t, "seed")
	if a != b {
		t.Errorf("Shared twice: %s and %s", a, b)
	}
	fi, err := os.Stat(filepath.Join(a, "proc/irq/0/smp_affinity"))
	if err != nil || fi.Mode().Perm() != 0o444 {
		t.Errorf("proc/irq/0/smp_affinity: %v %v, want 0444 as the modes file says", fi.Mode(), err)
	}
	fi, err = os.Stat(filepath.Join(a, "proc/irq/284/smp_affinity"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("proc/irq/284/smp_affinity: %v %v, want 0644", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(a, "proc")); err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("proc/: %v %v, want a read-only folder", fi.Mode(), err)
	}
	copied := hosttest.Copy(t, "seed")
	if x, y := mustDigest(t, a), mustDigest(t, copied); x != y {
		t.Errorf("Shared and Copy differ: %s vs %s", x, y)
	}
}

func mustDigest(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.IsDir() {
			names = append(names, rel+" "+fi.Mode().String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(names, "\n")
}
