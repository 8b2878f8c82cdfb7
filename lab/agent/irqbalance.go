package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// irqbalanced is Debian's irqbalance (1.9), which the tune scenario runs
// so that the audit sees a balancer that bans none of the NIC's IRQs.
// It runs with --interval 3600: irqbalance places nothing before its
// first scan (main arms the scan timer and waits), so in the scenario's
// minute it writes no affinity of its own, and every value the agent
// records stays the scenario's and irqnuma's; its socket
// (/run/irqbalance/irqbalance<pid>.sock) answers at once all the same.
type irqbalanced struct {
	cmd     *exec.Cmd
	out     bytes.Buffer
	sock    string
	madeRun bool // the agent made /run/irqbalance
}

// running is the irqbalance the scenario runs, nil when none.
var running *irqbalanced

const irqbalanceRun = "/run/irqbalance"

// startIrqbalance starts /bin/irqbalance --foreground and waits for its
// socket; nil when the guest has no irqbalance.
func startIrqbalance() *irqbalanced {
	if _, err := os.Stat("/bin/irqbalance"); err != nil {
		info("irqbalance", "not in the guest: %v", err)
		return nil
	}
	ib := &irqbalanced{}
	if _, err := os.Stat(irqbalanceRun); err != nil {
		// systemd's RuntimeDirectory makes it; irqbalance binds its
		// socket there, else an abstract one nobody can name.
		need("irqbalance-run", os.Mkdir(irqbalanceRun, 0o755) == nil, "mkdir %s", irqbalanceRun)
		ib.madeRun = true
	}
	ib.cmd = exec.Command("/bin/irqbalance", "--foreground", "--interval", "3600")
	ib.cmd.Stdout, ib.cmd.Stderr = &ib.out, &ib.out
	need("irqbalance-start", ib.cmd.Start() == nil, "start %v", ib.cmd.Args)
	ib.sock = fmt.Sprintf("%s/irqbalance%d.sock", irqbalanceRun, ib.cmd.Process.Pid)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(ib.sock); err == nil {
			break
		}
		if time.Now().After(deadline) || unix.Kill(ib.cmd.Process.Pid, 0) != nil {
			ib.stop()
			must("irqbalance-socket", false, "irqbalance (pid %d) made no socket %s: %s", ib.cmd.Process.Pid, ib.sock, ib.out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	check("irqbalance", true, "irqbalance --foreground --interval 3600 runs (pid %d), socket %s; setup: %s", ib.cmd.Process.Pid, ib.sock, ib.setup())
	return ib
}

// setup asks irqbalance for its "setup" (what irqbalance-ui shows: the
// interval, the IRQs banned over the socket or with --banirq, the banned
// CPUs) and returns it without the banned IRQs' counters: "sleep 3600
// irqs [] cpus 00000000".
func (ib *irqbalanced) setup() string {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: ib.sock, Net: "unix"})
	need("irqbalance-dial", err == nil, "%s: %v", ib.sock, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	// irqbalance answers only root, by the credentials it receives.
	creds := unix.UnixCredentials(&unix.Ucred{Pid: int32(os.Getpid()), Uid: 0, Gid: 0})
	_, _, err = c.WriteMsgUnix([]byte("setup"), creds, nil)
	need("irqbalance-ask", err == nil, "setup to %s: %v", ib.sock, err)
	b, err := io.ReadAll(c)
	need("irqbalance-reply", err == nil && len(b) > 0, "setup from %s: %q, %v", ib.sock, b, err)
	return parseSetup(string(b))
}

// parseSetup reads irqbalance's setup reply, "SLEEP %d " then "IRQ %d
// LOAD %lu DIFF %lu CLASS %d " per banned IRQ then "BANNED <cpumask>"
// (irqbalance.c, sock_handle and get_irq_data).
func parseSetup(s string) string {
	f := strings.Fields(s)
	sleep, cpus := "?", "?"
	var irqs []int
	for i := 0; i+1 < len(f); i++ {
		switch f[i] {
		case "SLEEP":
			sleep = f[i+1]
		case "IRQ":
			if n, err := strconv.Atoi(f[i+1]); err == nil {
				irqs = append(irqs, n)
			}
		case "BANNED":
			cpus = f[i+1]
		}
	}
	slices.Sort(irqs)
	return fmt.Sprintf("sleep %s irqs %v cpus %s", sleep, irqs, cpus)
}

// banned is the IRQs of the setup reply.
func (ib *irqbalanced) banned() []int {
	s := ib.setup()
	_, list, _ := strings.Cut(s, "irqs [")
	list, _, _ = strings.Cut(list, "]")
	var out []int
	for _, w := range strings.Fields(list) {
		n, _ := strconv.Atoi(w)
		out = append(out, n)
	}
	return out
}

// stop ends irqbalance (SIGTERM) and removes what the agent made.
func (ib *irqbalanced) stop() {
	ib.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- ib.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		ib.cmd.Process.Kill()
		<-done
		check("irqbalance-stop", false, "irqbalance did not end on SIGTERM in 10s: %s", ib.out.String())
	}
	os.Remove(ib.sock)
	if ib.madeRun {
		os.Remove(irqbalanceRun)
	}
}

// tunesIrqbalance says whether this irqnuma's tune bans the NIC's IRQs
// from irqbalance: its help says so once the tuner's irqbalance ban is
// in.
func tunesIrqbalance() bool {
	r := irqnuma("tune", "--help")
	return strings.Contains(strings.ToLower(r.stdout), "irqbalance")
}
