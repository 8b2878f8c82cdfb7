package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// pinTime is the clock of these tests: state files get a fixed name.
var pinTime = time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)

// seedQueueCPUs are the published CPUs of mlx5_comp0..15 (IRQs 284-299).
var seedQueueCPUs = []int{50, 17, 53, 51, 58, 55, 53, 30, 60, 20, 21, 61, 26, 23, 24, 63}

// pinSys is the process a pin test runs in: writer w (the kernel's files
// when nil), effective uid uid and the fixed clock pinTime.
func pinSys(w tune.Writer, uid int) sys {
	s := hostSys()
	if w != nil {
		s.writer = w
	}
	s.geteuid = func() int { return uid }
	s.now = func() time.Time { return pinTime }
	return s
}

// slashLink returns a symbolic link to /: a root naming the live host by
// another name.
func slashLink(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "slash")
	if err := os.Symlink("/", p); err != nil {
		t.Fatal(err)
	}
	return p
}

// runCLIContext is runCLISys with a context, for signals.
func runCLIContext(t *testing.T, ctx context.Context, s sys, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runSys(ctx, s, args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

type pinOut struct {
	Plan []struct {
		IRQ       int     `json:"irq"`
		NIC       string  `json:"nic"`
		Queue     int     `json:"queue"`
		Kind      string  `json:"kind"`
		From      string  `json:"from"`
		To        string  `json:"to"`
		Action    string  `json:"action"`
		Result    string  `json:"result"`
		Error     string  `json:"error"`
		File      string  `json:"file"`
		Affinity  *string `json:"affinity"`
		Effective *string `json:"effective"`
	} `json:"plan"`
	StateFile string `json:"state_file"`
	DryRun    bool   `json:"dry_run"`
}

func decodePin(t *testing.T, stdout string) pinOut {
	t.Helper()
	var d pinOut
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("decode %q: %v", stdout, err)
	}
	return d
}

func (d pinOut) results() []string {
	var out []string
	for _, r := range d.Plan {
		out = append(out, strconv.Itoa(r.IRQ)+" "+r.Action+" "+r.Result)
	}
	return out
}

// TestPinGolden records the plan and the results on the seed and NPS2
// hosts: dry runs in both formats, a pin, and the restore after it.
func TestPinGolden(t *testing.T) {
	t.Parallel()
	ps := pinSys(nil, 0)
	tests := []struct {
		name string
		host string
		args string
	}{
		{"seed-dry-run", "seed", "irq pin eth0 --dry-run"},
		{"seed-node-dry-run", "seed", "irq pin eth0 --dry-run --strategy node"},
		{"seed-exclude-xps-dry-run", "seed", "irq pin eth0 --dry-run --exclude 16-19 --xps"},
		{"nps2-dry-run", "nps2", "irq pin enp65s0f0 --dry-run"},
		{"nps2-node-dry-run", "nps2", "irq pin enp65s0f0 --dry-run --strategy node"},
		{"offline-2node-dry-run", "offline-2node", "irq pin ens1f0 ens2f0 --dry-run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := hosttest.Copy(t, tt.host)
			before := hosttest.Files(t, root)
			for _, format := range []string{"table", "json"} {
				args := append([]string{"--root", root, "-o", format}, strings.Fields(tt.args)...)
				stdout, stderr, code := runCLISys(t, ps, args...)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", tt.args, code, stderr)
				}
				ext := map[string]string{"table": ".txt", "json": ".json"}[format]
				golden(t, filepath.Join("pin", tt.name+ext), stdout)
				if format == "table" {
					golden(t, filepath.Join("pin", tt.name+".stderr"), strings.ReplaceAll(stderr, root, "<root>"))
				}
			}
			if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
				t.Errorf("a dry run changed the tree:\n%s", diff)
			}
			if _, err := os.Stat(tune.StateDir(hosttest.Open(t, root))); err == nil {
				t.Error("a dry run created the state folder")
			}
		})
	}

	root := hosttest.Copy(t, "seed")
	stdout, stderr, code := runCLISys(t, ps, "--root", root, "irq", "pin", "eth0", "--xps")
	if code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	golden(t, "pin/seed-pin.txt", stdout)
	golden(t, "pin/seed-pin.stderr", strings.ReplaceAll(stderr, root, "<root>"))
	stdout, stderr, code = runCLISys(t, ps, "--root", root, "irq", "restore")
	if code != 0 {
		t.Fatalf("restore: exit %d: %s", code, stderr)
	}
	golden(t, "pin/seed-restore.txt", stdout)
	golden(t, "pin/seed-restore.stderr", strings.ReplaceAll(stderr, root, "<root>"))
}

// TestPinSeedDoneWhen is the acceptance on the seed host: pin puts
// the 16 queue IRQs on 16 distinct physical cores of node 1 (CPUs 16-31),
// irq list then shows each local with no CPU shared, and restore gives
// back exactly the seed's files.
func TestPinSeedDoneWhen(t *testing.T) {
	t.Parallel()
	ps := pinSys(nil, 0)
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	stdout, stderr, code := runCLISys(t, ps, "--root", root, "-o", "json", "irq", "pin", "eth0")
	if code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	d := decodePin(t, stdout)
	want := filepath.Join(root, "var/lib/irqnuma/state-20261130T010203.000000000Z.json")
	if d.StateFile != want {
		t.Errorf("state_file %q, want %q", d.StateFile, want)
	}
	if st, err := os.Stat(want); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("state file: %v, mode %v; want 0600", err, st.Mode())
	}

	list := listIRQs(t, root)
	cores := map[int]bool{}
	for i := range 16 {
		q := list[284+i]
		a, err := cpuset.ParseList(*q.Affinity)
		if err != nil || a.Len() != 1 || !a.IsSubsetOf(cpuset.Range(16, 31)) {
			t.Errorf("IRQ %d affinity %s, want one CPU of 16-31", 284+i, *q.Affinity)
			continue
		}
		c, _ := a.Min()
		if cores[c%32] {
			t.Errorf("IRQ %d on core of CPU %d twice", 284+i, c)
		}
		cores[c%32] = true
		// A tree has no kernel: effective_affinity_list still says what
		// the seed said.
		if *q.Effective != strconv.Itoa(seedQueueCPUs[i]) {
			t.Errorf("IRQ %d effective %s, want the tree's untouched %d", 284+i, *q.Effective, seedQueueCPUs[i])
		}
	}

	stdout, stderr, code = runCLISys(t, ps, "--root", root, "irq", "restore")
	if code != 0 {
		t.Fatalf("restore: exit %d: %s\n%s", code, stderr, stdout)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("restore did not give back the seed's files (-seed +after):\n%s", diff)
	}
	if _, err := os.Stat(want + ".restored"); err != nil {
		t.Errorf("restored state file not renamed: %v", err)
	}
	if _, stderr, code = runCLISys(t, ps, "--root", root, "irq", "restore"); code != 1 || !strings.Contains(stderr, "nothing left to restore") {
		t.Errorf("second restore: exit %d, %q", code, stderr)
	}
}

// x86Kernel writes like FileWriter, then does in the tree what an x86
// kernel does and a tree cannot: it points effective_affinity_list at the
// first CPU of the list just written. It models the kernel for the one test
// that checks where interrupts would land.
type x86Kernel struct{}

func (x86Kernel) WriteFile(name string, data []byte) error {
	if err := (tune.FileWriter{}).WriteFile(name, data); err != nil {
		return err
	}
	if filepath.Base(name) != irq.FileAffinityList {
		return nil
	}
	set, err := cpuset.ParseList(strings.TrimSpace(string(data)))
	if err != nil {
		return err
	}
	first, _ := set.Min()
	return (tune.FileWriter{}).WriteFile(filepath.Join(filepath.Dir(name), "effective_affinity_list"), []byte(strconv.Itoa(first)+"\n"))
}

// With a kernel that re-targets the interrupts, the queue IRQs of eth0 are
// all local to node 1 and no two share a CPU: the audit that found
// irq-shared-cpu before the pin finds no irq-remote and no irq-shared-cpu
// after it.
func TestPinSeedEffective(t *testing.T) {
	t.Parallel()
	ps := pinSys(x86Kernel{}, 0)
	root := hosttest.Copy(t, "seed")
	if got := auditIRQChecks(t, root); !cmp.Equal(got, []string{"irq-shared-cpu"}) {
		t.Errorf("audit of the seed before pin: %v, want irq-shared-cpu (IRQs 286 and 290 on CPU 53)", got)
	}
	if _, stderr, code := runCLISys(t, ps, "--root", root, "irq", "pin", "eth0"); code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	if got := auditIRQChecks(t, root); len(got) != 0 {
		t.Errorf("audit after pin still finds %v for eth0", got)
	}
	seen := map[string]int{}
	for n, q := range listIRQs(t, root) {
		if q.NIC != "eth0" || !q.Queue.Known() {
			continue
		}
		if q.Local == nil || !*q.Local {
			t.Errorf("IRQ %d is not local after pin: effective %s", n, *q.Effective)
		}
		if prev, ok := seen[*q.Effective]; ok {
			t.Errorf("IRQs %d and %d share CPU %s", prev, n, *q.Effective)
		}
		seen[*q.Effective] = n
	}
	if len(seen) != 16 {
		t.Errorf("%d distinct effective CPUs, want 16", len(seen))
	}
}

// In a host tree nothing re-targets an IRQ, so after the pin its
// effective_affinity_list still names the old CPU while the request names
// the new one. The audit takes that as a pending move and judges where the
// IRQ will land: no irq-remote, no irq-shared-cpu. Restore then gives the
// seed back byte for byte.
func TestPinSeedTreeThenAudit(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	if _, stderr, code := runCLI(t, "--root", root, "irq", "pin", "eth0"); code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	if got := auditIRQChecks(t, root); len(got) != 0 {
		t.Errorf("audit after pin in a tree still finds %v for eth0", got)
	}
	if _, stderr, code := runCLI(t, "--root", root, "irq", "restore"); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, stderr)
	}
	if got := auditIRQChecks(t, root); !cmp.Equal(got, []string{"irq-shared-cpu"}) {
		t.Errorf("audit after restore: %v, want the seed's irq-shared-cpu back", got)
	}
}

// auditIRQChecks returns the irq-remote and irq-shared-cpu findings the
// audit reports for eth0.
func auditIRQChecks(t *testing.T, root string) []string {
	t.Helper()
	stdout, stderr, code := runCLI(t, "--root", root, "-o", "json", "audit", "--nic", "eth0", "--fail-on", "never")
	if code != 0 {
		t.Fatalf("audit: exit %d: %s", code, stderr)
	}
	var doc struct {
		Findings []struct {
			Check string `json:"check"`
			NIC   string `json:"nic"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range doc.Findings {
		if f.NIC == "eth0" && (f.Check == "irq-remote" || f.Check == "irq-shared-cpu") {
			out = append(out, f.Check)
		}
	}
	return out
}

type listedIRQ struct {
	IRQ       int                `json:"irq"`
	NIC       string             `json:"nic"`
	Queue     unknown.Value[int] `json:"queue"`
	Affinity  *string            `json:"affinity"`
	Effective *string            `json:"effective"`
	Local     *bool              `json:"local"`
	Nodes     []int              `json:"affinity_nodes"`
}

func listIRQs(t *testing.T, root string) map[int]listedIRQ {
	t.Helper()
	stdout, stderr, code := runCLI(t, "--root", root, "irq", "list", "-o", "json")
	if code != 0 {
		t.Fatalf("irq list: exit %d: %s", code, stderr)
	}
	var doc struct {
		IRQs []listedIRQ `json:"irqs"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	m := map[int]listedIRQ{}
	for _, q := range doc.IRQs {
		m[q.IRQ] = q
	}
	return m
}

// failAt fails the n-th write (from 1) with err and can cancel a context
// after a given write.
type failAt struct {
	n, at  int
	err    error
	cancel func()
	after  int
}

func (w *failAt) WriteFile(name string, data []byte) error {
	w.n++
	if w.n == w.at {
		return &fs.PathError{Op: "write", Path: name, Err: w.err}
	}
	if err := (tune.FileWriter{}).WriteFile(name, data); err != nil {
		return err
	}
	if w.cancel != nil && w.n == w.after {
		w.cancel()
	}
	return nil
}

func TestPinFailureRollsBack(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	ps := pinSys(&failAt{at: 4, err: syscall.EINVAL}, 0)
	stdout, stderr, code := runCLISys(t, ps, "--root", root, "-o", "json", "irq", "pin", "eth0", "--xps")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
	}
	for _, s := range []string{"failed: IRQ 288", "EINVAL: the value names no online CPU", "every change was rolled back"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr does not say %q:\n%s", s, stderr)
		}
	}
	d := decodePin(t, stdout)
	got := d.results()[:7]
	want := []string{"283 keep unchanged", "284 change rolled-back", "285 keep unchanged", "286 change rolled-back",
		"287 change rolled-back", "288 change failed", "289 change unchanged"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("files changed after the rollback (-before +after):\n%s", diff)
	}
	if _, err := os.Stat(d.StateFile + ".rolled-back"); err != nil {
		t.Errorf("state file of a rolled-back pin not retired: %v", err)
	}
}

func TestPinKeepGoing(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	ps := pinSys(&failAt{at: 3, err: syscall.ENOSPC}, 0)
	stdout, stderr, code := runCLISys(t, ps, "--root", root, "-o", "json", "irq", "pin", "eth0", "--keep-going")
	if code != 1 || !strings.Contains(stderr, "1 of 15 writes failed (--keep-going)") || !strings.Contains(stderr, "vector space") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	d := decodePin(t, stdout)
	if got := d.results()[4]; got != "287 change failed" {
		t.Errorf("IRQ 287: %s", got)
	}
	if got := d.results()[5]; got != "288 change changed" {
		t.Errorf("IRQ 288: %s", got)
	}
	ps = pinSys(tune.FileWriter{}, 0)
	if _, stderr, code := runCLISys(t, ps, "--root", root, "irq", "restore", d.StateFile); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, stderr)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("files after restore (-before +after):\n%s", diff)
	}
}

func TestPinSignal(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		root := hosttest.Copy(t, "seed")
		before := hosttest.Files(t, root)
		ctx, cancel := context.WithCancelCause(context.Background())
		ps := pinSys(&failAt{after: 4, cancel: func() { cancel(shutdown.Cause(tt.sig)) }}, 0)
		stdout, stderr, code := runCLIContext(t, ctx, ps, "--root", root, "-o", "json", "irq", "pin", "eth0")
		cancel(nil)
		if code != tt.want {
			t.Errorf("%v: exit %d, want %d; stderr %s", tt.sig, code, tt.want, stderr)
		}
		if !strings.Contains(stderr, "interrupted") {
			t.Errorf("%v: stderr %q", tt.sig, stderr)
		}
		d := decodePin(t, stdout)
		// The fourth write finished before the rollback.
		if got := d.results()[:7]; !cmp.Equal(got, []string{"283 keep unchanged", "284 change rolled-back", "285 keep unchanged",
			"286 change rolled-back", "287 change rolled-back", "288 change rolled-back", "289 change unchanged"}) {
			t.Errorf("%v: results %v", tt.sig, got)
		}
		if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
			t.Errorf("%v: files changed (-before +after):\n%s", tt.sig, diff)
		}
	}
}

func TestPinManaged(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	// IRQ 290 is managed as the kernel shows it (no write bit). An EPERM
	// from a tree's file is no kernel's answer: see
	// TestPinTreeRefusalRollsBack.
	for _, f := range []string{"smp_affinity", "smp_affinity_list"} {
		if err := os.Chmod(filepath.Join(root, "proc/irq/290", f), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	ps := pinSys(nil, 0)
	stdout, stderr, code := runCLISys(t, ps, "--root", root, "-o", "json", "irq", "pin", "eth0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	d := decodePin(t, stdout)
	got := d.results()[6:9]
	want := []string{"289 change changed", "290 skip-managed skipped", "291 change changed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "proc/irq/290/smp_affinity_list")); string(b) != "53\n" {
		t.Errorf("managed IRQ 290 written: %q", b)
	}
}

func TestRestoreTampered(t *testing.T) {
	t.Parallel()
	ps := pinSys(nil, 0)
	root := hosttest.Copy(t, "seed")
	stdout, stderr, code := runCLISys(t, ps, "--root", root, "-o", "json", "irq", "pin", "eth0")
	if code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	state := decodePin(t, stdout).StateFile
	pinned := hosttest.Files(t, root)
	raw, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ from, to, want string }{
		{`"/proc/irq/286/smp_affinity_list"`, `"/etc/passwd"`, "only /proc/irq/<n>/ and /sys/class/net/<nic>/queues/"},
		// A bad value refuses only its entry: TestRestoreEveryValidEntry.
		{`"/proc/irq/286/smp_affinity_list"`, `"/proc/irq/286/../../../etc/passwd"`, "clean absolute path"},
	} {
		bad := strings.Replace(string(raw), tt.from, tt.to, 1)
		if bad == string(raw) {
			t.Fatalf("%s not in the state file:\n%s", tt.from, raw)
		}
		p := filepath.Join(t.TempDir(), "state.json")
		if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runCLISys(t, ps, "--root", root, "irq", "restore", p)
		if code != 1 || !strings.Contains(stderr, "invalid state file") || !strings.Contains(stderr, tt.want) {
			t.Errorf("restore of a state with %s: exit %d, stderr %q", tt.to, code, stderr)
		}
	}
	if diff := cmp.Diff(pinned, hosttest.Files(t, root)); diff != "" {
		t.Errorf("a refused restore changed files:\n%s", diff)
	}
}

// TestRestoreAfterIRQGone: an IRQ that vanished after the pin (a driver
// reload) does not keep the others pinned: restore puts every other value
// back exactly, names the one gone and exits 1; with nothing else left to
// restore, the state file is retired (TestRestoreAllGone).
func TestRestoreAfterIRQGone(t *testing.T) {
	t.Parallel()
	ps := pinSys(nil, 0)
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	stdout, stderr, code := runCLISys(t, ps, "--root", root, "-o", "json", "irq", "pin", "eth0")
	if code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	state := decodePin(t, stdout).StateFile
	if err := os.RemoveAll(filepath.Join(root, "proc/irq/290")); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runCLISys(t, ps, "--root", root, "-o", "json", "irq", "restore", state)
	if code != 1 || !strings.Contains(stderr, "gone: IRQ 290") || !strings.Contains(stderr, "1 are gone") {
		t.Errorf("restore: exit %d, stderr %q; want exit 1 naming IRQ 290 as gone", code, stderr)
	}
	for _, r := range decodePin(t, stdout).Plan {
		if r.IRQ == 290 && tune.Result(r.Result) != tune.ResultGone {
			t.Errorf("IRQ 290: result %q, want %q", r.Result, tune.ResultGone)
		}
	}
	after := hosttest.Files(t, root)
	for p, v := range before {
		if strings.HasPrefix(p, "/proc/irq/290/") {
			continue
		}
		if after[p] != v {
			t.Errorf("%s = %q after restore, want %q", p, after[p], v)
		}
	}
	if _, err := os.Stat(state + ".restored"); err != nil || !strings.Contains(stderr, "renamed to "+state+".restored") {
		t.Errorf("state file not retired: %v; stderr %q", err, stderr)
	}
}

func TestPinRefusals(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	unknown := hosttest.Copy(t, "seed")
	dev := "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/"
	write(t, unknown, dev+"numa_node", "-1\n")
	write(t, unknown, dev+"local_cpulist", "0-63\n")
	slash := slashLink(t)
	tests := []struct {
		name string
		uid  int
		args []string
		code int
		want string
	}{
		{"not root live", 1000, []string{"--root", "/", "irq", "pin", "eth0"}, 1, "needs root"},
		{"not root restore", 1000, []string{"--root", "/", "irq", "restore"}, 1, "needs root"},
		{"not root, a link to /", 1000, []string{"--root", slash, "irq", "pin", "eth0"}, 1, "needs root"},
		{"not root restore, a link to /", 1000, []string{"--root", slash, "irq", "restore"}, 1, "needs root"},
		{"node and cpus", 0, []string{"--root", root, "irq", "pin", "eth0", "--node", "1", "--cpus", "16"}, 2, "exclusive"},
		{"bad cpus", 0, []string{"--root", root, "irq", "pin", "eth0", "--cpus", "16-"}, 2, "--cpus"},
		{"bad exclude", 0, []string{"--root", root, "irq", "pin", "eth0", "--exclude", "x"}, 2, "--exclude"},
		{"bad strategy", 0, []string{"--root", root, "irq", "pin", "eth0", "--strategy", "random"}, 2, "--strategy"},
		{"negative node", 0, []string{"--root", root, "irq", "pin", "eth0", "--node", "-1"}, 2, "--node -1"},
		{"unknown nic", 0, []string{"--root", root, "irq", "pin", "eth9"}, 2, `unknown NIC "eth9"`},
		{"no nic", 0, []string{"--root", root, "irq", "pin"}, 2, "name the NIC to pin (irqnuma topology lists them)"},
		{"locality unknown", 0, []string{"--root", unknown, "irq", "pin", "eth0"}, 2, "give --node or --cpus"},
		{"exclude all", 0, []string{"--root", root, "irq", "pin", "eth0", "--exclude", "0-63"}, 1, "no CPU left"},
		{"restore nothing", 0, []string{"--root", root, "irq", "restore"}, 1, "no state file"},
		{"restore missing file", 0, []string{"--root", root, "irq", "restore", "/nonexistent/state.json"}, 1, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := pinSys(nil, tt.uid)
			before := hosttest.Files(t, root)
			_, stderr, code := runCLISys(t, ps, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.want)
			}
			if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
				t.Errorf("files changed:\n%s", diff)
			}
		})
	}
	// Not root, a dry run of the live host is fine.
	ps := pinSys(nil, 1000)
	if _, err := os.Stat("/sys/class/net/eth0/device"); err == nil {
		if _, stderr, code := runCLISys(t, ps, "--root", "/", "irq", "pin", "eth0", "--dry-run"); code != 0 {
			t.Errorf("live dry run as non-root: exit %d: %s", code, stderr)
		}
	}
}

func TestPinLocked(t *testing.T) {
	t.Parallel()
	ps := pinSys(nil, 0)
	root := hosttest.Copy(t, "seed")
	l, err := tune.AcquireLock(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	for _, args := range [][]string{{"irq", "pin", "eth0"}, {"irq", "restore"}} {
		_, stderr, code := runCLISys(t, ps, append([]string{"--root", root}, args...)...)
		if code != 1 || !strings.Contains(stderr, "another irqnuma pin or restore is running") {
			t.Errorf("%v while locked: exit %d, %q", args, code, stderr)
		}
	}
}

func TestPinIrqbalanceWarning(t *testing.T) {
	t.Parallel()
	ps := pinSys(nil, 0)
	root := hosttest.Copy(t, "seed")
	pid := filepath.Join(root, "proc/4242")
	if err := os.MkdirAll(pid, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, v := range map[string]string{
		"comm":    "irqbalance\n",
		"cmdline": "/usr/sbin/irqbalance\x00--foreground\x00--banirq=284\x00",
		"environ": "IRQBALANCE_BANNED_CPULIST=0-1\x00",
	} {
		if err := os.WriteFile(filepath.Join(pid, f), []byte(v), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr, code := runCLISys(t, ps, "--root", root, "irq", "pin", "eth0", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{
		"warning: irqbalance is running (PID 4242) and does not ban IRQs 283,285,286",
		"it will move them back",
		`IRQBALANCE_ARGS="--banirq=283 --banirq=285 --banirq=286`,
	} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr does not say %q:\n%s", s, stderr)
		}
	}
	if strings.Contains(stderr, "284,") {
		t.Errorf("IRQ 284 is banned already but named:\n%s", stderr)
	}
}

// TestPinLive pins this machine's NIC queue IRQs to one CPU, checks where
// the kernel delivers them, restores, and checks the original is back. It
// runs only as root where the NIC's queue IRQ affinity is writable. When
// no interrupt arrives in 5 s (the kernel moves an MSI at its next one)
// it skips at the end, saying so: it has not tested the delivery.
func TestPinLive(t *testing.T) {
	t.Parallel()
	hosttest.Writes(t, "IRQ affinities (/proc/irq), xps_cpus and /var/lib/irqnuma")
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("not root: the live pin test writes /proc/irq")
	}
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Skip("no /sys/devices/system/cpu/online")
	}
	cpus, _ := cpuset.ParseList(strings.TrimSpace(string(online)))
	last, _ := cpus.Max()
	if cpus.Len() < 2 {
		t.Skip("one online CPU: nowhere to move an IRQ")
	}
	ps := pinSys(tune.FileWriter{}, 0)
	stdout, stderr, code := runCLISys(t, ps, "irq", "list", "-o", "json")
	if code != 0 {
		t.Fatalf("irq list: %d %s", code, stderr)
	}
	var doc struct {
		IRQs []listedIRQ `json:"irqs"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	nic, queueIRQ := "", -1
	for _, q := range doc.IRQs {
		if q.Queue.Known() && q.NIC != "" {
			nic, queueIRQ = q.NIC, q.IRQ
			break
		}
	}
	if queueIRQ < 0 {
		t.Skip("no NIC queue IRQ on this machine")
	}
	listFile := "/proc/irq/" + strconv.Itoa(queueIRQ) + "/smp_affinity_list"
	st, err := os.Stat(listFile)
	if err != nil || st.Mode().Perm()&0o200 == 0 {
		t.Skipf("%s is not writable (managed IRQ?)", listFile)
	}
	original, err := os.ReadFile(listFile)
	if err != nil {
		t.Fatal(err)
	}
	// Pin to a CPU the kernel does not deliver the IRQ to now, so that
	// the move is seen.
	target := strconv.Itoa(last)
	if b, err := os.ReadFile("/proc/irq/" + strconv.Itoa(queueIRQ) + "/effective_affinity_list"); err == nil {
		if eff, err := cpuset.ParseList(strings.TrimSpace(string(b))); err == nil {
			if other := cpus.Difference(eff); !other.IsEmpty() {
				c, _ := other.Min()
				target = strconv.Itoa(c)
			}
		}
	}
	state := filepath.Join(t.TempDir(), "state.json")
	stdout, stderr, code = runCLISys(t, ps, "-o", "json", "irq", "pin", nic, "--cpus", target, "--state", state)
	t.Cleanup(func() {
		// Whatever failed above, leave the machine as it was.
		if _, err := os.Stat(state); err == nil {
			runCLISys(t, ps, "irq", "restore", state)
		}
	})
	if code != 0 {
		t.Fatalf("pin %s --cpus %s: exit %d: %s\n%s", nic, target, code, stderr, stdout)
	}
	d := decodePin(t, stdout)
	for _, r := range d.Plan {
		if r.IRQ != queueIRQ {
			continue
		}
		if r.Affinity == nil || *r.Affinity != target {
			t.Errorf("IRQ %d reads back affinity %v, want %s", queueIRQ, r.Affinity, target)
		}
		if r.Effective == nil {
			t.Errorf("IRQ %d: effective affinity not read back", queueIRQ)
		}
	}
	// x86 without interrupt remapping moves an MSI at its next interrupt:
	// poll effective_affinity_list until it moves, or until interrupts
	// arrived and it did not. The test sends no traffic of its own: this
	// machine may talk to nothing but loopback, which never reaches the NIC.
	effFile := "/proc/irq/" + strconv.Itoa(queueIRQ) + "/effective_affinity_list"
	count0 := liveIRQCount(t, queueIRQ)
	unseen := "" // why the kernel's move was not seen
	for deadline := time.Now().Add(5 * time.Second); ; {
		eff, err := os.ReadFile(effFile)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(eff)) == target {
			break
		}
		if time.Now().After(deadline) {
			if liveIRQCount(t, queueIRQ) > count0+1 {
				t.Errorf("kernel still delivers IRQ %d to %q after interrupts, want %s", queueIRQ, eff, target)
			} else {
				unseen = fmt.Sprintf("IRQ %d had no interrupt in 5 s, so the kernel has not moved it yet (effective %q, want %s)", queueIRQ, strings.TrimSpace(string(eff)), target)
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	stdout, stderr, code = runCLISys(t, ps, "irq", "restore", state)
	if code != 0 {
		t.Fatalf("restore: exit %d: %s\n%s", code, stderr, stdout)
	}
	back, err := os.ReadFile(listFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != string(original) {
		t.Errorf("after restore %s = %q, want %q", listFile, back, original)
	}
	if unseen != "" {
		// The pin and the restore were checked; where the kernel
		// delivers the IRQ was not, which the test names.
		t.Skipf("pin and restore checked, the kernel's delivery not: %s", unseen)
	}
}

// liveIRQCount returns the total count of an IRQ in /proc/interrupts.
func liveIRQCount(t *testing.T, n int) uint64 {
	t.Helper()
	in, err := interrupts.Read(hosttest.Open(t, "/"))
	if err != nil {
		t.Fatal(err)
	}
	r, ok := in.Row(n)
	if !ok {
		return 0
	}
	return r.Total()
}

func bigHostNICs() []string {
	var nics []string
	for i := range bigHost.NICs {
		nics = append(nics, "eth"+strconv.Itoa(i))
	}
	return nics
}

// BenchmarkPinDryRun is `irq pin --dry-run --xps -o json` of all 8 NICs
// (520 IRQs, 504 tx queues) of the 512-CPU, 1,000-IRQ host, end to end.
func BenchmarkPinDryRun(b *testing.B) {
	root := hosttest.Synthetic(b, bigHost)
	benchCLI(b, append([]string{"--root", root, "-o", "json", "irq", "pin", "--dry-run", "--xps"}, bigHostNICs()...)...)
}

// BenchmarkPinRestore pins the 520 NIC IRQs and 504 xps_cpus of the same
// host onto their nodes (--strategy node), then restores them: planning,
// the state file with its fsyncs, 2,048 writes and their read-backs.
func BenchmarkPinRestore(b *testing.B) {
	root := hosttest.Synthetic(b, bigHost)
	pin := append([]string{"--root", root, "-o", "json", "irq", "pin", "--strategy", "node", "--xps"}, bigHostNICs()...)
	restore := []string{"--root", root, "-o", "json", "irq", "restore"}
	var out, errb bytes.Buffer
	for b.Loop() {
		for _, args := range [][]string{pin, restore} {
			out.Reset()
			errb.Reset()
			if code := run(context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
				b.Fatalf("%v: exit %d: %s", args[4:6], code, errb.String())
			}
		}
	}
}

// panicWriter panics on its first write: a bug in irqnuma's write path.
type panicWriter struct{}

func (panicWriter) WriteFile(string, []byte) error { panic("boom in the write path") }

// TestInternalError: a panic is reported in one line as irqnuma's own
// bug, exit 70, never Go's exit 2 (which says the user erred).
func TestInternalError(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	_, stderr, code := runCLISys(t, pinSys(panicWriter{}, 0), "--root", root, "irq", "pin", "eth0")
	last := stderr[strings.LastIndex(strings.TrimSuffix(stderr, "\n"), "\n")+1:]
	if code != cli.ExitInternal || !strings.HasPrefix(last, "irqnuma: internal error: boom in the write path") {
		t.Errorf("exit %d, stderr %q; want exit %d and the internal error on the last line", code, stderr, cli.ExitInternal)
	}
}
