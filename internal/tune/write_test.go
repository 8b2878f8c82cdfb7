package tune

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

func TestExplain(t *testing.T) {
	tests := []struct {
		give error
		want string
	}{
		{syscall.EIO, "managed or per-CPU IRQ (Linux before 6.12 says EIO)"},
		{syscall.EPERM, "manages this IRQ's affinity itself (Linux 6.12 and later"},
		{syscall.EINVAL, "no online CPU"},
		{syscall.ERANGE, "no valid online CPU"},
		{syscall.EOVERFLOW, "wider than the kernel's CPU mask"},
		{syscall.ENOSPC, "vector space"},
		{syscall.EROFS, "read-only"},
		{syscall.EACCES, "not root"},
		{syscall.ENOENT, "IRQ was freed"},
		{irq.ErrPath, "writes nothing outside"},
	}
	for _, tt := range tests {
		we := &WriteError{Path: "/proc/irq/5/smp_affinity_list", Value: "3", Err: tt.give, kernel: true}
		if got := explain(we); !strings.Contains(got, tt.want) {
			t.Errorf("explain(%v) = %q, want it to say %q", tt.give, got, tt.want)
		}
		if !strings.Contains(we.Error(), explain(we)) {
			t.Errorf("WriteError %q does not carry the explanation", we.Error())
		}
	}
}

func TestWriteErrorManaged(t *testing.T) {
	tests := []struct {
		path   string
		err    error
		kernel bool
		want   bool
	}{
		{"/proc/irq/36/smp_affinity_list", syscall.EIO, true, true},
		{"/proc/irq/36/smp_affinity", syscall.EPERM, true, true},
		{"/proc/irq/36/smp_affinity_list", syscall.EINVAL, true, false},
		{"/proc/irq/36/smp_affinity_list", syscall.ENOSPC, true, false},
		{"/sys/class/net/eth0/queues/tx-0/xps_cpus", syscall.EIO, true, false},
		// A host tree's copy: its EIO or EPERM is no kernel's answer.
		{"/proc/irq/36/smp_affinity_list", syscall.EIO, false, false},
		{"/proc/irq/36/smp_affinity", syscall.EPERM, false, false},
	}
	for _, tt := range tests {
		err := error(&WriteError{Path: tt.path, Err: tt.err, kernel: tt.kernel})
		if got := errors.Is(err, ErrManaged); got != tt.want {
			t.Errorf("errors.Is(%s on %s, kernel %v, ErrManaged) = %v, want %v", tt.err, tt.path, tt.kernel, got, tt.want)
		}
		if !tt.kernel && strings.Contains(explain(err), "manages") {
			t.Errorf("explain(%s from a tree) = %q, says managed", tt.err, explain(err))
		}
	}
}

// failingWriter writes through FileWriter but fails the writes whose
// number (from 1) is in fail, or whose path ends in failPath, with err.
type failingWriter struct {
	n        int
	fail     map[int]bool
	failPath string
	err      error
	after    func(n int) // called after each write that went through
}

func (w *failingWriter) WriteFile(name string, data []byte) error {
	w.n++
	if w.fail[w.n] || (w.failPath != "" && strings.HasSuffix(name, w.failPath)) {
		return &fs.PathError{Op: "write", Path: name, Err: w.err}
	}
	if err := (FileWriter{}).WriteFile(name, data); err != nil {
		return err
	}
	if w.after != nil {
		w.after(w.n)
	}
	return nil
}

// seedChanges moves the seed's queue IRQs 284-299 to CPUs 16-31.
func seedChanges(t *testing.T, root string) []Change {
	t.Helper()
	var cs []Change
	for i := range 16 {
		p := irq.AffinityPath(284+i, irq.FileAffinityList)
		from, err := irq.ReadValue(hosttest.Open(t, root), p)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, Change{Path: p, From: from, To: cpuset.New(16 + i).String()})
	}
	return cs
}

func results(rs []ChangeResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Result)
	}
	return out
}

func TestApplyRollsBackOnFailure(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	w := &failingWriter{fail: map[int]bool{6: true}, err: syscall.ENOSPC}
	res, stop := apply(context.Background(), w, hosttest.Open(t, root), seedChanges(t, root), applyOptions{})
	if stop != StopFailed {
		t.Errorf("stop = %v, want StopFailed", stop)
	}
	want := []string{"rolled-back", "rolled-back", "rolled-back", "rolled-back", "rolled-back", "failed"}
	for range 10 {
		want = append(want, "unchanged")
	}
	if diff := cmp.Diff(want, results(res)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if !errors.Is(res[5].Err, syscall.ENOSPC) || !strings.Contains(res[5].Err.Error(), "vector space") {
		t.Errorf("failed write error = %v, want ENOSPC explained", res[5].Err)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("tree changed after rollback (-before +after):\n%s", diff)
	}
	// The read back says the original again.
	if got := res[0].Affinity.String(); got != "50" {
		t.Errorf("IRQ 284 reads back %q after rollback, want 50", got)
	}
}

func TestApplyKeepGoing(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	w := &failingWriter{failPath: "/proc/irq/290/smp_affinity_list", err: syscall.EINVAL}
	res, stop := apply(context.Background(), w, hosttest.Open(t, root), seedChanges(t, root), applyOptions{KeepGoing: true})
	if stop != StopCompleted {
		t.Errorf("stop = %v, want StopCompleted", stop)
	}
	for i, r := range res {
		want := ResultChanged
		if i == 6 {
			want = ResultFailed
		}
		if r.Result != want {
			t.Errorf("IRQ %d: %s, want %s", 284+i, r.Result, want)
		}
	}
	// In a tree no kernel re-targets the IRQ: the requested affinity is
	// what was written, the effective one what the file said before.
	if got, eff := res[0].Affinity.String(), res[0].Effective.String(); got != "16" || eff != "50" {
		t.Errorf("IRQ 284 reads back affinity %s effective %s, want 16 and 50 (tree: effective unchanged)", got, eff)
	}
}

// playKernel makes Apply take the tree's files for the kernel's, whose
// EIO or EPERM says an IRQ is managed, until the test ends.
func playKernel(t *testing.T) {
	old := isKernelFile
	isKernelFile = func(kfile.FS, string) bool { return true }
	t.Cleanup(func() { isKernelFile = old })
}

func TestApplyManagedSkipped(t *testing.T) {
	playKernel(t)
	for _, errno := range []syscall.Errno{syscall.EIO, syscall.EPERM} {
		root := hosttest.Copy(t, "seed")
		w := &failingWriter{failPath: "/proc/irq/290/smp_affinity_list", err: errno}
		res, stop := apply(context.Background(), w, hosttest.Open(t, root), seedChanges(t, root), applyOptions{})
		if stop != StopCompleted {
			t.Errorf("%v: stop = %v, want StopCompleted", errno, stop)
		}
		if r := res[6]; r.Result != ResultSkipped || !r.Managed || !errors.Is(r.Err, ErrManaged) {
			t.Errorf("%v: IRQ 290 = %+v, want skipped as managed", errno, r)
		}
		if res[7].Result != ResultChanged {
			t.Errorf("%v: IRQ 291 = %s, want changed", errno, res[7].Result)
		}
	}
}

func TestApplyInterrupted(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The signal arrives during the third write: it finishes, then
	// everything is rolled back.
	w := &failingWriter{after: func(n int) {
		if n == 3 {
			cancel()
		}
	}}
	res, stop := apply(ctx, w, hosttest.Open(t, root), seedChanges(t, root), applyOptions{})
	if stop != StopInterrupted {
		t.Errorf("stop = %v, want StopInterrupted", stop)
	}
	if got := results(res)[:4]; !cmp.Equal(got, []string{"rolled-back", "rolled-back", "rolled-back", "unchanged"}) {
		t.Errorf("results %v", got)
	}
	if w.n != 6 {
		t.Errorf("%d writes, want 3 and 3 rollbacks", w.n)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("tree changed after interrupted run (-before +after):\n%s", diff)
	}
}

func TestApplyRollbackFails(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	// Write 3 fails; so does the rollback of write 1 (write number 5).
	w := &failingWriter{fail: map[int]bool{3: true, 5: true}, err: syscall.EROFS}
	res, stop := apply(context.Background(), w, hosttest.Open(t, root), seedChanges(t, root), applyOptions{})
	if stop != StopFailed {
		t.Errorf("stop = %v", stop)
	}
	if r := res[0]; r.Result != ResultChanged || !errors.Is(r.RollbackErr, syscall.EROFS) {
		t.Errorf("IRQ 284 = %s, rollback error %v; want changed with EROFS", r.Result, r.RollbackErr)
	}
	if res[1].Result != ResultRolledBack {
		t.Errorf("IRQ 285 = %s, want rolled-back", res[1].Result)
	}
}

func TestWriteValueRefuses(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	// A link that climbs out of the tree must not carry a write outside.
	if err := os.Symlink("../../../../../../../../tmp", filepath.Join(root, "sys/class/net/evil")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want error
	}{
		{"/etc/passwd", irq.ErrPath},
		{"/proc/irq/284/../../../etc/passwd", irq.ErrPath},
		{"/sys/class/net/evil/queues/tx-0/xps_cpus", nil},
		{"/proc/irq/4242/smp_affinity_list", fs.ErrNotExist},
	}
	for _, tt := range tests {
		err := writeValue(FileWriter{}, hosttest.Open(t, root), tt.path, "1")
		var we *WriteError
		if !errors.As(err, &we) {
			t.Errorf("WriteValue(%s) = %v, want a *WriteError", tt.path, err)
			continue
		}
		if tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("WriteValue(%s) = %v, want %v", tt.path, err, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "proc/irq/4242")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a write to a missing IRQ created something: %v", err)
	}
}

// TestFileWriterTreeFile: a regular file of a tree is written in place:
// its inode, mode and hard links stay, and no temporary file is made.
func TestFileWriterTreeFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "smp_affinity_list")
	if err := os.WriteFile(p, []byte("0-63\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard")
	if err := os.Link(p, hard); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)
	if err := (FileWriter{}).WriteFile(p, []byte("16-31")); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "16-31" || after.Mode().Perm() != 0o644 || !os.SameFile(before, after) {
		t.Errorf("after write: %q, mode %v, same inode %v; want 16-31, 0644, the same file", b, after.Mode().Perm(), os.SameFile(before, after))
	}
	if b, _ := os.ReadFile(hard); string(b) != "16-31" {
		t.Errorf("hard link reads %q, want the value written", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d files in the folder, want 2 (no temporary left)", len(ents))
	}
}

// TestApplyTreeRefusalRollsBack: EIO or EPERM from a host tree's file is
// a failed write that rolls back, never a managed IRQ skipped.
func TestApplyTreeRefusalRollsBack(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EIO, syscall.EPERM} {
		root := hosttest.Copy(t, "seed")
		before := hosttest.Files(t, root)
		w := &failingWriter{failPath: "/proc/irq/290/smp_affinity_list", err: errno}
		res, stop := apply(context.Background(), w, hosttest.Open(t, root), seedChanges(t, root), applyOptions{})
		if stop != StopFailed {
			t.Errorf("%v: stop = %v, want StopFailed", errno, stop)
		}
		if r := res[6]; r.Result != ResultFailed || r.Managed || errors.Is(r.Err, ErrManaged) {
			t.Errorf("%v: IRQ 290 = %+v, want failed, not managed", errno, r)
		}
		if got := results(res)[:7]; !cmp.Equal(got, []string{"rolled-back", "rolled-back", "rolled-back", "rolled-back", "rolled-back", "rolled-back", "failed"}) {
			t.Errorf("%v: results %v", errno, got)
		}
		if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
			t.Errorf("%v: tree changed (-before +after):\n%s", errno, diff)
		}
	}
}

// TestRollbackExactBytes: a rollback on a tree puts back the bytes read,
// a missing newline included, in the same file (hard links kept).
func TestRollbackExactBytes(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	p := irq.AffinityPath(284, irq.FileAffinityList)
	full := filepath.Join(root, p)
	if err := os.WriteFile(full, []byte("0-1"), 0o644); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(root, "hard")
	if err := os.Link(full, hard); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(full)
	raw, from, err := irq.ReadRaw(hosttest.Open(t, root), p)
	if err != nil || from != "0-1" || string(raw) != "0-1" {
		t.Fatalf("irq.ReadRaw = %q, %q, %v", raw, from, err)
	}
	changes := []Change{
		{Path: p, From: from, FromRaw: raw, To: "16"},
		{Path: irq.AffinityPath(285, irq.FileAffinityList), From: "17", To: "18"},
	}
	w := &failingWriter{fail: map[int]bool{2: true}, err: syscall.EINVAL}
	if _, stop := apply(context.Background(), w, hosttest.Open(t, root), changes, applyOptions{}); stop != StopFailed {
		t.Fatalf("stop = %v, want StopFailed", stop)
	}
	after, _ := os.Stat(full)
	if b, _ := os.ReadFile(full); string(b) != "0-1" || !os.SameFile(before, after) {
		t.Errorf("after rollback: %q, same file %v; want \"0-1\" in the same file", b, os.SameFile(before, after))
	}
	if b, _ := os.ReadFile(hard); string(b) != "0-1" {
		t.Errorf("hard link reads %q after rollback", b)
	}
}

func TestAffinityFileFallsBackToMask(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	if err := os.Remove(filepath.Join(root, "proc/irq/284/smp_affinity_list")); err != nil {
		t.Fatal(err)
	}
	p, err := irq.AffinityFile(hosttest.Open(t, root), 284)
	if err != nil || p != "/proc/irq/284/smp_affinity" {
		t.Fatalf("irq.AffinityFile = %q, %v", p, err)
	}
	tgt, _ := irq.ParseTarget(p)
	v := irq.FormatFor(tgt, cpuset.New(16), 64)
	if v != "00000000,00010000" {
		t.Errorf("mask for CPU 16 of 64 = %q", v)
	}
	if err := writeValue(FileWriter{}, hosttest.Open(t, root), p, v); err != nil {
		t.Fatal(err)
	}
	rb := irq.ReadBackOf(hosttest.Open(t, root), p)
	if rb.ReadErr != nil || rb.Affinity.String() != "16" {
		t.Errorf("read back %v, %v; want 16", rb.Affinity, rb.ReadErr)
	}
	if _, err := irq.AffinityFile(hosttest.Open(t, root), 4242); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("irq.AffinityFile(4242) = %v, want not exist", err)
	}
}
