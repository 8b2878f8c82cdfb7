package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/irqbalance"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// readings is everything irqnuma's readers say of a root.
type readings struct {
	Host       *topology.Host
	IRQs       *irq.Table
	Irqbalance *irqbalance.Settings
	Cmdline    *topology.Cmdline
	IOMMU      *topology.IOMMU
	Groups     map[string]topology.IOMMUGroup
	Governors  map[int]string
}

func read(t *testing.T, root string) readings {
	t.Helper()
	r, err := readAll(root)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readAll runs every reader on root.
func readAll(root string) (readings, error) {
	fsys, err := kfile.Open(root)
	if err != nil {
		return readings{}, err
	}
	defer fsys.Close()
	h, err := topology.Read(fsys)
	if err != nil {
		return readings{}, fmt.Errorf("topology.Read: %w", err)
	}
	tab, err := irq.Load(h, irq.Options{All: true})
	if err != nil {
		return readings{}, fmt.Errorf("irq.Load: %w", err)
	}
	r := readings{Host: h, IRQs: tab, Groups: map[string]topology.IOMMUGroup{}, Governors: map[int]string{}}
	if r.Irqbalance, err = irqbalance.Read(fsys); err != nil {
		return r, fmt.Errorf("ReadIrqbalance: %w", err)
	}
	if r.Cmdline, err = topology.ReadCmdline(fsys); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return r, fmt.Errorf("ReadCmdline: %w", err)
	}
	if r.IOMMU, err = topology.ReadIOMMU(fsys); err != nil {
		return r, fmt.Errorf("ReadIOMMU: %w", err)
	}
	for _, n := range h.NICs {
		if n.PCI != "" {
			if r.Groups[n.PCI], err = h.DeviceIOMMUGroup(n.PCI); err != nil {
				return r, fmt.Errorf("DeviceIOMMUGroup(%s): %w", n.PCI, err)
			}
		}
	}
	for _, c := range h.CPUs {
		if r.Governors[c.ID], err = h.Governor(c.ID); err != nil {
			return r, fmt.Errorf("Governor(%d): %w", c.ID, err)
		}
	}
	return r, nil
}

var cmpReadings = append(cmpShapes,
	cmp.AllowUnexported(unknown.Value[int]{}, unknown.Value[bool]{}, unknown.Value[cpuset.Set]{}))

// cmpShapes is cmpReadings but for the Values.
var cmpShapes = []cmp.Option{
	cmpopts.IgnoreUnexported(topology.Host{}),
	// irq.Info keeps the modes it read; Managed says what they mean.
	cmpopts.IgnoreUnexported(irq.Info{}),
	cmpopts.IgnoreFields(topology.Host{}, "Root"),
	cmpopts.EquateEmpty(),
	// An unknown.Value compares by what it holds, its reason included.
	cmp.Exporter(func(t reflect.Type) bool { return strings.HasPrefix(t.String(), "unknown.Value[") }),
}

// ignoreWhy leaves out why a value is unknown: the live root says the
// kernel has no such file where its snapshot says it was not captured.
var ignoreWhy = cmp.FilterPath(func(p cmp.Path) bool {
	sf, ok := p.Last().(cmp.StructField)
	return ok && sf.Name() == "why" && strings.HasPrefix(p.Index(-2).Type().String(), "unknown.Value[")
}, cmp.Ignore())

// diffReadings is cmp.Diff of two readings under cmpReadings, with a
// reflect.DeepEqual of their exported parts first: on the big captures
// cmp's reflection costs seconds under the race detector, and readings
// equal to DeepEqual are equal to cmp (which ignores more).
func diffReadings(want, got readings) string {
	if reflect.DeepEqual(exported(want), exported(got)) {
		return ""
	}
	return cmp.Diff(want, got, cmpReadings...)
}

// exported is r with its Host reduced to the fields cmpReadings compares:
// the exported ones but Root.
func exported(r readings) readings {
	if r.Host == nil {
		return r
	}
	from := reflect.ValueOf(r.Host).Elem()
	to := reflect.New(from.Type())
	for i := range from.NumField() {
		if f := from.Type().Field(i); f.IsExported() && f.Name != "Root" {
			to.Elem().Field(i).Set(from.Field(i))
		}
	}
	r.Host = to.Interface().(*topology.Host)
	return r
}

// snap captures root and unpacks it, returning the unpacked root.
func snap(t *testing.T, root string, opts Options) (string, Result) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "host.tar.gz")
	res, err := Create(file, nil, hosttest.Open(t, root), opts)
	if err != nil {
		t.Fatalf("Create(%s): %v", root, err)
	}
	if !IsArchive(file) {
		t.Fatalf("IsArchive(%s) = false", file)
	}
	dir, cleanup, err := Open(context.Background(), file, Limits{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := cleanup(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("cleanup left %s: %v", dir, err)
		}
	})
	return dir, res
}

// TestSnapshotReadsSame: every reader says the same of a host tree and
// of its snapshot.
func TestSnapshotReadsSame(t *testing.T) {
	for _, name := range hosttest.Names() {
		t.Run(name, func(t *testing.T) {
			root := hosttest.Shared(t, name)
			dir, res := snap(t, root, Options{})
			if len(res.Notes) > 0 {
				t.Errorf("notes: %q", res.Notes)
			}
			if res.Files == 0 || res.Links == 0 {
				t.Errorf("result %+v: want files and links", res)
			}
			want, got := read(t, root), read(t, dir)
			if diff := diffReadings(want, got); diff != "" {
				t.Errorf("snapshot reads differently (-tree +snapshot):\n%s", diff)
			}
			// Top level: proc/ and sys/ only for these trees.
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var top []string
			for _, e := range ents {
				top = append(top, e.Name())
			}
			if diff := cmp.Diff([]string{"proc", "sys"}, top); diff != "" {
				t.Errorf("top level (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSnapshotKeepsFormats checks what the comparison cannot see: links
// stay links with their targets, and file modes (managed IRQs) survive.
func TestSnapshotKeepsFormats(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	// Make IRQ 290's affinity read-only, as the kernel does for a
	// managed IRQ.
	for _, f := range []string{"smp_affinity", "smp_affinity_list"} {
		if err := os.Chmod(filepath.Join(root, "proc/irq/290", f), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	dir, _ := snap(t, root, Options{})
	tests := []struct {
		give string
		want string // link target
	}{
		{"sys/class/net/eth0", "../../devices/pci0000:97/0000:97:01.0/0000:98:00.0/net/eth0"},
		{"sys/bus/pci/devices/0000:98:00.0", "../../../devices/pci0000:97/0000:97:01.0/0000:98:00.0"},
		{"sys/devices/system/node/node1/cpu17", "../../cpu/cpu17"},
	}
	for _, tt := range tests {
		got, err := os.Readlink(filepath.Join(dir, tt.give))
		if err != nil || got != tt.want {
			t.Errorf("Readlink(%s) = %q, %v, want %q", tt.give, got, err, tt.want)
		}
	}
	for _, tt := range []struct {
		give string
		want fs.FileMode
	}{
		{"proc/irq/290/smp_affinity_list", 0o444},
		{"proc/irq/291/smp_affinity_list", 0o644},
		{"proc/interrupts", 0o444},
	} {
		st, err := os.Lstat(filepath.Join(dir, tt.give))
		if err != nil || st.Mode().Perm() != tt.want {
			t.Errorf("mode of %s = %v, %v, want %v", tt.give, st.Mode().Perm(), err, tt.want)
		}
	}
	h, _ := topology.Read(hosttest.Open(t, dir))
	tab, err := irq.Load(h, irq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q, ok := tab.Get(290)
	if !ok || !unknown.Is(q.Managed, true) {
		t.Errorf("IRQ 290 in the snapshot: managed = %v, want true", ok && unknown.Is(q.Managed, true))
	}
	// Files irqnuma never reads stay out.
	for _, give := range []string{"proc/irq/290/spurious", "sys/devices/system/cpu/cpu0/topology/core_id"} {
		if _, err := os.Lstat(filepath.Join(dir, give)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s captured, want left out (err %v)", give, err)
		}
	}
}

// TestSnapshotAttribution: a process captured with --pid is attributed
// to the same NICs, the same way, from the snapshot as from the tree: its
// socket fd links (and no other fd), its namespace link, its tables, and
// the lower_* link of a bond it uses.
func TestSnapshotAttribution(t *testing.T) {
	root := hosttest.Copy(t, "offline-2node")
	bond := filepath.Join(root, "sys/devices/virtual/net/bond0")
	if err := os.MkdirAll(bond, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{
		{"../../../pci0000:5d/0000:5d:00.0/0000:5e:00.0/net/ens2f0", filepath.Join(bond, "lower_ens2f0")},
		{"../../devices/virtual/net/bond0", filepath.Join(root, "sys/class/net/bond0")},
		{"net:[4026531840]", filepath.Join(root, "proc/4242/ns/net")},
		{"net:[4026531840]", filepath.Join(root, "proc/1/ns/net")},
	} {
		if err := os.MkdirAll(filepath.Dir(l[1]), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "proc/4242/comm"), []byte("iperf3\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	hosttest.WriteSockets(t, root, 4242, []hosttest.Socket{
		{Proto: "tcp", Local: "0.0.0.0:5201", Inode: 1},
		{Proto: "tcp", Local: "10.1.0.2:5201", Remote: "10.9.9.9:40000", Inode: 2},
		{Proto: "udp", Local: "10.2.0.2:9000", Inode: 3},
		{Proto: "tcp", Local: "[2001:db8::2]:22", Inode: 4},
	})
	if err := os.Symlink("pipe:[99]", filepath.Join(root, "proc/4242/fd/10")); err != nil {
		t.Fatal(err)
	}
	hosttest.WriteRoutes(t, filepath.Join(root, "proc/4242/net"), []hosttest.Route{
		{Iface: "ens1f0", Dst: "0.0.0.0/0", Gateway: "10.1.0.1"},
		{Iface: "ens1f0", Dst: "10.1.0.0/24"},
		{Iface: "bond0", Dst: "10.2.0.0/24"},
	}, []string{"eth1 2001:db8::2/64"})
	attribute := func(root string) nicuse.Use {
		h, err := topology.Read(hosttest.Open(t, root))
		if err != nil {
			t.Fatal(err)
		}
		n, err := proc.ReadNet(hosttest.Open(t, root), 4242)
		if err != nil {
			t.Fatal(err)
		}
		return nicuse.Of(h, &proc.Process{PID: 4242, Comm: "iperf3", Net: n})
	}
	want := attribute(root)
	if !slices.Equal(want.NICs, []string{"ens1f0", "ens2f0", "eth1"}) || len(want.How) != 4 {
		t.Fatalf("tree: %+v", want)
	}
	dir, res := snap(t, root, Options{Processes: proc.Selection{PIDs: []int{4242}}})
	if len(res.Notes) > 0 {
		t.Errorf("notes: %q", res.Notes)
	}
	if diff := cmp.Diff(want, attribute(dir), cmp.Exporter(func(t reflect.Type) bool { return strings.HasPrefix(t.String(), "unknown.Value[") })); diff != "" {
		t.Errorf("attribution (-tree +snapshot):\n%s", diff)
	}
	if _, err := os.Lstat(filepath.Join(dir, "proc/4242/fd/10")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a pipe fd was captured (err %v); want only sockets", err)
	}
	// Without --pid, none of it.
	bare, _ := snap(t, root, Options{})
	if _, err := os.Lstat(filepath.Join(bare, "proc/4242/net")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("proc/4242/net captured without --pid (err %v)", err)
	}
}

// TestSnapshotLive snapshots the running machine and compares what the
// readers say of it, counts aside (interrupts keep arriving).
func TestSnapshotLive(t *testing.T) {
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("live snapshot needs root to read every file")
	}
	if _, err := os.Stat("/sys/devices/system/cpu/online"); err != nil {
		t.Skip("no live /sys")
	}
	dir, res := snap(t, "/", Options{})
	t.Logf("live snapshot: %d files, %d links, %d folders, %d bytes; notes %q", res.Files, res.Links, res.Dirs, res.Bytes, res.Notes)
	want, got := read(t, "/"), read(t, dir)
	// Counts keep arriving, and a node's MemTotal moves with a memory
	// balloon or hot-plug between the two reads; a running irqbalance
	// answers over its socket on the live root only: compare the rest.
	opts := append([]cmp.Option{
		cmpopts.IgnoreFields(topology.Node{}, "MemoryBytes"),
		cmpopts.IgnoreFields(irqbalance.Settings{}, "Runtime"),
		cmpopts.IgnoreFields(irq.IRQ{}, "Counts"),
		cmpopts.IgnoreFields(interrupts.Row{}, "Counts"),
		ignoreWhy,
	}, cmpReadings...)
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("snapshot reads differently (-live +snapshot):\n%s", diff)
	}
	b, err := os.ReadFile(filepath.Join(dir, "proc/interrupts"))
	if err != nil || !bytes.HasPrefix(bytes.TrimLeft(b, " "), []byte("CPU0")) {
		t.Errorf("snapshot proc/interrupts: %d bytes, %v; want the whole file (stat says 0)", len(b), err)
	}
}

func TestWriteErrors(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		give string
		want string
	}{
		{filepath.Join(empty, "nope"), "no such file"},
		{empty, "holds neither proc/ nor sys/"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		_, err := Write(&buf, hosttest.Open(t, tt.give), Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Write(%s) error = %v, want %q", tt.give, err, tt.want)
		}
	}
	// A file over the bound stops the capture and says which.
	root := hosttest.Copy(t, "vm-virtio")
	var buf bytes.Buffer
	_, err := Write(&buf, hosttest.Open(t, root), Options{MaxFileSize: 64})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "/proc/interrupts") {
		t.Errorf("Write with a 64-byte bound: error = %v, want ErrTooLarge naming /proc/interrupts", err)
	}
	_, err = Write(&buf, hosttest.Open(t, root), Options{MaxTotalSize: 4096})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("Write with a 4 KiB total: error = %v, want ErrTooLarge", err)
	}
}

func TestCaptureLinkOut(t *testing.T) {
	root := hosttest.Copy(t, "vm-virtio")
	// A link that leaves the root is left out with a note, never archived.
	out := filepath.Join(root, "sys/class/net/evil")
	if err := os.Symlink("../../../../etc", out); err != nil {
		t.Fatal(err)
	}
	dir, res := snap(t, root, Options{})
	if _, err := os.Lstat(filepath.Join(dir, "sys/class/net/evil")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("link out of the root archived (err %v)", err)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "/sys/class/net/evil") || !strings.Contains(res.Notes[0], "leaves the root") {
		t.Errorf("notes = %q, want one naming /sys/class/net/evil", res.Notes)
	}
}

// TestSnapshotRealHosts: machines captured for real (sosreports, hwloc
// dumps, must-gathers) read the same from their snapshot, or fail the
// same way.
func TestSnapshotRealHosts(t *testing.T) {
	for _, c := range realhosts.MustCaptures(t) {
		t.Run(c.Name, func(t *testing.T) {
			root := realhosts.Root(t, c)
			want, wantErr := readAll(root)
			dir, _ := snap(t, root, Options{})
			got, gotErr := readAll(dir)
			if wantErr != nil || gotErr != nil {
				if wantErr == nil || gotErr == nil {
					t.Fatalf("capture reads with error %v, snapshot with %v", wantErr, gotErr)
				}
				t.Skipf("capture unreadable, and so is its snapshot: %v", wantErr)
			}
			if diff := diffReadings(want, got); diff != "" {
				t.Errorf("snapshot reads differently (-capture +snapshot):\n%s", diff)
			}
		})
	}
}

func BenchmarkSnapshot(b *testing.B) {
	root := hosttest.Synthetic(b, hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 4, QueuesPerNIC: 64, ExtraIRQs: 736})
	var archive bytes.Buffer
	if _, err := Write(&archive, hosttest.Open(b, root), Options{}); err != nil {
		b.Fatal(err)
	}
	b.Run("write", func(b *testing.B) {
		b.ReportAllocs()
		fsys := hosttest.Open(b, root)
		for b.Loop() {
			archive.Reset()
			if _, err := Write(&archive, fsys, Options{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(archive.Len()), "archive-bytes")
	})
	b.Run("unpack", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			dir := b.TempDir()
			if err := unpack(bytes.NewReader(archive.Bytes()), dir, Limits{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSnapshotOddNames: names the kernel allows but tar formats differ
// on (long paths, spaces, bytes that are not UTF-8) survive the round trip.
func TestSnapshotOddNames(t *testing.T) {
	root := hosttest.Copy(t, "vm-virtio")
	odd := "eth\xff"
	if err := os.Symlink("../../devices/virtual/net/"+odd, filepath.Join(root, "sys/class/net", odd)); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(root, "sys/devices/virtual/net", odd, strings.Repeat("d", 120))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, res := snap(t, root, Options{})
	if len(res.Notes) > 0 {
		t.Errorf("notes: %q", res.Notes)
	}
	got, err := os.Readlink(filepath.Join(dir, "sys/class/net", odd))
	if err != nil || got != "../../devices/virtual/net/"+odd {
		t.Errorf("link %q = %q, %v", odd, got, err)
	}
	if diff := cmp.Diff(read(t, root), read(t, dir), cmpReadings...); diff != "" {
		t.Errorf("snapshot reads differently (-tree +snapshot):\n%s", diff)
	}
}

// TestSnapshotKeepsRelease: osrelease is captured, so a snapshot of a
// 6.12 kernel whose IRQs are all settable still says they are not
// managed, as the host itself does.
func TestSnapshotKeepsRelease(t *testing.T) {
	root := hosttest.Copy(t, "vm-virtio")
	for _, pat := range []string{"proc/irq/*/smp_affinity", "proc/irq/*/smp_affinity_list"} {
		paths, _ := filepath.Glob(filepath.Join(root, pat))
		for _, p := range paths {
			if err := os.Chmod(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	rel := filepath.Join(root, "proc/sys/kernel/osrelease")
	if err := os.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rel, []byte("6.12.117+deb12-amd64\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	dir, _ := snap(t, root, Options{})
	if b, err := os.ReadFile(filepath.Join(dir, "proc/sys/kernel/osrelease")); err != nil || string(b) != "6.12.117+deb12-amd64\n" {
		t.Errorf("snapshot osrelease = %q, %v", b, err)
	}
	h, _ := topology.Read(hosttest.Open(t, dir))
	tab, err := irq.Load(h, irq.Options{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range tab.IRQs {
		if q.Affinity.Known() && !unknown.Is(q.Managed, false) {
			t.Errorf("IRQ %d in the snapshot: managed %s (%s), want known, not managed", q.IRQ, q.Managed, q.Managed.Why())
		}
	}
}

// TestSnapshotPCIIDs: of the host's pci.ids only its own PCI functions'
// vendor and device lines are captured, and the snapshot names the NIC
// as the host does.
func TestSnapshotPCIIDs(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	ids := "# pci.ids\n1234  Other Vendor\n\t0001  Other device\n15b3  Mellanox Technologies\n\t1017  MT27800 Family [ConnectX-5]\n" +
		"\t101d  MT2892 Family [ConnectX-6 Dx]\n\t\t15b3 0016  a subsystem\n8086  Intel Corporation\n\t1572  Ethernet Controller X710\nC 02  Network controller\n"
	if err := os.MkdirAll(filepath.Join(root, "usr/share/misc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/share/misc/pci.ids"), []byte(ids), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := snap(t, root, Options{})
	b, err := os.ReadFile(filepath.Join(got, "usr/share/misc/pci.ids"))
	if err != nil {
		t.Fatal(err)
	}
	want := "# The entries of /usr/share/misc/pci.ids for this host's PCI functions (irqnuma snapshot).\n" +
		"15b3  Mellanox Technologies\n\t101d  MT2892 Family [ConnectX-6 Dx]\n"
	if string(b) != want {
		t.Errorf("captured pci.ids:\n%s\nwant:\n%s", b, want)
	}
	name := func(r string) string {
		h, err := topology.Read(hosttest.Open(t, r))
		if err != nil {
			t.Fatal(err)
		}
		h.NamePCIDevices()
		n, _ := h.NICByName("eth0")
		return n.Vendor + " / " + n.Product
	}
	if a, b := name(root), name(got); a != b || b != "Mellanox Technologies / MT2892 Family [ConnectX-6 Dx]" {
		t.Errorf("eth0 named %q on the host, %q from the snapshot", a, b)
	}
}

// TestSnapshotNAPIThreads: the napi/IF-ID kthreads of threaded NAPI are
// captured as a named process is, so the audit of the snapshot reads
// their affinity and last CPU as on the host; other kthreads are not.
func TestSnapshotNAPIThreads(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	for pid, comm := range map[int]string{812: "napi/eth0-8193", 813: "ksoftirqd/3"} {
		d := filepath.Join(root, "proc", strconv.Itoa(pid))
		for _, f := range [][2]string{
			{"comm", comm + "\n"},
			{"stat", fmt.Sprintf("%d (%s) S 2 0 0 0 -1 2129984 0 0 0 0 0 5 0 0 20 0 1 0 42 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 17 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, comm)},
			{"status", fmt.Sprintf("Name:\t%s\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nCpus_allowed:\t00000000,00020000\nCpus_allowed_list:\t17\nMems_allowed_list:\t0-1\n", comm, pid, pid)},
		} {
			for _, dir := range []string{d, filepath.Join(d, "task", strconv.Itoa(pid))} {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0o444); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	want, err := proc.Read(hosttest.Open(t, root), 812)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := snap(t, root, Options{})
	got, err := proc.Read(hosttest.Open(t, dir), 812)
	if err != nil {
		t.Fatalf("the snapshot lacks the napi kthread: %v", err)
	}
	if got.Allowed.List() != "17" || len(got.Threads) != 1 || !unknown.Is(got.Threads[0].LastCPU, 17) {
		t.Errorf("kthread from the snapshot: allowed %s, threads %+v; want 17, last CPU 17", got.Allowed, got.Threads)
	}
	if diff := cmp.Diff(want.Allowed.List(), got.Allowed.List()); diff != "" {
		t.Errorf("allowed (-tree +snapshot):\n%s", diff)
	}
	if _, err := os.Lstat(filepath.Join(dir, "proc/813/status")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("another kthread's status was captured (err %v)", err)
	}
}
