package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// msKey is the RSS verification key of Microsoft's specification.
const msKey = "6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa"

// seedWithSteering copies the seed tree and lays testdata/flow/seed-steer
// over it (through the tree's links, as the files sit in a real host's
// sysfs): the recorded steering, and the processes, as writeProc writes
// them: PID 1's routes (eth0 owns
// 192.0.2.2), each queue q's NAPI kthread napi/eth0-(8192+q), pid 4100+q,
// allowed on node 1 and last on CPU 16+q, but queue 7's (pid 4107), which
// is not in the tree; and an iperf3 (pid 4242) with a connection on
// port 5201 (to queue 7 by the ntuple rule) and one on 5202 (queue 3 by
// RSS), its threads last on CPU 19 (queue 3's thread's), 51 (its SMT
// sibling), 20 (another core of node 1) and 3 (node 0).
func seedWithSteering(t testing.TB) string {
	t.Helper()
	root := hosttest.Copy(t, "seed")
	hosttest.Overlay(t, root, filepath.Join("testdata", "flow", "seed-steer"))
	return root
}

// TestFlowGolden: the text and JSON of flow on a host whose NIC reports
// its steering (RSS, an ntuple rule), on a sosreport with what-if values,
// and with what-if values alone.
func TestFlowGolden(t *testing.T) {
	seed := seedWithSteering(t)
	table := filepath.Join("testdata", "flow", "vmxnet3_ens192_ethtool-x.txt")
	sos := hosttest.Root("sos-ice")
	// A table naming queue 9 of em1, which has 8 (ethtool -l).
	beyond := filepath.Join(t.TempDir(), "table")
	if err := os.WriteFile(beyond, []byte("9 9 9 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
	}{
		{"sos-beyond", []string{"--root", sos, "flow", "udp", "10.0.0.9:4000", "10.0.0.2:5201", "--nic", "em1",
			"--rss-key", msKey, "--rss-table", beyond, "--rss-fields", "sd", "--rss-func", "toeplitz"}},
		{"rss", []string{"--root", seed, "flow", "tcp", "10.0.0.1:40000", "192.168.1.2:5202", "--nic", "eth0"}},
		{"ntuple", []string{"--root", seed, "flow", "tcp", "10.0.0.1:40000", "192.168.1.2:5201", "--nic", "eth0"}},
		{"owner", []string{"--root", seed, "flow", "tcp", "198.51.100.9:40712", "192.0.2.2:5201"}},
		{"pid", []string{"--root", seed, "flow", "--pid", "4242"}},
		{"udp-sd", []string{"--root", seed, "flow", "udp", "66.9.149.187:2794", "161.142.100.80:1766", "--nic", "eth0"}},
		{"udp6-noport", []string{"--root", seed, "flow", "udp", "[3ffe:2501:200:1fff::7]", "3ffe:2501:200:3::1", "--nic", "eth0"}},
		{"whatif-xor", []string{"--root", seed, "flow", "tcp", "10.0.0.1:40000", "192.168.1.2:5202", "--nic", "eth0", "--rss-func", "xor"}},
		{"sos-rule", []string{"--root", sos, "flow", "tcp", "10.0.0.9:40000", "10.0.0.2:5201", "--nic", "em1"}},
		{"sos-unknown", []string{"--root", sos, "flow", "tcp", "10.0.0.9:40000", "10.0.0.2:5202", "--nic", "em1"}},
		{"sos-whatif", []string{"--root", sos, "flow", "tcp", "66.9.149.187:2794", "161.142.100.80:1766", "--nic", "em1",
			"--rss-key", msKey, "--rss-table", table, "--rss-fields", "sdfn", "--rss-func", "toeplitz"}},
		{"sos-whatif-nofunc", []string{"--root", sos, "flow", "tcp", "66.9.149.187:2794", "161.142.100.80:1766", "--nic", "em1",
			"--rss-key", msKey, "--rss-table", table, "--rss-fields", "sdfn"}},
		{"whatif-only", []string{"--root", sos, "flow", "tcp", "[3ffe:2501:200:1fff::7]:2794", "[3ffe:2501:200:3::1]:1766",
			"--rss-key", strings.ReplaceAll(msKey, ":", ""), "--rss-table", table, "--rss-fields", "sdfn"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, "flow/"+tt.name+".txt", strings.ReplaceAll(out, seed, "SEED"))
			js, errOut, code := runCLI(t, append(tt.args, "-o", "json")...)
			if code != 0 || !json.Valid([]byte(js)) {
				t.Fatalf("-o json: exit %d: %s", code, errOut)
			}
			golden(t, "flow/"+tt.name+".json", js)
		})
	}
}

// TestFlowErrors: bad input is one usage error (exit 2) naming what is
// wrong; a flow no NIC can be said to receive says how to name one.
func TestFlowErrors(t *testing.T) {
	sos := hosttest.Root("sos-ice")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"flow", "icmp", "1.2.3.4", "5.6.7.8"}, `flow protocol "icmp": want udp or tcp`},
		{[]string{"flow", "udp", "fe80::1:52011", "fe80::2"}, "in brackets"},
		{[]string{"flow", "udp", "1.2.3.4:99999", "5.6.7.8"}, `source "1.2.3.4:99999"`},
		{[]string{"flow", "udp", "1.2.3.4", "fe80::2"}, "not of one address family"},
		{[]string{"flow", "udp", "1.2.3.4", "5.6.7.8", "--nic", "em1", "--rss-key", "zz"}, "--rss-key"},
		{[]string{"flow", "udp", "1.2.3.4", "5.6.7.8", "--nic", "em1", "--rss-fields", "sdx"}, "--rss-fields"},
		{[]string{"flow", "udp", "1.2.3.4", "5.6.7.8", "--nic", "em1", "--rss-func", "sha"}, "--rss-func"},
		{[]string{"flow", "udp", "1.2.3.4", "5.6.7.8", "--nic", "em1", "--rss-table", "/nonexistent/table"}, "--rss-table"},
		{[]string{"flow", "udp", "1.2.3.4", "5.6.7.8"}, "name it with --nic"},
		{[]string{"flow", "udp", "1.2.3.4"}, "want udp|tcp SRC[:PORT] DST[:PORT], or --pid/--comm (got 2 arguments)"},
		{[]string{"flow", "udp", "1.2.3.4", "5.6.7.8", "--pid", "1"}, "give no flow"},
		{[]string{"flow", "--pid", "0"}, "--pid"},
		{[]string{"flow", "--cgroup", "/a/../b"}, `--cgroup /a/../b: ".." is not a group`},
	}
	for _, tt := range tests {
		_, errOut, code := runCLI(t, append([]string{"--root", sos}, tt.args...)...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("irqnuma %s: exit %d, %q; want exit 2 and %q", strings.Join(tt.args, " "), code, errOut, tt.want)
		}
	}
}

// TestFlowHashWithoutTable: key, fields and function make the hash; the
// table only picks the queue. So with the table unknown (no NIC owns the
// destination, or the named NIC's steering was not captured) flow prints
// the hash of Microsoft's published vector (66.9.149.187:2794 to
// 161.142.100.80:1766) and says the queue is unknown and why; before, it
// printed no hash with --nic and refused without. A function nobody
// gives is unknown, and so is the hash.
func TestFlowHashWithoutTable(t *testing.T) {
	t.Parallel()
	const key = "6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa"
	flowArgs := []string{"flow", "tcp", "66.9.149.187:2794", "161.142.100.80:1766", "--rss-key", key}
	tests := []struct {
		give      []string
		wantHash  string // "" for none
		wantQueue string
	}{
		{[]string{"--root", hosttest.Root("sos-ice"), "--rss-fields", "sdfn"}, "0x51ccc178", "queue unknown: indirection table unknown (no NIC)"},
		{[]string{"--root", hosttest.Root("sos-ice"), "--rss-fields", "sd"}, "0x323e8fc2", "queue unknown: indirection table unknown (no NIC)"},
		{[]string{"--root", hosttest.Root("seed"), "--rss-fields", "sdfn"}, "0x51ccc178", "queue unknown: indirection table unknown (no NIC)"},
		{[]string{"--root", hosttest.Root("seed"), "--rss-fields", "sdfn", "--nic", "eth0", "--rss-func", "toeplitz"}, "0x51ccc178", "queue unknown: indirection table unknown (eth0 rss: not captured"},
		{[]string{"--root", hosttest.Root("seed"), "--rss-fields", "sdfn", "--nic", "eth0"}, "", "queue unknown: hash function unknown (eth0 rss: not captured"},
	}
	for _, tt := range tests {
		args := append(append([]string{tt.give[0], tt.give[1]}, flowArgs...), tt.give[2:]...)
		out, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Errorf("irqnuma %s: exit %d: %s", strings.Join(args[2:], " "), code, errOut)
			continue
		}
		hasHash := strings.Contains(out, "\nhash        0x")
		if tt.wantHash != "" && !strings.Contains(out, "\nhash        "+tt.wantHash+"\n") || tt.wantHash == "" && hasHash {
			t.Errorf("irqnuma %s: hash line, want %q:\n%s", strings.Join(args[2:], " "), tt.wantHash, out)
		}
		if !strings.Contains(out, "\nqueue       "+tt.wantQueue) {
			t.Errorf("irqnuma %s: queue line, want %q:\n%s", strings.Join(args[2:], " "), tt.wantQueue, out)
		}
		out, _, _ = runCLI(t, append(args, "-o", "json")...)
		var doc struct {
			RSS struct {
				HashHex *string `json:"hash_hex"`
			} `json:"rss"`
			Queue *int `json:"queue"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Queue != nil || (tt.wantHash == "") != (doc.RSS.HashHex == nil) || doc.RSS.HashHex != nil && *doc.RSS.HashHex != tt.wantHash {
			t.Errorf("irqnuma %s -o json: hash_hex %v, queue %v (%v); want %q and no queue", strings.Join(args[2:], " "), doc.RSS.HashHex, doc.Queue, err, tt.wantHash)
		}
	}
}

// TestFlowLiveVirtio: on a host whose eth0 is virtio_net without RSS (this
// VM), flow says the queue is unknown and why, and computes no hash.
func TestFlowLiveVirtio(t *testing.T) {
	drv, err := os.Readlink("/sys/class/net/eth0/device/driver")
	if err != nil || filepath.Base(drv) != "virtio_net" {
		t.Skip("no virtio_net eth0 on this host")
	}
	ifc, err := net.InterfaceByName("eth0")
	if err != nil {
		t.Fatal(err)
	}
	addrs, _ := ifc.Addrs()
	var dst string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			dst = n.IP.String()
		}
	}
	if dst == "" {
		t.Skip("eth0 has no IPv4 address")
	}
	out, errOut, code := runCLI(t, "flow", "udp", "10.0.0.1:5000", dst+":5201")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "\nnic         eth0 (") || !strings.Contains(out, "\nqueue       queue unknown: ") || strings.Contains(out, "\nhash        0x") {
		t.Errorf("flow on virtio eth0:\n%s", out)
	}
}

// TestFlowMicrosoftVectors: all 16 published hashes (IPv4 and IPv6, with
// and without ports) come out of irqnuma flow --rss-key ... --rss-fields
// ..., each with its table index in a 128-entry table (the low 7 bits).
func TestFlowMicrosoftVectors(t *testing.T) {
	p := filepath.Join(realhosts.Require(t), "nic", "toeplitz", "ms_rss_verification_vectors.tsv")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	table := filepath.Join(dir, "table")
	var q []string
	for i := range 128 {
		q = append(q, strconv.Itoa(i))
	}
	if err := os.WriteFile(table, []byte(strings.Join(q, " ")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var key string
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if k, ok := strings.CutPrefix(line, "# Key (40 bytes): "); ok {
			key = strings.TrimSpace(k)
		}
		f := strings.Split(line, "\t")
		if strings.HasPrefix(line, "#") || len(f) != 7 || f[0] == "family" {
			continue
		}
		src, dst := hostPort(f[3], f[4]), hostPort(f[1], f[2])
		for _, c := range []struct{ fields, hash string }{{"sd", f[5]}, {"sdfn", f[6]}} {
			args := []string{"--root", hosttest.Root("sos-ice"), "flow", "tcp", src, dst, "--rss-key", key, "--rss-table", table, "--rss-fields", c.fields, "-o", "json"}
			out, errOut, code := runCLI(t, args...)
			var got struct {
				RSS struct {
					HashHex string `json:"hash_hex"`
					Index   *int   `json:"index"`
				} `json:"rss"`
			}
			if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
				t.Fatalf("irqnuma %s: exit %d: %s", strings.Join(args, " "), code, errOut)
			}
			want, _ := strconv.ParseUint(strings.TrimPrefix(c.hash, "0x"), 16, 32)
			if got.RSS.HashHex != c.hash || got.RSS.Index == nil || *got.RSS.Index != int(want&127) {
				t.Errorf("flow tcp %s %s --rss-fields %s: hash %s index %v, want %s index %d", src, dst, c.fields, got.RSS.HashHex, got.RSS.Index, c.hash, want&127)
			}
			n++
		}
	}
	if n != 16 {
		t.Fatalf("%s: %d hashes checked, want 16", p, n)
	}
}

// hostPort joins an address and port as flow takes them.
func hostPort(a, p string) string {
	if strings.Contains(a, ":") {
		return "[" + a + "]:" + p
	}
	return a + ":" + p
}

// TestFlowREADME: the README's flow blocks on committed trees are what
// irqnuma prints (the live VM's block is pasted, and says so).
func TestFlowREADME(t *testing.T) {
	sos := hosttest.Root("sos-ice")
	table := filepath.Join(moduleRoot(t), "cmd", "irqnuma", "testdata", "flow", "vmxnet3_ens192_ethtool-x.txt")
	tests := []struct {
		cmd  string
		args []string
	}{
		{"$ irqnuma --root testdata/hosts/sos-ice flow tcp 10.0.0.9:40000 10.0.0.2:5201 --nic em1\n",
			[]string{"--root", sos, "flow", "tcp", "10.0.0.9:40000", "10.0.0.2:5201", "--nic", "em1"}},
		{"--rss-table cmd/irqnuma/testdata/flow/vmxnet3_ens192_ethtool-x.txt --rss-fields sd --rss-func toeplitz\n",
			[]string{"--root", sos, "flow", "udp", "66.9.149.187:2794", "161.142.100.80:1766", "--nic", "em1",
				"--rss-key", msKey, "--rss-table", table, "--rss-fields", "sd", "--rss-func", "toeplitz"}},
	}
	for _, tt := range tests {
		block := readmeBlock(t, "flow", tt.cmd)
		out, errOut, code := runCLI(t, tt.args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if block != out {
			t.Errorf("README's flow block is not what irqnuma prints (-README +irqnuma):\n%s", cmp.Diff(block, out))
		}
	}
}

// TestFlowObserve: --observe on a tree samples its recorded qstats twice
// (a tree's counters do not move, so nothing rose, and it says so, with
// the counter source), and is refused with --pid or a negative duration.
func TestFlowObserve(t *testing.T) {
	seed := seedWithSteering(t)
	out, errOut, code := runCLI(t, "--root", seed, "flow", "tcp", "198.51.100.9:40713", "192.0.2.2:5202", "--observe", "10ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"queue       3 (rss)", "counters: netdev qstats rx packets\n", "rose        queue 3: +0", "verdict     no rx counter of eth0 rose in"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	js, _, code := runCLI(t, "--root", seed, "flow", "tcp", "198.51.100.9:40713", "192.0.2.2:5202", "--observe", "10ms", "-o", "json")
	var doc struct {
		Queue    *uint32 `json:"queue"`
		Observed struct {
			Source    string  `json:"counter_source"`
			Predicted *uint32 `json:"predicted_queue"`
			Landed    *bool   `json:"landed"`
			Queues    []struct {
				Queue uint32 `json:"queue"`
			} `json:"queues"`
		} `json:"observed"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, js)
	}
	if doc.Queue == nil || doc.Observed.Predicted == nil || *doc.Observed.Predicted != *doc.Queue || doc.Observed.Landed != nil ||
		len(doc.Observed.Queues) != 16 || doc.Observed.Source != "netdev qstats rx packets" {
		t.Errorf("json observed %+v (queue %v)", doc.Observed, doc.Queue)
	}
	for _, args := range [][]string{{"--pid", "1", "--observe", "1s"}, {"tcp", "198.51.100.9:40713", "192.0.2.2:5202", "--observe", "-1s"}} {
		_, errOut, code := runCLI(t, append([]string{"--root", seed, "flow"}, args...)...)
		if code != 2 {
			t.Errorf("flow %q: exit %d (%s), want 2", args, code, errOut)
		}
	}
}
