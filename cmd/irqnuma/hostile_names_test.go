package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// hostileNIC is a NIC name a terminal would act on: an OSC title, a
// bell, a colour, a line break that would start a forged line, and a
// right-to-left override. The kernel takes any byte but '/' and NUL.
const hostileNIC = "eth0\x1b]0;pw\a\x1b[31mX\nfake\u202eZ"

// rawTerminalBytes returns a description of the first rune in s a
// terminal would act on rather than show (a control byte other than the
// newline ending each line, DEL, C1, a bidi mark, override or isolate,
// a line or paragraph separator), or "" when there is none.
func rawTerminalBytes(s string) string {
	for i, r := range s {
		switch {
		case r == '\n':
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f,
			r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return "U+" + strconv.FormatInt(int64(r), 16) + " at byte " + strconv.Itoa(i) + ": " + strconv.Quote(s[max(0, i-40):min(len(s), i+40)])
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return "invalid UTF-8 at byte " + strconv.Itoa(i)
		}
	}
	return ""
}

// hostileNamesTree is a copy of seed whose NIC, driver and an IRQ carry
// names a terminal would act on.
func hostileNamesTree(t *testing.T) string {
	t.Helper()
	return hostileTree(t, hostileNIC, "mlx5\x1b[1m_core\u2066", "rtc\x1b[2J\u009b0\u200f\xff")
}

// hostileTree is a copy of seed whose eth0 is called nic, its driver
// driver and the rtc0 IRQ irqName.
func hostileTree(t *testing.T, nic, driver, irqName string) string {
	t.Helper()
	root := hosttest.Copy(t, "seed")
	dev := "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0"
	if err := os.Rename(filepath.Join(root, dev, "net/eth0"), filepath.Join(root, dev, "net", nic)); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "sys/class/net/eth0")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../devices/pci0000:97/0000:97:01.0/0000:98:00.0/net/"+nic, filepath.Join(root, "sys/class/net", nic)); err != nil {
		t.Fatal(err)
	}
	drv := filepath.Join(root, dev, "driver")
	if err := os.Remove(drv); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../bus/pci/drivers/"+driver, drv); err != nil {
		t.Fatal(err)
	}
	b := readTree(t, root, "proc/interrupts")
	if !strings.Contains(b, "  rtc0\n") {
		t.Fatal("seed's /proc/interrupts has no rtc0 row")
	}
	put(t, root, "proc/interrupts", strings.Replace(b, "  rtc0\n", "  "+irqName+"\n", 1))
	return root
}

// TestHostileNamesEscaped: every text output shows host names with their
// control bytes, line breaks and bidi controls escaped, so a name can
// neither drive the terminal nor forge a line.
func TestHostileNamesEscaped(t *testing.T) {
	t.Parallel()
	root := hostileNamesTree(t)
	escNIC := `eth0\x1b]0;pw\x07\x1b[31mX\x0afake\u202eZ`
	tests := []struct {
		args []string
		want string // the escaped name the output must show
	}{
		{[]string{"topology"}, escNIC},
		{[]string{"irq", "list", "--all"}, `rtc\x1b[2J\xc2\x9b0\u200f\xff`},
		{[]string{"audit", "--fail-on", "never"}, escNIC + `: mlx5\x1b[1m_core\u2066 0000:98:00.0`},
		{[]string{"audit", "--nic", hostileNIC, "--fail-on", "never"}, escNIC},
		{[]string{"irq", "pin", hostileNIC, "--dry-run"}, escNIC + ": spread on CPUs"},
		{[]string{"watch", "--count", "2", "--interval", "10ms"}, escNIC + ": "},
		{[]string{"bench", "--dry-run", "--nic", hostileNIC, "--regexp", `(\d+)`, "--", "true"}, "irqnuma bench: " + escNIC},
		{[]string{"map"}, "eth0?]0;pw??[31mX?fake?Z"},
	}
	for _, tt := range tests {
		stdout, stderr, code := runCLI(t, append([]string{"--root", root}, tt.args...)...)
		if code != 0 {
			t.Errorf("%q: exit %d, stderr %q", tt.args, code, stderr)
			continue
		}
		for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if bad := rawTerminalBytes(out); bad != "" {
				t.Errorf("%q: %s holds a raw %s", tt.args, name, bad)
			}
			for line := range strings.SplitSeq(out, "\n") {
				if strings.HasPrefix(line, "fake") {
					t.Errorf("%q: the NIC name's line break starts a line of %s: %q", tt.args, name, line)
				}
			}
		}
		if !strings.Contains(stdout+stderr, tt.want) {
			t.Errorf("%q: the output does not show %q:\n%s\n%s", tt.args, tt.want, stdout, stderr)
		}
	}
}

// TestHostileCommEscaped: a process any local user names with escape
// sequences (prctl(PR_SET_NAME), here a write to its own
// /proc/PID/comm) is shown escaped by watch, audit and map --pid on the
// live host.
func TestHostileCommEscaped(t *testing.T) {
	t.Parallel()
	// The shell names itself (a write to another process's comm is
	// refused), then waits on its stdin until the test closes it.
	const comm = "\x1b]0;pw\a\x1b[31mX"
	cmd := exec.Command("sh", "-c", `printf '\033]0;pw\007\033[31mX' >/proc/$$/comm && echo ready && read x`)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	ready := make([]byte, 6)
	if _, err := io.ReadFull(stdout, ready); err != nil || string(ready) != "ready\n" {
		t.Fatalf("the child did not name itself: %q, %v", ready, err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	if got, err := os.ReadFile("/proc/" + pid + "/comm"); err != nil || string(got) != comm+"\n" {
		t.Fatalf("/proc/%s/comm = %q, %v; want %q", pid, got, err, comm)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"watch", "--pid", pid, "--count", "1", "--interval", "50ms"}, `\x1b]0;pw\x07\x1b[31mX (PID ` + pid + ")"},
		{[]string{"audit", "--pid", pid, "--fail-on", "never"}, `\x1b]0;pw\x07\x1b[31mX`},
		{[]string{"map", "--pid", pid}, "?]0;pw??[31mX"},
	}
	for _, tt := range tests {
		out, errOut, code := runCLIContext(t, ctx, hostSys(), tt.args...)
		if code != 0 {
			t.Errorf("%q: exit %d, stderr %q", tt.args, code, errOut)
			continue
		}
		for name, s := range map[string]string{"stdout": out, "stderr": errOut} {
			if bad := rawTerminalBytes(s); bad != "" {
				t.Errorf("%q: %s holds a raw %s", tt.args, name, bad)
			}
		}
		if !strings.Contains(out, tt.want) {
			t.Errorf("%q: the output does not show the comm as %q:\n%s", tt.args, tt.want, out)
		}
	}
}
