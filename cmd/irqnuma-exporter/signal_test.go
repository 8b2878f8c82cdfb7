package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/host/snapshot"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestMain runs the exporter's main when this test binary is started as
// irqnuma-exporter (TestStopSignal), the tests otherwise.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "irqnuma-exporter" {
		main()
	}
	hosttest.Main(m) // TMPDIR on a tmpfs, whatever the caller's
}

// TestStopSignal: SIGTERM stops the exporter within a second with 143
// (what the systemd unit's SuccessExitStatus expects), after a scrape
// answered on a snapshot root, and the folder it unpacked the snapshot
// into is gone.
func TestStopSignal(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "irqnuma-exporter")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "seed.tar.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snapshot.Write(f, hosttest.Open(t, hosttest.Root("seed")), snapshot.Options{}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tmp := t.TempDir()
	cmd := exec.Command(bin, "--root", file, "--web.listen-address", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addr := make(chan string, 1)
	scanned := make(chan struct{}) // stderr read to its end
	var log strings.Builder
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	var a string
	select {
	case a = <-addr:
	case <-time.After(20 * time.Second):
		t.Fatal("no serving line in 20 s")
	}
	if a == "" {
		t.Fatal("exited before serving")
	}
	resp, err := http.Get("http://" + a + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "irqnuma_scrape_error 0") {
		t.Errorf("scrape of the snapshot: no irqnuma_scrape_error 0 in\n%.400s", body)
	}
	if m, _ := filepath.Glob(filepath.Join(tmp, "*")); len(m) == 0 {
		t.Error("no unpacked snapshot in TMPDIR while serving: the test would prove nothing")
	}
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	// Wait closes stderr: only once it has been read to its end.
	go func() { <-scanned; done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5 s after SIGTERM")
	}
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Errorf("exit %d after SIGTERM, want 143; stderr %q", code, log.String())
	}
	if took := time.Since(sent); took > 1500*time.Millisecond {
		t.Errorf("took %v to stop", took)
	}
	if m, _ := filepath.Glob(filepath.Join(tmp, "*")); len(m) > 0 {
		t.Errorf("left %v behind", m)
	}
}
