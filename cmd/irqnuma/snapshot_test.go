package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// snapshotOf runs `irqnuma snapshot` on root and returns the file.
func snapshotOf(t *testing.T, root string, extra ...string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "host.tar.gz")
	out, errOut, code := runCLI(t, append([]string{"snapshot", "--root", root, "-o", file}, extra...)...)
	if code != 0 || out != "" || !strings.Contains(errOut, "wrote "+file) {
		t.Fatalf("snapshot: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	return file
}

// TestSnapshotAuditsSame: a snapshot of each host tree reads to the same
// topology, IRQ list and audit findings as the tree, byte for byte.
func TestSnapshotAuditsSame(t *testing.T) {
	t.Parallel()
	cmds := [][]string{
		{"audit", "-o", "json", "--fail-on", "never"},
		{"audit", "--fail-on", "never"},
		{"topology", "-o", "json"},
		{"irq", "list", "--all", "-o", "json"},
		{"irq", "pin", "--dry-run", "-o", "json", "--state", "/dev/null"},
	}
	for _, name := range hosttest.Names() {
		t.Run(name, func(t *testing.T) {
			root := hosttest.Copy(t, name)
			file := snapshotOf(t, root)
			for _, c := range cmds {
				if c[1] == "pin" {
					nics := nicNames(t, root)
					if len(nics) == 0 {
						t.Fatal("no NIC to plan a pin for")
					}
					c = append(c, nics[0])
				}
				want, wantErr, wantCode := runCLI(t, append(c, "--root", root)...)
				got, gotErr, gotCode := runCLI(t, append(c, "--root", file)...)
				if wantCode != gotCode || wantErr != gotErr {
					t.Errorf("%s: exit %d %q on the tree, %d %q on the snapshot", strings.Join(c, " "), wantCode, wantErr, gotCode, gotErr)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s differs (-tree +snapshot):\n%s", strings.Join(c, " "), diff)
				}
			}
		})
	}
}

// nicNames returns the NICs `topology -o json` lists on a root.
func nicNames(t *testing.T, root string) []string {
	t.Helper()
	out, _, _ := runCLI(t, "topology", "-o", "json", "--root", root)
	var doc struct {
		NICs []struct {
			Name string `json:"name"`
		} `json:"nics"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("topology -o json: %v", err)
	}
	var names []string
	for _, n := range doc.NICs {
		names = append(names, n.Name)
	}
	return names
}

// TestSnapshotLiveAudit: the live machine audits to the same findings as
// its snapshot.
func TestSnapshotLiveAudit(t *testing.T) {
	t.Parallel()
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("a live snapshot needs root to read irqbalance's environment")
	}
	if _, err := os.Stat("/proc/interrupts"); err != nil {
		t.Skip("no live /proc")
	}
	file := snapshotOf(t, "/")
	want, _, wantCode := runCLI(t, "audit", "-o", "json", "--fail-on", "never")
	got, _, gotCode := runCLI(t, "audit", "-o", "json", "--fail-on", "never", "--root", file)
	if wantCode != 0 || gotCode != 0 {
		t.Fatalf("audit exit %d live, %d on the snapshot", wantCode, gotCode)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit differs (-live +snapshot):\n%s", diff)
	}
}

// TestSnapshotLiveProcess: a process named with --pid is captured in
// full, so audit --pid reads it from the snapshot as from the host.
func TestSnapshotLiveProcess(t *testing.T) {
	t.Parallel()
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("a live snapshot needs root")
	}
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no live /proc")
	}
	// sleep holds sockets it inherits: a wildcard listener, and a UDP
	// socket connected to a TEST-NET address (connect sends nothing)
	// through this host's default route, when it has one.
	cmd := exec.Command("sleep", "60")
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Skip("no TCP listener:", err)
	}
	defer ln.Close()
	lf, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	cmd.ExtraFiles = []*os.File{lf}
	if u, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(192, 0, 2, 77), Port: 9}); err == nil {
		defer u.Close()
		uf, err := u.File()
		if err != nil {
			t.Fatal(err)
		}
		defer uf.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, uf)
	}
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start sleep:", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := strconv.Itoa(cmd.Process.Pid)
	file := snapshotOf(t, "/", "--pid", pid)
	want, _, wantCode := runCLI(t, "audit", "-o", "json", "--fail-on", "never", "--pid", pid)
	got, gotErr, gotCode := runCLI(t, "audit", "-o", "json", "--fail-on", "never", "--pid", pid, "--root", file)
	if wantCode != 0 || gotCode != 0 {
		t.Fatalf("audit --pid: exit %d live, %d on the snapshot (%s)", wantCode, gotCode, gotErr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit --pid differs (-live +snapshot):\n%s", diff)
	}
	// Both read its sockets: the attribution (in the equal documents)
	// was made from them, not from a missing file.
	var doc auditDoc
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if len(doc.Processes) != 1 || !strings.Contains(strings.Join(doc.Processes[0].How, "\n"), fmt.Sprintf("tcp *:%d (listening)", port)) {
		t.Errorf("snapshot attribution %+v, want it made from the listener on port %d", doc.Processes, port)
	}
	t.Logf("attribution, live and snapshot: %s %v %q", doc.Processes[0].Attribution, doc.Processes[0].NICs, doc.Processes[0].How)
	// Without --pid the process is not captured beyond its comm: a
	// finding says so and how to capture it.
	bare := snapshotOf(t, "/")
	out, errOut, code := runCLI(t, "audit", "--fail-on", "never", "--pid", pid, "--root", bare)
	if want := "process " + pid + " matches --pid " + pid + ", but the capture holds only its comm"; code != cli.ExitOK || !strings.Contains(out, want) {
		t.Errorf("audit --pid on a snapshot without it: exit %d, stderr %q; want exit 0 and a finding saying %q:\n%s", code, errOut, want, out)
	}
}

func TestSnapshotCLIErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	evil := filepath.Join(dir, "evil.tar.gz")
	if err := os.WriteFile(evil, evilArchive(t), 0o644); err != nil {
		t.Fatal(err)
	}
	seed := snapshotOf(t, hosttest.Root("seed"))
	tests := []struct {
		give     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"snapshot", "--root", hosttest.Root("seed")}, cli.ExitUsage, "-o FILE.tar.gz is required"},
		{[]string{"snapshot", "--root", dir, "-o", filepath.Join(dir, "x.tar.gz")}, cli.ExitUsage, "holds neither proc/ nor sys/"},
		{[]string{"audit", "--root", text}, cli.ExitUsage, "neither a folder nor a snapshot .tar.gz"},
		{[]string{"audit", "--root", evil}, cli.ExitError, `entry "sys/class/net/evil": unsafe entry: link target "/etc" is absolute`},
		{[]string{"irq", "pin", "eth0", "--root", seed}, cli.ExitUsage, "a snapshot is read-only"},
		{[]string{"irq", "restore", "--root", seed}, cli.ExitUsage, "a snapshot is read-only"},
		{[]string{"zc", "prepare", "eth0", "--queue", "1", "--port", "9000", "--root", seed}, cli.ExitUsage, "a snapshot is read-only; irqnuma zc prepare would write to it"},
		{[]string{"zc", "prepare", "eth0", "--queue", "1", "--port", "9000", "--partial", "--root", seed}, cli.ExitUsage, "a snapshot is read-only"},
	}
	for _, tt := range tests {
		out, errOut, code := runCLI(t, tt.give...)
		if code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
			t.Errorf("irqnuma %s = exit %d, stderr %q; want exit %d with %q", strings.Join(tt.give, " "), code, errOut, tt.wantCode, tt.wantErr)
		}
		if out != "" {
			t.Errorf("irqnuma %s: stdout %q, want none", strings.Join(tt.give, " "), out)
		}
	}
}

func TestSnapshotStdout(t *testing.T) {
	t.Parallel()
	out, errOut, code := runCLI(t, "snapshot", "--root", hosttest.Root("vm-virtio"), "-o", "-")
	if code != 0 || !strings.Contains(errOut, "wrote stdout") {
		t.Fatalf("snapshot -o -: exit %d, stderr %q", code, errOut)
	}
	zr, err := gzip.NewReader(strings.NewReader(out))
	if err != nil {
		t.Fatalf("stdout is not gzip: %v", err)
	}
	tr := tar.NewReader(zr)
	h, err := tr.Next()
	if err != nil || !strings.HasPrefix(h.Name, "proc/") && !strings.HasPrefix(h.Name, "sys/") {
		t.Errorf("first entry %v, %v: want under proc/ or sys/", h, err)
	}
}

// evilArchive holds a valid tree and one link to /etc.
func evilArchive(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range []*tar.Header{
		{Name: "proc/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "sys/class/net/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "sys/class/net/evil", Typeflag: tar.TypeSymlink, Linkname: "/etc"},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
