package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/host/snapshot"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// waits names the parts of the steer scenario whose irqnuma side is not
// on main yet, and whose work each waits on. A part listed reports one
// info line and does not run; a part not listed runs and must pass.
// Remove a part from here when its work lands.
var waits = map[string]string{}

// landed reports whether part runs; when it waits, it says so.
func landed(part string) bool {
	if w, ok := waits[part]; ok {
		info("waits-"+part, "not run: waits on %s", w)
		return false
	}
	return true
}

// rssNIC is the NIC the host gave virtio-net's rss=on,hash=on.
func (l *lab) rssNIC() *nic {
	for _, n := range l.nics {
		if n.RSS {
			return n
		}
	}
	panic("the lab has no NIC with RSS")
}

// steerTruth is what the guest's ethtool and sysfs say of one NIC.
type steerTruth struct {
	text     map[string]string            // ethtool's output by option: -l, -g, -x, -k
	channels map[string]map[string]string // ethtool -l
	rings    map[string]map[string]string // ethtool -g
	rss      rssText                      // ethtool -x
	features map[string]featureText       // ethtool -k
	threaded int                          // /sys/class/net/IF/threaded
}

func readTruth(ifname string) steerTruth {
	t := steerTruth{text: map[string]string{}}
	for _, opt := range []string{"-l", "-g", "-x", "-k"} {
		t.text[opt] = ethtool(opt, ifname)
	}
	t.channels, t.rings = ethSections(t.text["-l"]), ethSections(t.text["-g"])
	var err error
	x, k := t.text["-x"], t.text["-k"]
	if t.rss, err = parseEthtoolX(x); err != nil {
		must("ethtool-x-text", false, "%v\n%s", err, x)
	}
	if t.features, err = parseEthtoolK(k); err != nil {
		must("ethtool-k-text", false, "%v\n%s", err, k)
	}
	th := readFile("/sys/class/net/" + ifname + "/threaded")
	if t.threaded, err = strconv.Atoi(th); err != nil {
		must("threaded-sysfs", false, "/sys/class/net/%s/threaded %q: %v", ifname, th, err)
	}
	return t
}

// combined is ethtool -l's current combined count.
func (t steerTruth) combined() int {
	n, _ := ethU32(t.channels["current"]["Combined"])
	return int(n)
}

// steerStep is one setting the scenario makes, and what the guest's
// ethtool must say after it, independently of irqnuma.
type steerStep struct {
	name   string
	args   []string // ethtool's arguments after the interface; nil: none
	expect func(t steerTruth) (bool, string)
}

func steerSteps(n *nic) []steerStep {
	tableIs := func(want func(i int) uint32) func(t steerTruth) (bool, string) {
		return func(t steerTruth) (bool, string) {
			for i, q := range t.rss.table {
				if q != want(i) {
					return false, fmt.Sprintf("entry %d is %d, want %d: %v", i, q, want(i), t.rss.table)
				}
			}
			return len(t.rss.table) == 128, fmt.Sprintf("%d entries: %v", len(t.rss.table), t.rss.table)
		}
	}
	return []steerStep{
		{name: "booted", expect: func(t steerTruth) (bool, string) {
			ok := t.combined() == n.QueuePairs && len(t.rss.table) == 128 && len(t.rss.key) == 40 && t.rss.hashFunc == "toeplitz"
			return ok, fmt.Sprintf("combined %d (%d queue pairs), %d table entries, %d-byte key, hash function %q of %v",
				t.combined(), n.QueuePairs, len(t.rss.table), len(t.rss.key), t.rss.hashFunc, t.rss.funcs)
		}},
		{name: "combined-2", args: []string{"-L", n.Name, "combined", "2"}, expect: func(t steerTruth) (bool, string) {
			return t.combined() == 2, fmt.Sprintf("combined %d; table %v", t.combined(), t.rss.table)
		}},
		{name: "combined-4", args: []string{"-L", n.Name, "combined", "4"}, expect: func(t steerTruth) (bool, string) {
			return t.combined() == 4, fmt.Sprintf("combined %d; table %v", t.combined(), t.rss.table)
		}},
		// ethtool -X equal N writes entry i = i % N.
		{name: "equal-2", args: []string{"-X", n.Name, "equal", "2"}, expect: tableIs(func(i int) uint32 { return uint32(i % 2) })},
		{name: "weight-1234", args: []string{"-X", n.Name, "weight", "1", "2", "3", "4"}, expect: weighted([]int{1, 2, 3, 4})},
	}
}

// weighted checks a table ethtool -X weight W... wrote: queue q holds
// 128*W[q]/sum(W) entries, give or take one (ethtool rounds at each
// boundary), in queue order.
func weighted(w []int) func(t steerTruth) (bool, string) {
	return func(t steerTruth) (bool, string) {
		sum := 0
		for _, x := range w {
			sum += x
		}
		share := map[uint32]int{}
		ok := len(t.rss.table) == 128
		for i, q := range t.rss.table {
			share[q]++
			ok = ok && (i == 0 || q >= t.rss.table[i-1])
		}
		for q, x := range w {
			want := float64(128*x) / float64(sum)
			ok = ok && float64(share[uint32(q)]) >= want-1 && float64(share[uint32(q)]) <= want+1
		}
		return ok, fmt.Sprintf("shares %v for weights %v: %v", share, w, t.rss.table)
	}
}

// scenarioSteer: the RSS NIC's channels, table, key, hash function,
// features, rings and threaded state as irqnuma reads them equal the
// guest's ethtool and sysfs, before and after each setting; the NAPI
// instances equal the guest's sockets and /proc; the audit names the
// queues a table leaves out; irq pin and restore move the NAPI
// kthreads with the IRQs; a snapshot reads as the live guest.
func scenarioSteer(l *lab) {
	n := l.rssNIC()
	before := affinities()
	defer steerCleanup(n, before)
	keyVerbatim(n.Name, readTruth(n.Name))
	for _, s := range steerSteps(n) {
		if s.args != nil {
			ethtool(s.args...)
		}
		t := readTruth(n.Name)
		ok, detail := s.expect(t)
		check(s.name+"-ethtool", ok, "%s after ethtool %s: %s", n.Name, strings.Join(s.args, " "), detail)
		compareReading(s.name, n.Name, t)
		if s.name == "equal-2" {
			auditTable(n)
		}
	}
	ethtool("-X", n.Name, "default")
	q2napi := napiByQueue(l, n)
	setThreaded(n.Name, 1)
	threads := napiThreads(n.Name)
	missing := 0
	for _, id := range q2napi {
		if len(threads[id]) != 1 {
			missing++
		}
	}
	check("threaded-kthreads", missing == 0 && len(q2napi) == n.QueuePairs,
		"queue NAPI ids %v; napi/%s-ID kthreads by ID %v (ID 0: tx NAPIs, which have no id)", q2napi, n.Name, threads)
	// The rx queues' NAPI threads: those netdev napi-get names (tx
	// NAPIs have no id), by NAPI id.
	rxThreads := map[uint32]int{}
	for _, id := range q2napi {
		if len(threads[id]) == 1 {
			rxThreads[id] = threads[id][0]
		}
	}
	t := readTruth(n.Name)
	compareReading("threaded", n.Name, t)
	compareNAPI(l, n, q2napi, rxThreads)
	steerPin(l, n, rxThreads)
	steerSnapshot(n)
}

// keyVerbatim checks that the RSS hash key the guest's ethtool -x
// prints under "RSS hash key:" is in irqnuma topology -o json as it is,
// a string in ethtool's colon hex (the form ethtool -X hkey and irqnuma
// flow --rss-key take), not base64.
func keyVerbatim(ifname string, t steerTruth) {
	r := irqnuma("topology", "-o", "json")
	must("rss-key-json-run", r.code == 0, "%s", r)
	check("rss-key-json", t.rss.keyText != "" && strings.Contains(r.stdout, `"key": "`+t.rss.keyText+`"`),
		"ethtool -x %s's key %q in irqnuma topology -o json: not found\n%s", ifname, t.rss.keyText, t.text["-x"])
}

// steerCleanup puts back what the scenario changed: threaded NAPI off,
// the default table, every queue pair, and each IRQ's affinity.
func steerCleanup(n *nic, before map[int]string) {
	if err := os.WriteFile("/sys/class/net/"+n.Name+"/threaded", []byte("0"), 0); err != nil {
		check("cleanup-threaded", false, "write 0 to /sys/class/net/%s/threaded: %v", n.Name, err)
	}
	for _, args := range [][]string{{"-L", n.Name, "combined", strconv.Itoa(n.QueuePairs)}, {"-X", n.Name, "default"}} {
		if out, err := runOut("/bin/ethtool", args...); err != nil {
			check("cleanup", false, "ethtool %s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	for irq, list := range before {
		if affinityList(irq) != list {
			writeAffinity(irq, list)
		}
	}
	diff := diffAffinities(before, affinities())
	check("cleanup-affinities", len(diff) == 0, "every smp_affinity_list as before the scenario; differences: %v", diff)
}

func setThreaded(ifname string, v int) {
	err := os.WriteFile("/sys/class/net/"+ifname+"/threaded", []byte(strconv.Itoa(v)), 0)
	must(fmt.Sprintf("threaded-%d", v), err == nil, "write %d to /sys/class/net/%s/threaded: %v", v, ifname, err)
}

// napiThreads maps each NAPI id of ifname's napi/IF-ID kernel threads to
// the threads' pids, from /proc/PID/comm. virtio_net's tx NAPIs are not
// hashed and have id 0: their threads are all napi/IF-0.
func napiThreads(ifname string) map[uint32][]int {
	out := map[uint32][]int{}
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, c := range comms {
		id, ok := strings.CutPrefix(readFile(c), "napi/"+ifname+"-")
		if !ok {
			continue
		}
		napi, err1 := strconv.ParseUint(id, 10, 32)
		pid, err2 := strconv.Atoi(filepath.Base(filepath.Dir(c)))
		if err1 == nil && err2 == nil {
			out[uint32(napi)] = append(out[uint32(napi)], pid)
		}
	}
	return out
}

// napiByQueue finds each rx queue's NAPI id without netlink: the table
// sends every flow to queue q (ethtool -X weight with q's weight alone),
// and a fresh socket's SO_INCOMING_NAPI_ID is the NAPI that received
// its first packet. The queue's own IRQ (virtioN-input.q) must fire.
func napiByQueue(l *lab, n *nic) map[int]uint32 {
	out := map[int]uint32{}
	rxIRQ := map[int]int{}
	for _, q := range n.queues() {
		if q.dir == "rx" {
			rxIRQ[q.queue] = q.irq
		}
	}
	for q := 0; q < n.QueuePairs; q++ {
		w := make([]string, n.QueuePairs)
		for i := range w {
			w[i] = "0"
		}
		w[q] = "1"
		ethtool(append([]string{"-X", n.Name, "weight"}, w...)...)
		b, _ := readInterrupts()
		got, id := rxNAPI(n, 9102+q)
		a, _ := readInterrupts()
		fired := total(delta(b, a, rxIRQ[q]))
		check(fmt.Sprintf("napi-id-queue%d", q), got > 0 && id != 0 && fired > 0,
			"table all queue %d: %d packets in, SO_INCOMING_NAPI_ID %d, IRQ %d (input.%d) fired %d times", q, got, id, rxIRQ[q], q, fired)
		out[q] = id
	}
	ethtool("-X", n.Name, "default")
	ids := map[uint32]bool{}
	for _, id := range out {
		ids[id] = true
	}
	check("napi-ids-distinct", len(ids) == n.QueuePairs, "queue NAPI ids %v", out)
	return out
}

// rxNAPI asks the namespace for 40 packets to port over 8 flows and
// returns how many arrived and the socket's SO_INCOMING_NAPI_ID.
func rxNAPI(n *nic, port int) (int, uint32) {
	data, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(n.ip()), Port: port})
	if err != nil {
		panic(err)
	}
	defer data.Close()
	req, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.ParseIP(n.Peer), Port: 9000})
	if err != nil {
		panic(err)
	}
	defer req.Close()
	b, _ := json.Marshal(map[string]int{"port": port, "count": 40, "flows": 8, "seconds": 2})
	if _, err := req.Write(b); err != nil {
		panic(err)
	}
	got := 0
	buf := make([]byte, 2048)
	for got < 40 {
		data.SetReadDeadline(time.Now().Add(3 * time.Second))
		if _, err := data.Read(buf); err != nil {
			break
		}
		got++
	}
	req.SetReadDeadline(time.Now().Add(5 * time.Second))
	req.Read(buf)
	raw, err := data.SyscallConn()
	if err != nil {
		panic(err)
	}
	var id int
	raw.Control(func(fd uintptr) {
		id, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_INCOMING_NAPI_ID)
	})
	if err != nil {
		info("napi-id", "getsockopt SO_INCOMING_NAPI_ID: %v", err)
	}
	return got, uint32(id)
}

// runOut runs a program and returns its combined output.
func runOut(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

// liveReading is irqnuma's reading of ifname on the live guest: steer.Read
// itself (the reader the CLI's -o json carries), and, once the CLI shows
// it, topology -o json's, which must equal it byte for byte (the queue
// counters aside: they move between two reads).
func liveReading(step, ifname string) (*steer.NIC, []byte) {
	nic, b := readRoot("/", ifname)
	if waits["cli"] == "" {
		cli, cb := steerDoc(ifname)
		check(step+"-cli", cli != nil && string(cb) == string(b), "irqnuma topology -o json:\n%s\nsteer.Read:\n%s", cb, b)
	}
	return nic, b
}

// readRoot is steer.Read of ifname on root ("/": the live guest), and
// its JSON without the queue counters.
func readRoot(root, ifname string) (*steer.NIC, []byte) {
	fsys, err := kfile.Open(root)
	if err != nil {
		must("open-root", false, "%s: %v", root, err)
	}
	defer fsys.Close()
	h, err := steer.Read(fsys, []string{ifname})
	if err != nil || h.NIC(ifname) == nil {
		must("steer-read", false, "steer.Read %s on %s: %v", ifname, root, err)
	}
	return h.NIC(ifname), steerJSON(h.NIC(ifname))
}

// steerJSON is a NIC's reading as JSON, without qstats.
func steerJSON(n *steer.NIC) []byte {
	c := *n
	c.QStats = nil
	b, err := json.Marshal(&c)
	if err != nil {
		must("steer-json", false, "%v", err)
	}
	return b
}

// steerDoc finds the steering irqnuma reports for ifname in `irqnuma
// [args] topology -o json`: the object with the NIC's name that carries
// the steer model's "sysfs" field, decoded into steer.NIC, and its JSON
// as steerJSON writes it.
func steerDoc(ifname string, args ...string) (*steer.NIC, []byte) {
	var doc any
	jsonOf(&doc, append(args, "topology")...)
	obj := findSteer(doc, ifname)
	must("reading-"+ifname, obj != nil, "no steering for %s in irqnuma %s topology -o json", ifname, strings.Join(args, " "))
	b, _ := json.Marshal(obj)
	var nic steer.NIC
	err := json.Unmarshal(b, &nic)
	must("reading-decode", err == nil, "%v\n%s", err, b)
	return &nic, steerJSON(&nic)
}

func findSteer(v any, ifname string) map[string]any {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["sysfs"]; ok && v["name"] == ifname {
			return v
		}
		for _, c := range v {
			if o := findSteer(c, ifname); o != nil {
				return o
			}
		}
	case []any:
		for _, c := range v {
			if o := findSteer(c, ifname); o != nil {
				return o
			}
		}
	}
	return nil
}

// compareReading checks irqnuma's reading of ifname against the guest's
// ethtool and sysfs, one check per part: against the agent's reading of
// ethtool's text, and against package steer's text parsers' (which must
// read the guest's ethtool as netlink does).
func compareReading(step, ifname string, t steerTruth) {
	got, _ := liveReading(step, ifname)
	for _, p := range []struct {
		name string
		diff []string
	}{
		{"channels", diffChannels(got, t)},
		{"rss", diffRSS(got, t)},
		{"features", diffFeatures(got, t)},
		{"rings", diffRings(got, t)},
		{"threaded", diffThreaded(got, t)},
		{"text-parsers", diffParsers(got, t)},
	} {
		check(step+"-"+p.name, len(p.diff) == 0, "irqnuma vs the guest's ethtool/sysfs: %v (unknown: %v)", p.diff, got.Unknown)
	}
}

// diffParsers compares the reading with steer.ParseEthtoolL, -G and -X
// of the same guest's text.
func diffParsers(got *steer.NIC, t steerTruth) []string {
	var d []string
	c, err := steer.ParseEthtoolL([]byte(t.text["-l"]))
	if err != nil || got.Channels == nil || *c != *got.Channels {
		d = append(d, fmt.Sprintf("ParseEthtoolL %+v (%v), reading %+v", c, err, got.Channels))
	}
	g, err := steer.ParseEthtoolG([]byte(t.text["-g"]))
	if err != nil || got.Rings == nil || !ringsAgree(*g, *got.Rings) {
		d = append(d, fmt.Sprintf("ParseEthtoolG %s (%v), reading %s", js(g), err, js(got.Rings)))
	}
	x, err := steer.ParseEthtoolX([]byte(t.text["-x"]))
	switch {
	case err != nil || got.RSS == nil:
		d = append(d, fmt.Sprintf("ParseEthtoolX: %v; reading %s", err, js(got.RSS)))
	case !slices.Equal(x.RSS.Table, got.RSS.Table) || !slices.Equal(x.RSS.Key, got.RSS.Key) || x.RSS.HashFunc != got.RSS.HashFunc || x.RSS.Rings != got.RSS.Rings:
		d = append(d, fmt.Sprintf("ParseEthtoolX %s (unknown %v), reading %s", js(x.RSS), x.Unknown, js(got.RSS)))
	}
	return d
}

// ringsAgree: the counts equal, and each setting the text shows (an
// ethtool prints only those it knows) equals the reading's.
func ringsAgree(text, nl steer.Rings) bool {
	base := func(r steer.Rings) [8]uint32 {
		return [8]uint32{r.MaxRX, r.MaxRXMini, r.MaxRXJumbo, r.MaxTX, r.RX, r.RXMini, r.RXJumbo, r.TX}
	}
	ok := base(text) == base(nl)
	u := func(a, b *uint32) bool { return a == nil || (b != nil && *a == *b) }
	ok = ok && u(text.RXBufLen, nl.RXBufLen) && u(text.CQESize, nl.CQESize) && u(text.HDSThresh, nl.HDSThresh) && u(text.HDSThreshMax, nl.HDSThreshMax)
	bl := func(a, b *bool) bool { return a == nil || (b != nil && *a == *b) }
	ok = ok && bl(text.TxPush, nl.TxPush) && bl(text.RxPush, nl.RxPush)
	return ok && (!text.TCPDataSplit.Known() || unknown.Same(text.TCPDataSplit, nl.TCPDataSplit))
}

func diffU32(out *[]string, what string, got uint32, text string) {
	want, err := ethU32(text)
	if err != nil || got != want {
		*out = append(*out, fmt.Sprintf("%s: irqnuma %d, ethtool %q", what, got, text))
	}
}

func diffChannels(got *steer.NIC, t steerTruth) []string {
	c := got.Channels
	if c == nil {
		return []string{"channels unknown"}
	}
	var d []string
	for _, f := range []struct {
		sec, key string
		v        uint32
	}{
		{"max", "RX", c.MaxRX}, {"max", "TX", c.MaxTX}, {"max", "Other", c.MaxOther}, {"max", "Combined", c.MaxCombined},
		{"current", "RX", c.RX}, {"current", "TX", c.TX}, {"current", "Other", c.Other}, {"current", "Combined", c.Combined},
	} {
		diffU32(&d, f.sec+" "+f.key, f.v, t.channels[f.sec][f.key])
	}
	return d
}

func diffRSS(got *steer.NIC, t steerTruth) []string {
	r := got.RSS
	if r == nil {
		return []string{"rss unknown"}
	}
	var d []string
	if !slices.Equal(r.Table, t.rss.table) {
		d = append(d, fmt.Sprintf("table: irqnuma %v, ethtool %v", r.Table, t.rss.table))
	}
	if !slices.Equal(r.Key, t.rss.key) {
		d = append(d, fmt.Sprintf("key: irqnuma %s, ethtool %s", r.Key, steer.Key(t.rss.key)))
	}
	if r.HashFunc != t.rss.hashFunc {
		d = append(d, fmt.Sprintf("hash function: irqnuma %q, ethtool %q", r.HashFunc, t.rss.hashFunc))
	}
	if r.Rings != t.rss.rings {
		d = append(d, fmt.Sprintf("rx rings: irqnuma %d, ethtool %d", r.Rings, t.rss.rings))
	}
	return d
}

func diffFeatures(got *steer.NIC, t steerTruth) []string {
	var d []string
	for name, w := range t.features {
		g, ok := got.Features[name]
		if !ok || g.On != w.on || g.Fixed != w.fixed {
			d = append(d, fmt.Sprintf("%s: irqnuma %+v (listed %v), ethtool on=%v fixed=%v", name, g, ok, w.on, w.fixed))
		}
	}
	for name := range got.Features {
		if name == "" && !landed("feature-") {
			continue
		}
		if _, ok := t.features[name]; !ok {
			d = append(d, name+": irqnuma lists it, ethtool -k does not")
		}
	}
	slices.Sort(d)
	return d
}

func diffRings(got *steer.NIC, t steerTruth) []string {
	r := got.Rings
	if r == nil {
		return []string{"rings unknown"}
	}
	var d []string
	for _, f := range []struct {
		sec, key string
		v        uint32
	}{
		{"max", "RX", r.MaxRX}, {"max", "RX Mini", r.MaxRXMini}, {"max", "RX Jumbo", r.MaxRXJumbo}, {"max", "TX", r.MaxTX},
		{"current", "RX", r.RX}, {"current", "RX Mini", r.RXMini}, {"current", "RX Jumbo", r.RXJumbo}, {"current", "TX", r.TX},
	} {
		diffU32(&d, f.sec+" "+f.key, f.v, t.rings[f.sec][f.key])
	}
	opt := func(key string, v *uint32) {
		text, printed := t.rings["current"][key]
		switch {
		case !printed && v != nil:
			d = append(d, fmt.Sprintf("%s: irqnuma %d, ethtool prints none", key, *v))
		case printed && v == nil && text != "n/a":
			d = append(d, fmt.Sprintf("%s: irqnuma none, ethtool %q", key, text))
		case printed && v != nil:
			diffU32(&d, key, *v, text)
		}
	}
	opt("RX Buf Len", r.RXBufLen)
	opt("CQE Size", r.CQESize)
	// ethtool prints "n/a" when the kernel sent no tcp-data-split (it
	// sends none while the driver's is ETHTOOL_TCP_DATA_SPLIT_UNKNOWN).
	s, printed := t.rings["current"]["TCP data split"]
	if s == "n/a" {
		printed = false
	}
	if printed != r.TCPDataSplit.Known() || (printed && s != string(r.TCPDataSplit.Or(""))) {
		d = append(d, fmt.Sprintf("tcp data split: irqnuma %v, ethtool %q", r.TCPDataSplit, s))
	}
	return d
}

func diffThreaded(got *steer.NIC, t steerTruth) []string {
	if got.Sysfs.Threaded == nil || *got.Sysfs.Threaded != t.threaded {
		return []string{fmt.Sprintf("threaded: irqnuma %v, sysfs %d", got.Sysfs.Threaded, t.threaded)}
	}
	return nil
}

// compareNAPI: on a kernel with netdev queue-get and napi-get, each rx
// queue's NAPI id is the one its packets arrive with and its kthread the
// napi/IF-ID thread; the queue names that NAPI where the driver links
// them (netif_queue_set_napi) and names none where it does not; the
// NAPI's IRQ is the queue's virtioN-input.Q where the driver ties one to
// it (netif_napi_set_irq_locked), and unknown, for want of the driver,
// where it does not: netdev_nl_napi_fill_one puts NETDEV_A_NAPI_IRQ only
// for napi->irq >= 0, and netif_napi_add leaves it -1. On a kernel
// without them, the reading says the kernel does not support them.
func compareNAPI(l *lab, n *nic, q2napi map[int]uint32, threads map[uint32]int) {
	got, _ := liveReading("napi", n.Name)
	if !netdevQueues(l) {
		for _, p := range []steer.Part{steer.PartQueues, steer.PartNAPI} {
			r, ok := got.Why(p)
			check("napi-unsupported-"+string(p), ok && r.Kind == unknown.KindKernel && len(got.Queues) == 0 && len(got.NAPIs) == 0,
				"kernel %s has no netdev queue-get/napi-get: irqnuma says %v %q", l.cfg.Release, ok, r)
		}
		return
	}
	rxIRQ := map[int]int{}
	for _, q := range n.queues() {
		if q.dir == "rx" {
			rxIRQ[q.queue] = q.irq
		}
	}
	napis := map[uint32]steer.NAPI{}
	for _, x := range got.NAPIs {
		napis[x.ID] = x
	}
	links, setsIRQ := l.cfg.LinksNAPI, l.cfg.SetsNAPIIRQ
	if links == nil {
		must("virtio-net-links-napi", false, "the host found no virtio_net module to read its imports")
	}
	for q, id := range q2napi {
		var qid uint32
		for _, g := range got.Queues {
			if g.Type == steer.QueueTypeRX && int(g.ID) == q {
				qid = g.NAPI
			}
		}
		x, listed := napis[id]
		var wantQID uint32 // the driver names no queue's NAPI: netlink none
		if *links {
			wantQID = id
		}
		ok := listed && x.PID == threads[id] && qid == wantQID
		switch {
		case setsIRQ == nil:
			// Before 6.15 netif_napi_set_irq was an inline store: the
			// imports cannot tell. Either is right if it is the queue's.
			ok = ok && (!x.IRQ.Known() || unknown.Is(x.IRQ, rxIRQ[q]))
		case *setsIRQ:
			ok = ok && unknown.Is(x.IRQ, rxIRQ[q])
		default:
			ok = ok && !x.IRQ.Known() && x.IRQ.Why() == steer.NoIRQ
		}
		check(fmt.Sprintf("napi-queue%d", q), ok,
			"queue %d: irqnuma queue NAPI %d, NAPI %d listed %v (IRQ %v, pid %d); the guest: NAPI %d (SO_INCOMING_NAPI_ID), IRQ %d (/proc/interrupts input.%d), pid %d (napi/%s-%d); virtio_net calls netif_queue_set_napi: %v, netif_napi_set_irq_locked: %s",
			q, qid, id, listed, x.IRQ, x.PID, id, rxIRQ[q], q, threads[id], n.Name, id, *links, fmtBool(setsIRQ))
	}
}

// netdevQueues reports whether the guest's kernel has netdev queue-get
// and napi-get (6.9 and later).
func netdevQueues(l *lab) bool { return kernelAtLeast(6, 9) }

// auditTable: with ethtool -X equal 2 on the 4-queue NIC, the audit
// names queues 2-3 as outside the table.
func auditTable(n *nic) {
	if !landed("audit-table") {
		return
	}
	var d struct {
		Findings []struct {
			Check   string `json:"check"`
			NIC     string `json:"nic"`
			Subject string `json:"subject"`
		} `json:"findings"`
	}
	jsonOf(&d, "audit", "--fail-on", "never", "--nic", n.Name)
	var got []string
	for _, f := range d.Findings {
		if f.Check == "rss-queue-unused" && f.NIC == n.Name {
			got = append(got, f.Subject)
		}
	}
	check("audit-queues-outside-table", slices.Equal(got, []string{"queues 2-3"}), "rss-queue-unused findings for %s: %q; all: %+v", n.Name, got, d.Findings)
}

// kthreadAffinity is a thread's affinity from sched_getaffinity.
func kthreadAffinity(pid int) cpus {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		must("sched_getaffinity", false, "pid %d: %v", pid, err)
	}
	var c cpus
	for i := 0; i < 64; i++ {
		if set.IsSet(i) {
			c |= 1 << i
		}
	}
	return c
}

func setKthreadAffinity(pid int, c cpus) {
	var set unix.CPUSet
	for _, id := range c.ids() {
		set.Set(id)
	}
	err := unix.SchedSetaffinity(pid, &set)
	must("sched_setaffinity", err == nil, "pid %d to %s: %v", pid, c, err)
}

// steerPin: threaded NAPI on, the NIC's IRQs and rx NAPI kthreads on
// the other node: the audit reports the kthreads, irq pin moves IRQs and kthreads
// to the NIC's node, irq restore brings both back exactly.
func steerPin(l *lab, n *nic, threads map[uint32]int) {
	// Without netdev napi-get (6.1) the audit finds the kthreads by name
	// in /proc, and irq pin moves those it cannot pair with a queue (6.1;
	// 6.12's virtio_net ties no NAPI to a queue or IRQ) with the NIC's
	// queue IRQs.
	auditOn, pinOn := landed("audit-napi"), landed("pin-napi")
	if !auditOn && !pinOn {
		return
	}
	var other cpus
	for id, c := range l.nodes {
		if id != n.node {
			other |= c
		}
	}
	for _, q := range n.queues() {
		if err := writeAffinity(q.irq, other.String()); err != nil {
			must("move-irq", false, "IRQ %d to %s: %v", q.irq, other, err)
		}
	}
	for _, pid := range threads {
		setKthreadAffinity(pid, other)
	}
	if auditOn {
		auditNAPI(n, threads)
	}
	if pinOn {
		pinNAPI(l, n, threads)
	}
}

func auditNAPI(n *nic, threads map[uint32]int) {
	var d struct {
		Findings []struct {
			Check string `json:"check"`
			NIC   string `json:"nic"`
			PID   int    `json:"pid"`
			TID   []int  `json:"tid"`
		} `json:"findings"`
	}
	jsonOf(&d, "audit", "--fail-on", "never", "--nic", n.Name)
	named := map[int]bool{}
	for _, f := range d.Findings {
		if f.NIC == n.Name && f.Check == "napi-thread-remote" {
			for _, t := range f.TID {
				named[t] = true
			}
		}
	}
	for id, pid := range threads {
		check(fmt.Sprintf("audit-napi-%d", id), named[pid], "napi/%s-%d (pid %d) on the other node: napi-thread-remote names it? audit findings %+v", n.Name, id, pid, d.Findings)
	}
}

func pinNAPI(l *lab, n *nic, threads map[uint32]int) {
	local := l.nodes[n.node]
	irqsBefore := affinities()
	// Every napi/IF-ID kthread of the NIC, the rx ones and virtio_net's
	// tx ones (napi/IF-0), which netdev does not list: pin moves them all
	// with the queue IRQs, and restore puts them all back.
	kBefore := map[int]cpus{}
	all := napiThreads(n.Name)
	for _, pids := range all {
		for _, pid := range pids {
			kBefore[pid] = kthreadAffinity(pid)
		}
	}
	for id, pid := range threads {
		if !slices.Contains(all[id], pid) {
			must("napi-pin-kthreads", false, "napi/%s-%d (pid %d) not among the NIC's kthreads %v", n.Name, id, pid, all)
		}
	}
	const state = "/tmp/lab-steer-pin.json"
	r := irqnuma("irq", "pin", n.Name, "--state", state)
	must("napi-pin", r.code == 0, "%s", r)
	info("napi-pin-output", "%s", strings.ReplaceAll(r.String(), "\n", " | "))
	for _, q := range n.queues() {
		aff := mustCPUs(affinityList(q.irq))
		check(fmt.Sprintf("napi-pin-irq%d", q.irq), aff != 0 && aff.within(local), "IRQ %d (%s %d) smp_affinity_list %s, node %d CPUs %s", q.irq, q.dir, q.queue, aff, n.node, local)
	}
	for id, pids := range all {
		for _, pid := range pids {
			a := kthreadAffinity(pid)
			check(fmt.Sprintf("napi-pin-kthread-%d-pid%d", id, pid), a != 0 && a.within(local), "napi/%s-%d (pid %d) affinity %s, node %d CPUs %s", n.Name, id, pid, a, n.node, local)
		}
	}
	r = irqnuma("irq", "restore", state)
	check("napi-restore-exit", r.code == 0, "%s", r)
	diff := diffAffinities(irqsBefore, affinities())
	check("napi-restore-irqs", len(diff) == 0, "smp_affinity_list as before the pin; differences: %v", diff)
	for pid, want := range kBefore {
		got := kthreadAffinity(pid)
		check(fmt.Sprintf("napi-restore-kthread-%d", pid), got == want, "pid %d affinity %s, before the pin %s", pid, got, want)
	}
}

// steerSnapshot: a snapshot of the guest, opened as a root, reads the
// NIC's steering byte for byte as the live guest does: steer.Read on the
// unpacked snapshot, and, once the CLI shows it, topology --root.
func steerSnapshot(n *nic) {
	const snap = "/tmp/lab-steer.tar.gz"
	_, live := readRoot("/", n.Name)
	r := irqnuma("snapshot", "-o", snap)
	must("snapshot", r.code == 0, "%s", r)
	dir, cleanup, err := snapshot.Open(context.Background(), snap, snapshot.Limits{})
	if err != nil {
		must("snapshot-open", false, "%v", err)
	}
	defer cleanup()
	_, got := readRoot(dir, n.Name)
	check("snapshot-reading", string(live) == string(got), "live:\n%s\nsnapshot:\n%s", live, got)
	if landed("cli") {
		_, cli := steerDoc(n.Name, "--root", snap)
		check("snapshot-cli", string(live) == string(cli), "live:\n%s\ntopology --root:\n%s", live, cli)
	}
}
