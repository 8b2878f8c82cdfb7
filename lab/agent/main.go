// Command agent is the lab guest's /init. It mounts the kernel's file
// systems, loads the modules the lab's devices need, names and addresses
// the NICs, then runs each scenario: it runs the static irqnuma in /bin
// and compares what it says with the kernel's own files and writes, which
// the agent reads itself (no irqnuma reader of files is imported, so a
// bug in one cannot hide itself). The steer scenario calls steer.Read
// and snapshot.Open itself, as the thing under test, against the guest's
// own ethtool and sockets. Every check is one "LAB {json}"
// line on the second serial port, read by the host driver (package lab).
// When done it powers the guest off.
//
// Run as "agent hold", it is the process irqnuma exec starts in the
// exec-mask scenario: it touches some memory, says it is ready and waits;
// as "agent serve tcp|udp ADDR", one of the attribution scenario's
// servers and clients.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// config is /etc/lab/config.json, written by the host driver.
type config struct {
	Kernel   string   `json:"kernel"`
	Release  string   `json:"release"`
	Nodes    []string `json:"nodes"`
	NICs     []nicCfg `json:"nics"`
	NVMeNode int      `json:"nvme_node"`
	Export   bool     `json:"export"`
	// LinksNAPI: whether virtio_net names each queue's NAPI to netdev
	// netlink (the host read the module's imports); nil: not known.
	LinksNAPI *bool `json:"virtio_net_links_napi"`
	// SetsNAPIIRQ: whether virtio_net ties each NAPI to its IRQ, so
	// that napi-get reports it (the host read the module's imports of
	// netif_napi_set_irq_locked); nil: not known.
	SetsNAPIIRQ *bool `json:"virtio_net_sets_napi_irq"`
	// Only, when not empty, is the scenarios to run.
	Only []string `json:"only"`
}

type nicCfg struct {
	Name       string `json:"name"`
	MAC        string `json:"mac"`
	Addr       string `json:"addr"`
	Peer       string `json:"peer"`
	PeerMAC    string `json:"peer_mac"`
	Node       int    `json:"node"`
	QueuePairs int    `json:"queue_pairs"`
	RSS        bool   `json:"rss"` // virtio-net rss=on,hash=on
}

func (n nicCfg) ip() string { return strings.Split(n.Addr, "/")[0] }

func main() {
	if len(os.Args) > 1 && os.Args[1] == "hold" {
		hold()
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "serve" {
		serve(os.Args[2], os.Args[3])
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "agent: run as the lab guest's /init (or as: agent hold, agent serve tcp|udp ADDR)")
		os.Exit(2)
	}
	defer poweroff()
	if err := setup(); err != nil {
		fmt.Println("agent:", err)
		return
	}
	defer func() {
		if r := recover(); r != nil {
			emit(line{Kind: "fatal", Scenario: current, Detail: fmt.Sprintf("panic: %v\n%s", r, debug.Stack())})
		}
		emit(line{Kind: "done", Uptime: uptime()})
	}()
	emit(line{Kind: "boot", Uptime: uptime()})
	var cfg config
	b, err := os.ReadFile("/etc/lab/config.json")
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	if err != nil {
		emit(line{Kind: "fatal", Detail: "config: " + err.Error()})
		return
	}
	l, err := prepare(cfg)
	if err != nil {
		emit(line{Kind: "fatal", Scenario: "setup", Detail: err.Error()})
		return
	}
	for _, s := range []struct {
		name string
		run  func(*lab)
	}{
		{"topology", scenarioTopology},
		{"irq-list", scenarioIRQList},
		{"audit", scenarioAudit},
		{"restore", scenarioRestore},
		{"watch", scenarioWatch},
		{"exec-mask", scenarioExecMask},
		{"snapshot", scenarioSnapshot},
		{"attribution", scenarioAttribution},
		{"bench", scenarioBench},
		{"steer", scenarioSteer},
		{"flow", scenarioFlow},
		{"flow-bench", scenarioFlowBench},
		{"zc", scenarioZC},
		{"cgroup", scenarioCgroup},
		{"tune", scenarioTune},
	} {
		if len(cfg.Only) > 0 && !slices.Contains(cfg.Only, s.name) {
			continue
		}
		current = s.name
		t0 := time.Now()
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(abort); !ok {
						emit(line{Kind: "fatal", Scenario: s.name, Detail: fmt.Sprintf("panic: %v\n%s", r, debug.Stack())})
					}
				}
			}()
			s.run(l)
		}()
		info("time", "%s took %.1fs (uptime %.1fs)", s.name, time.Since(t0).Seconds(), uptime())
	}
}

// setup mounts /proc, /sys and /dev and opens the result port.
func setup() error {
	for _, m := range []struct{ src, dst, fs string }{
		{"proc", "/proc", "proc"}, {"sysfs", "/sys", "sysfs"}, {"devtmpfs", "/dev", "devtmpfs"},
	} {
		if err := unix.Mount(m.src, m.dst, m.fs, 0, ""); err != nil && err != unix.EBUSY {
			return fmt.Errorf("mount %s: %w", m.dst, err)
		}
	}
	os.Setenv("PATH", "/bin")
	f, err := os.OpenFile("/dev/ttyS1", os.O_WRONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("result port: %w", err)
	}
	out = f
	return nil
}

func poweroff() {
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
}

// uptime is /proc/uptime's first field.
func uptime() float64 {
	var up float64
	fmt.Sscan(readFile("/proc/uptime"), &up)
	return up
}

// hold is the process irqnuma exec starts: it touches 32 MiB of
// anonymous memory (so numa_maps has pages to show), prints its pid and
// waits for its stdin to close.
func hold() {
	mem := make([]byte, 32<<20)
	for i := 0; i < len(mem); i += 4096 {
		mem[i] = 1
	}
	fmt.Printf("ready %d\n", os.Getpid())
	buf := make([]byte, 1)
	os.Stdin.Read(buf)
	_ = mem[len(mem)-1]
}
