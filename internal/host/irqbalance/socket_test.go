package irqbalance

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/fakeirqbalance"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// realReply reads a reply captured from Debian's irqbalance 1.9.2
// (testdata/setup/README).
func realReply(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "setup", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var cmpRuntime = cmp.Options{cmpopts.EquateEmpty(), cmp.Comparer(func(a, b cpuset.Set) bool { return a.Equal(b) })}

func TestParseSetup(t *testing.T) {
	irqs := func(lo, hi int, skip ...int) []int {
		var out []int
		for n := lo; n <= hi; n++ {
			if !slices.Contains(skip, n) {
				out = append(out, n)
			}
		}
		return out
	}
	tests := []struct {
		name string
		give string
		want Runtime
	}{
		{name: "cmdline-bans.reply", want: Runtime{Sleep: 1, BannedIRQs: irqs(24, 43, 27), BannedCPUs: cpuset.New(1)}},
		{name: "socket-bans.reply", want: Runtime{Sleep: 1, BannedIRQs: []int{37, 38, 39}, BannedCPUs: cpuset.New(1)}},
		{name: "none.reply", want: Runtime{Sleep: 1, BannedCPUs: cpuset.New(1)}},
		{name: "irq0-cpus0.reply", want: Runtime{Sleep: 1, BannedIRQs: []int{0, 1, 4, 8, 9, 37, 38, 39}, BannedCPUs: cpuset.New(0)}},
		// From sock_handle's format strings: the list in the order added,
		// and a mask past CPU 31 with its leading zero words left out.
		{name: "unordered, wide mask", give: "SLEEP 10 IRQ 300 LOAD 0 DIFF 0 CLASS 0 IRQ 5 LOAD 18446744073709551615 DIFF 7 CLASS 2 BANNED 00000001,00000000,80000000",
			want: Runtime{Sleep: 10, BannedIRQs: []int{5, 300}, BannedCPUs: cpuset.New(31, 64)}},
		{name: "nothing banned", give: "SLEEP 10 BANNED 00000000", want: Runtime{Sleep: 10}},
	}
	for _, tt := range tests {
		give := []byte(tt.give)
		if tt.give == "" {
			give = realReply(t, tt.name)
		}
		got, err := ParseSetup(give)
		if err != nil {
			t.Errorf("%s: ParseSetup: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmpRuntime); diff != "" {
			t.Errorf("%s: ParseSetup (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestParseSetupBad(t *testing.T) {
	tests := []struct{ give, want string }{
		{"", "does not start with SLEEP"},
		{"SLEEP 1 BANNED", "does not start with SLEEP"},
		{"SLEEP 0 BANNED 00000000", "not an interval"},
		{"SLEEP 01 BANNED 00000000", "not an interval"},
		{"SLEEP 1  BANNED 00000000", "want BANNED"},
		{"SLEEP 1 BANNED 00000000 ", "want BANNED"},
		{"SLEEP 1 BANNED 00000000\n", "not 32-bit words"},
		{"SLEEP 1 IRQ x LOAD 0 DIFF 0 CLASS 0 BANNED 00000000", `IRQ "x"`},
		{"SLEEP 1 IRQ -1 LOAD 0 DIFF 0 CLASS 0 BANNED 00000000", `IRQ "-1"`},
		{"SLEEP 1 IRQ 3 LOAD 0 DIFF 0 BANNED 00000000", "not IRQ n LOAD"},
		{"SLEEP 1 IRQ 3 LOAD -1 DIFF 0 CLASS 0 BANNED 00000000", "LOAD"},
		{"SLEEP 1 IRQ 3 LOAD 0 DIFF 0 CLASS 0 IRQ 3 LOAD 0 DIFF 0 CLASS 0 BANNED 00000000", "listed twice"},
		{"SLEEP 1 BANNED 2", "8 lower-case hex digits"},
		{"SLEEP 1 BANNED 0000000A", "8 lower-case hex digits"},
		{"SLEEP 1 BANNED 00000000,", "8 lower-case hex digits"},
		{"SLEEP 1 BANNED " + strings.Repeat("ffffffff,", 56) + "fffffff", "buffer cut it"},
		{"SLEEP 1 IRQ 3 LOAD 0 DIFF 0 CLASS 0", "not IRQ n LOAD"},
	}
	for _, tt := range tests {
		_, err := ParseSetup([]byte(tt.give))
		if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSetup(%q) = %v, want ErrSetup saying %q", tt.give, err, tt.want)
		}
	}
}

// formatSetup prints rt as sock_handle does.
func formatSetup(rt Runtime) string {
	var b strings.Builder
	fmt.Fprintf(&b, "SLEEP %d ", rt.Sleep)
	for _, n := range rt.BannedIRQs {
		fmt.Fprintf(&b, "IRQ %d LOAD 0 DIFF 0 CLASS 0 ", n)
	}
	return b.String() + "BANNED " + fakeirqbalance.Mask(rt.BannedCPUs)
}

// FuzzParseSetup: no input panics, and what decodes prints back as the
// daemon prints it and decodes the same again.
func FuzzParseSetup(f *testing.F) {
	for _, n := range []string{"cmdline-bans.reply", "socket-bans.reply", "none.reply", "irq0-cpus0.reply"} {
		f.Add(realReply(f, n))
	}
	f.Add([]byte("SLEEP 10 IRQ 300 LOAD 0 DIFF 0 CLASS 0 IRQ 5 LOAD 9 DIFF 7 CLASS 2 BANNED 00000001,00000000,80000000"))
	f.Add([]byte("SLEEP 1 IRQ 3 LOAD 0 DIFF 0 CLASS 0 IRQ 3 LOAD 0 DIFF 0 CLASS 0 BANNED 00000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rt, err := ParseSetup(b)
		if err != nil {
			if !errors.Is(err, ErrSetup) {
				t.Fatalf("ParseSetup(%q): %v, not ErrSetup", b, err)
			}
			return
		}
		if rt.BannedCPUs.IsEmpty() {
			rt.BannedCPUs = cpuset.Set{}
		}
		again, err := ParseSetup([]byte(formatSetup(rt)))
		if err != nil {
			t.Fatalf("ParseSetup(%q) = %+v, which prints as %q, which does not decode: %v", b, rt, formatSetup(rt), err)
		}
		if diff := cmp.Diff(rt, again, cmpRuntime); diff != "" {
			t.Fatalf("ParseSetup(%q) round trip (-first +again):\n%s", b, diff)
		}
	})
}

func TestBanCommand(t *testing.T) {
	tests := []struct {
		give []int
		want string
	}{
		{nil, "settings ban irqs NONE"},
		{[]int{39, 0, 37, 38, 37}, "settings ban irqs 0 37 38 39"},
	}
	for _, tt := range tests {
		if got := BanCommand(tt.give); got != tt.want {
			t.Errorf("BanCommand(%v) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// TestSocket talks to a daemon serving the real protocol: setup, a ban
// that replaces the list (IRQ 0 first, as the daemon's loop needs), NONE,
// a refusal, and a command past what irqbalance 1.9.2 reads whole.
func TestSocket(t *testing.T) {
	d := fakeirqbalance.Start(t, "", []int{40, 7}, cpuset.New(1))
	fsys := hosttest.Open(t, t.TempDir())
	s := Socket{Addr: d.Addr()}
	rt, err := s.Setup(fsys, 812)
	if err != nil {
		t.Fatal(err)
	}
	want := Runtime{PID: 812, Socket: d.Addr(), Sleep: 10, BannedIRQs: []int{7, 40}, BannedCPUs: cpuset.New(1)}
	if diff := cmp.Diff(want, rt, cmpRuntime); diff != "" {
		t.Errorf("Setup (-want +got):\n%s", diff)
	}
	if _, err := s.BanIRQs(fsys, 812, []int{40, 7, 0, 285}); err != nil {
		t.Fatal(err)
	}
	if got := d.Banned(); !slices.Equal(got, []int{0, 7, 40, 285}) {
		t.Errorf("after the ban the daemon bans %v, want 0 7 40 285", got)
	}
	if _, err := s.BanIRQs(fsys, 812, nil); err != nil {
		t.Fatal(err)
	}
	if rt, err := s.Setup(fsys, 812); err != nil || len(rt.BannedIRQs) != 0 {
		t.Errorf("after NONE: %+v, %v; want no IRQ banned", rt, err)
	}
	want2 := []string{"setup", "settings ban irqs 0 7 40 285", "settings ban irqs NONE", "setup"}
	if got := d.Commands(); !slices.Equal(got, want2) {
		t.Errorf("commands %q, want %q", got, want2)
	}
	long := make([]int, 100)
	for i := range long {
		long[i] = 1000 + i
	}
	if _, err := s.BanIRQs(fsys, 812, long); err == nil || !strings.Contains(err.Error(), "v1.9.4") {
		t.Errorf("a 600-byte ban: %v, want it refused before it is sent", err)
	}
	d.Refuse(true)
	if _, err := s.Setup(fsys, 812); !errors.Is(err, ErrRefused) {
		t.Errorf("Setup of a daemon that refuses: %v, want ErrRefused", err)
	}
	gone := Socket{Addr: fakeirqbalance.UniqueAddr()}
	if _, err := gone.Setup(fsys, 812); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Setup where nothing listens: %v, want connection refused", err)
	}
}

// TestSocketFile: the zero Socket finds the daemon's file under the root
// and speaks only to the PID that listens on it.
func TestSocketFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "run", "irqbalance")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pid := os.Getpid() // the fake daemon is this process
	file := filepath.Join(dir, "irqbalance"+strconv.Itoa(pid)+".sock")
	if len(file) > 107 {
		t.Skipf("%s is past sun_path's 107 bytes", file)
	}
	fakeirqbalance.Start(t, file, []int{37}, cpuset.Set{})
	fsys := hosttest.Open(t, root)
	rt, err := Socket{}.Setup(fsys, pid)
	if err != nil || !slices.Equal(rt.BannedIRQs, []int{37}) || rt.Socket != file {
		t.Errorf("Setup(%d) = %+v, %v; want IRQ 37 banned, at %s", pid, rt, err, file)
	}
	other := filepath.Join(dir, "irqbalance1.sock")
	if err := os.Link(file, other); err != nil {
		t.Fatal(err)
	}
	if _, err := (Socket{}).Setup(fsys, 1); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("served by PID %d, not irqbalance's 1", pid)) {
		t.Errorf("Setup(1) through a socket PID %d listens on: %v, want it refused", pid, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "irqbalance2.sock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (Socket{}).Setup(fsys, 2); err == nil || !strings.Contains(err.Error(), "is not a socket") {
		t.Errorf("Setup(2) with a plain file: %v, want 'is not a socket'", err)
	}
}

// TestSocketAbstract: the daemon's fallback address, bound as
// init_socket binds it (sun_path all NUL, the whole struct's length),
// answers at AbstractAddr; in a network namespace of the test's own.
func TestSocketAbstract(t *testing.T) {
	tree, live := hosttest.Open(t, t.TempDir()), hosttest.Open(t, "/")
	err := fakeirqbalance.InNetns(func() error {
		d, err := fakeirqbalance.New(AbstractAddr, []int{5}, cpuset.New(0))
		if err != nil {
			return err
		}
		defer d.Close()
		rt, err := Socket{Addr: AbstractAddr}.Setup(tree, 9)
		if err != nil {
			return err
		}
		if !slices.Equal(rt.BannedIRQs, []int{5}) {
			return fmt.Errorf("setup %+v, want IRQ 5 banned", rt)
		}
		// The zero Socket, with no file, would use it only from the
		// daemon's namespace: this thread's is not the process's.
		_, err = Socket{}.Setup(live, os.Getpid())
		if err == nil || !strings.Contains(err.Error(), "another network namespace") {
			return fmt.Errorf("Setup with the daemon in another namespace: %v, want it refused", err)
		}
		return nil
	})
	if errors.Is(err, fakeirqbalance.ErrNoNetns) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// procTree is a host tree with an irqbalance process (PID 812, started
// at tick 4242) and the files given.
func procTree(t *testing.T, extra map[string]string) string {
	files := map[string]string{
		"proc/1/comm":      "systemd\n",
		"proc/1/cmdline":   "/sbin/init\x00",
		"proc/812/comm":    "irqbalance\n",
		"proc/812/cmdline": "/usr/sbin/irqbalance\x00--foreground\x00--banirq=40\x00",
		"proc/812/environ": "LANG=C.UTF-8\x00",
		"proc/812/stat":    "812 (irqbalance) S 1 812 812 0 -1 4194560 190 0 0 0 5 9 0 0 20 0 2 0 4242 9428992 1083 18446744073709551615 1 1 0 0 0 0 0 4096 1260 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		"proc/812/status":  "Name:\tirqbalance\nState:\tS (sleeping)\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	return irqbalanceTree(t, files)
}

// TestReadRuntime: what the daemon says over its socket is recorded, and
// an IRQ banned at run time is banned; the daemon's list replaces the
// command line's. Never an error: unknown, with why.
func TestReadRuntime(t *testing.T) {
	d := fakeirqbalance.Start(t, "", []int{40}, cpuset.New(1))
	fsys := hosttest.Open(t, procTree(t, nil))
	b, err := ReadWith(fsys, ReadOptions{Socket: &Socket{Addr: d.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	want := Runtime{PID: 812, Start: 4242, Socket: d.Addr(), Sleep: 10, BannedIRQs: []int{40}, BannedCPUs: cpuset.New(1)}
	if diff := cmp.Diff(want, b.Runtime.Or(Runtime{}), cmpRuntime); diff != "" || !b.Runtime.Known() {
		t.Errorf("Runtime %v (-want +got):\n%s", b.Runtime, diff)
	}
	if ok, why := b.IRQBanned(40, "", ""); !ok || why != "--banirq=40" {
		t.Errorf("IRQBanned(40) = %v %q, want the command line's ban", ok, why)
	}
	if _, err := (Socket{Addr: d.Addr()}).BanIRQs(fsys, 812, []int{37, 38}); err != nil {
		t.Fatal(err)
	}
	if b, err = ReadWith(fsys, ReadOptions{Socket: &Socket{Addr: d.Addr()}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		irq  int
		want string
	}{{37, "banned at run time over its socket"}, {38, "banned at run time over its socket"}, {40, ""}} {
		if ok, why := b.IRQBanned(c.irq, "", ""); ok != (c.want != "") || why != c.want {
			t.Errorf("after the ban, IRQBanned(%d) = %v %q, want %q", c.irq, ok, why, c.want)
		}
	}
	if set, from := b.BannedCPUsNow(); !set.Equal(cpuset.New(1)) || !strings.Contains(from, "socket") {
		t.Errorf("BannedCPUsNow() = %s from %q, want 1 from the socket", set, from)
	}

	d.Refuse(true)
	b, err = ReadWith(fsys, ReadOptions{Socket: &Socket{Addr: d.Addr()}})
	if err != nil || b.Runtime.Why().Kind != unknown.KindPermission || !strings.Contains(b.Runtime.Why().Detail, "only root") {
		t.Errorf("refused: %v, Runtime %v; want not permitted, saying why", err, b.Runtime)
	}
	b, err = ReadWith(fsys, ReadOptions{Socket: &Socket{Addr: fakeirqbalance.UniqueAddr()}})
	if err != nil || b.Runtime.Why().Kind != unknown.KindFailed {
		t.Errorf("nothing listening: %v, Runtime %v; want failed", err, b.Runtime)
	}
	if b, err = Read(fsys); err != nil || b.Runtime.Why().Kind != unknown.KindNotCaptured {
		t.Errorf("a tree read without a Socket: %v, Runtime %v; want not captured", err, b.Runtime)
	}
	if ok, _ := b.IRQBanned(40, "", ""); !ok {
		t.Error("on a tree, the --banirq IRQ is not banned")
	}
	notRunning := hosttest.Open(t, irqbalanceTree(t, map[string]string{"proc/1/comm": "systemd\n", "proc/1/cmdline": "/sbin/init\x00"}))
	if b, err = ReadWith(notRunning, ReadOptions{Socket: &Socket{Addr: d.Addr()}}); err != nil || b.Runtime.Why().Kind != unknown.KindNotApplicable {
		t.Errorf("not running: %v, Runtime %v; want not applicable", err, b.Runtime)
	}
}

// TestReadRuntimeLive reads the live root: where no irqbalance runs the
// socket is not asked; where one does, it answers or says why not.
func TestReadRuntimeLive(t *testing.T) {
	b, err := Read(hosttest.Open(t, "/"))
	if err != nil {
		t.Skipf("live root: %v", err)
	}
	switch {
	case !unknown.Is(b.Running, true):
		if b.Runtime.Known() || b.Runtime.Why().Kind != unknown.KindNotApplicable {
			t.Errorf("irqbalance does not run; Runtime %v, want not applicable", b.Runtime)
		}
	case b.Runtime.Known():
		if rt, _ := b.Runtime.Get(); rt.PID != b.PIDs[0] || rt.Socket == "" {
			t.Errorf("Runtime %+v, want PID %d's socket", rt, b.PIDs[0])
		}
	default:
		t.Logf("irqbalance runs, its socket did not answer: %v", b.Runtime)
	}
}
