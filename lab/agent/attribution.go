package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"reflect"
	"strings"
)

// procDoc is what the attribution scenario reads of `irqnuma audit -o
// json`: the findings about processes and which NIC each process uses.
type procDoc struct {
	Findings []struct {
		Check    string `json:"check"`
		Severity string `json:"severity"`
		NIC      string `json:"nic"`
		PID      int    `json:"pid"`
	} `json:"findings"`
	Processes []struct {
		PID         int      `json:"pid"`
		NICs        []string `json:"nics"`
		Attribution string   `json:"attribution"`
		How         []string `json:"how"`
		Judged      []string `json:"judged"`
	} `json:"processes"`
}

// procFindings is "check/severity nic" of each finding about pid.
func (d procDoc) procFindings(pid int) []string {
	var out []string
	for _, f := range d.Findings {
		if f.PID == pid {
			out = append(out, f.Check+"/"+f.Severity+" "+f.NIC)
		}
	}
	return out
}

// server is an "agent serve" process started by irqnuma exec.
type server struct {
	pid   int
	stdin io.WriteCloser
	cmd   *exec.Cmd
}

// serveOn starts "/init serve MODE ADDR" on CPUs with its memory bound to
// their node, through irqnuma exec, and waits for it to say it is ready.
func serveOn(on cpus, mode, addr string) *server {
	cmd := exec.Command("/bin/irqnuma", "exec", "--cpus", on.String(), "--membind", "--", "/init", "serve", mode, addr)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	must("start-"+mode+"-"+addr, cmd.Start() == nil, "start irqnuma exec --cpus %s -- /init serve %s %s", on, mode, addr)
	s := &server{stdin: stdin, cmd: cmd}
	sc := bufio.NewScanner(stdout)
	if sc.Scan() {
		fmt.Sscanf(sc.Text(), "ready %d", &s.pid)
	}
	must("ready-"+mode+"-"+addr, s.pid > 0, "the %s process on %s said %q", mode, addr, sc.Text())
	return s
}

func (s *server) stop() {
	s.stdin.Close()
	s.cmd.Wait()
}

// scenarioAttribution: each process is judged against the NIC its
// sockets use. With eth0's queue IRQs on CPUs 4-5 and eth1's on its own
// node 0, servers run on node 1's CPUs 6-7 with their memory there:
// bound to eth1's address (node 0) it is flagged remote to eth1 only;
// bound to eth0's (node 1) it gets no process finding; a UDP client
// connected through eth0 is attributed to eth0; a wildcard listener is
// "any NIC": one info finding without --nic, judged against the NIC
// --nic names. A snapshot of the guest attributes them the same.
func scenarioAttribution(l *lab) {
	eth0, eth1 := l.nic("eth0"), l.nic("eth1")
	for _, p := range []struct {
		n    *nic
		cpus string
	}{{eth0, "4-5"}, {eth1, l.nodes[eth1.node].String()}} {
		r := irqnuma("irq", "pin", p.n.Name, "--cpus", p.cpus, "--state", "/tmp/lab-attr-"+p.n.Name+".json")
		must("pin-"+p.n.Name, r.code == 0, "%s", r)
	}
	node1 := l.nodes[eth0.node] &^ mustCPUs("4-5")
	remote := serveOn(node1, "tcp", eth1.ip()+":5201")
	defer remote.stop()
	local := serveOn(node1, "tcp", eth0.ip()+":5202")
	defer local.stop()
	client := serveOn(node1, "udp", eth0.Peer+":9001")
	defer client.stop()
	wild := serveOn(node1, "tcp", "0.0.0.0:5203")
	defer wild.stop()
	pids := []string{"--pid", itoa(remote.pid), "--pid", itoa(local.pid), "--pid", itoa(client.pid), "--pid", itoa(wild.pid)}

	var d procDoc
	jsonOf(&d, append([]string{"audit", "--fail-on", "never"}, pids...)...)
	uses, how := map[int]string{}, map[int][]string{}
	for _, p := range d.Processes {
		uses[p.PID] = p.Attribution + " " + strings.Join(p.NICs, ",")
		how[p.PID] = p.How
	}
	for _, c := range []struct {
		name string
		s    *server
		want string
	}{{"remote-server", remote, "sockets eth1"}, {"local-server", local, "sockets eth0"}, {"client", client, "sockets eth0"}, {"wildcard", wild, "any "}} {
		check(c.name+"-uses", uses[c.s.pid] == c.want, "PID %d: %q, want %q; how %q", c.s.pid, uses[c.s.pid], c.want, how[c.s.pid])
	}

	got := d.procFindings(remote.pid)
	onlyEth1 := len(got) > 0
	hasRemote := false
	for _, f := range got {
		onlyEth1 = onlyEth1 && strings.HasSuffix(f, " eth1")
		hasRemote = hasRemote || strings.HasPrefix(f, "proc-remote/")
	}
	check("remote-server-flagged", onlyEth1 && hasRemote, "server bound to eth1's %s on node 1 CPUs %s: findings %q; want proc-remote about eth1 (node %d), none about eth0", eth1.ip(), node1, got, eth1.node)
	check("local-server-clean", len(d.procFindings(local.pid)) == 0, "server bound to eth0's %s on node 1 CPUs %s: findings %q; want none", eth0.ip(), node1, d.procFindings(local.pid))
	check("client-clean", len(d.procFindings(client.pid)) == 0, "client through eth0 on node 1 CPUs: findings %q; want none", d.procFindings(client.pid))
	got = d.procFindings(wild.pid)
	check("wildcard-unknown", reflect.DeepEqual(got, []string{"proc-nic-unknown/info "}), "wildcard listener, no --nic: findings %q; want one proc-nic-unknown info", got)

	// --nic names the NIC a wildcard listener is judged against.
	jsonOf(&d, "audit", "--fail-on", "never", "--pid", itoa(wild.pid), "--nic", eth1.Name)
	got = d.procFindings(wild.pid)
	check("wildcard-nic-eth1", len(got) > 0 && strings.HasPrefix(got[0], "proc-remote/") && !strings.Contains(strings.Join(got, ";"), "proc-nic-unknown"),
		"wildcard listener, --nic eth1: findings %q; want proc-remote about eth1", got)
	jsonOf(&d, "audit", "--fail-on", "never", "--pid", itoa(wild.pid), "--nic", eth0.Name)
	check("wildcard-nic-eth0", len(d.procFindings(wild.pid)) == 0, "wildcard listener, --nic eth0: findings %q; want none", d.procFindings(wild.pid))

	sameAttribution(pids)
}

// sameAttribution: a snapshot of the processes attributes them as the
// guest itself does.
func sameAttribution(pids []string) {
	const snap = "/tmp/lab-attribution.tar.gz"
	r := irqnuma(append([]string{"snapshot", "-o", snap}, pids...)...)
	must("snapshot", r.code == 0, "%s", r)
	var live, got procDoc
	jsonOf(&live, append([]string{"audit", "--fail-on", "never"}, pids...)...)
	jsonOf(&got, append([]string{"audit", "--fail-on", "never", "--root", snap}, pids...)...)
	check("snapshot-same", len(live.Processes) == 4 && reflect.DeepEqual(live.Processes, got.Processes),
		"live vs snapshot:\nlive: %.3000s\nsnapshot: %.3000s", js(live.Processes), js(got.Processes))
	os.Remove(snap)
}

// serve is "/init serve MODE ADDR", the process the attribution scenario
// starts: it touches 32 MiB (so its memory is where exec bound it),
// listens on ADDR (tcp) or connects a UDP socket to it (udp), says it is
// ready and waits for its stdin to close.
func serve(mode, addr string) {
	mem := make([]byte, 32<<20)
	for i := 0; i < len(mem); i += 4096 {
		mem[i] = 1
	}
	var c io.Closer
	var err error
	switch mode {
	case "tcp":
		c, err = net.Listen("tcp4", addr)
	case "udp":
		c, err = net.Dial("udp4", addr)
	default:
		err = fmt.Errorf("mode %q: want tcp or udp", mode)
	}
	if err != nil {
		fmt.Println("error", err)
		return
	}
	defer c.Close()
	fmt.Printf("ready %d\n", os.Getpid())
	io.Copy(io.Discard, os.Stdin)
	_ = mem[len(mem)-1]
}
