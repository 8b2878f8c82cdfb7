//go:build vmtest

package lab

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/render/report"
)

// scenarios are the agent's scenarios a run makes unless
// IRQNUMA_LAB_SCENARIOS names others, in the order it runs them; each
// must report at least one check on every kernel.
var scenarios = []string{"topology", "irq-list", "audit", "restore", "watch", "exec-mask", "snapshot", "attribution", "bench", "steer", "flow", "flow-bench", "zc", "cgroup", "tune"}

// TestLab boots every lab kernel and turns the agent's checks into one
// subtest per kernel and scenario. IRQNUMA_LAB_REFRESH=1 also rewrites
// testdata/hosts/lab-debian-<kernel>.tar.gz from the guests.
func TestLab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the lab needs root: it creates a network namespace and taps")
	}
	needTool(t, "qemu-system-x86_64", "qemu-system-x86")
	needTool(t, "ip", "iproute2")
	needTool(t, "iperf3", "iperf3")
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Fatalf("the lab needs /dev/net/tun for its taps: %v", err)
	}
	export := os.Getenv("IRQNUMA_LAB_REFRESH") == "1"
	// The failed checks again, last: a CI log that keeps only its head
	// and tail still names them (the iperf3 server's log and the other
	// scenarios' lines come between).
	var failed []string
	t.Cleanup(func() {
		if len(failed) > 0 {
			t.Logf("failed checks (%d):\n%s", len(failed), strings.Join(failed, "\n"))
		}
	})
	t0 := time.Now()
	bins := buildGuestBinaries(t, t.TempDir())
	var kernels []preparedKernel
	for _, k := range labKernels {
		pk := prepareKernel(t, k)
		t.Logf("kernel %s: %s %s (release %s), modules %v", pk.Name, pk.Package, pk.Version, pk.Release, baseNames(pk.Modules))
		for _, o := range kernels {
			if o.Name == pk.Name {
				t.Fatalf("%s (%s) and %s (%s) are both kernel %s: the lab's subtests and snapshots need one name each", o.Meta, o.Package, pk.Meta, pk.Package, pk.Name)
			}
		}
		kernels = append(kernels, pk)
	}
	t.Logf("prepared in %.1fs", time.Since(t0).Seconds())
	if export {
		staleSnapshots(t, kernels)
	}
	for _, k := range kernels {
		t.Run(k.Name, func(t *testing.T) {
			lines := runGuest(t, k, bins, export, 5*time.Minute)
			for _, f := range checkLines(t, lines) {
				failed = append(failed, k.Name+"/"+f)
			}
			benchOutput(t, k, lines)
			flowBenchOutput(t, k, lines)
			if export {
				writeExport(t, k, lines)
			}
		})
	}
}

// staleSnapshots logs each testdata/hosts/lab-debian-<kernel>.tar.gz of a
// kernel the lab no longer boots (the newest moved on, 7.3 to 7.4): a
// refresh writes the new kernel's beside it, and whether the old one, its
// goldens and its lab-README row stay is for whoever refreshes to decide.
func staleSnapshots(t *testing.T, kernels []preparedKernel) {
	paths, _ := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "hosts", "lab-debian-*.tar.gz"))
	for _, p := range paths {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "lab-debian-"), ".tar.gz")
		if !slices.ContainsFunc(kernels, func(k preparedKernel) bool { return k.Name == name }) {
			t.Logf("%s is of kernel %s, which the lab no longer boots: keep it (and say so in testdata/hosts/lab-README.md) or remove it with its goldens", p, name)
		}
	}
}

// runScenarios is $IRQNUMA_LAB_SCENARIOS split at commas, or scenarios
// when it is unset: the scenarios a run makes.
func runScenarios() []string {
	v := os.Getenv("IRQNUMA_LAB_SCENARIOS")
	if v == "" {
		return scenarios
	}
	return strings.Split(v, ",")
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

func mustCIDR(t *testing.T, s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkLines makes a subtest per scenario from the agent's lines and
// returns the failed ones, "scenario: check: first line of detail".
func checkLines(t *testing.T, lines []labLine) (failed []string) {
	by := map[string][]labLine{}
	for _, l := range lines {
		switch l.Kind {
		case "check", "info":
			by[l.Scenario] = append(by[l.Scenario], l)
		case "fatal":
			t.Errorf("agent: %s: %s", l.Scenario, l.Detail)
			failed = append(failed, l.Scenario+": agent: "+firstLine(l.Detail))
		case "boot", "done":
			t.Logf("guest %s at uptime %.1fs", l.Kind, l.Uptime)
		}
	}
	for _, s := range scenarios {
		if !slices.Contains(runScenarios(), s) {
			continue
		}
		t.Run(s, func(t *testing.T) {
			n := 0
			for _, l := range by[s] {
				switch {
				case l.Kind == "info":
					t.Logf("%s: %s", l.Check, l.Detail)
				case l.OK:
					n++
					first, _, _ := strings.Cut(l.Detail, "\n")
					t.Logf("ok %s: %s", l.Check, first)
				default:
					n++
					t.Errorf("FAIL %s: %s", l.Check, l.Detail)
					failed = append(failed, s+": "+l.Check+": "+firstLine(l.Detail))
				}
			}
			if n == 0 {
				t.Errorf("scenario %s reported no checks", s)
				failed = append(failed, s+": reported no checks")
			}
		})
	}
	return failed
}

// firstLine is s up to its first newline, at most 300 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// sentFile is a file the guest sent in base64 chunks, nil when none.
func sentFile(t *testing.T, lines []labLine, name string) []byte {
	var b64 strings.Builder
	for _, l := range lines {
		if l.Kind == "file" && l.Name == name {
			b64.WriteString(l.Data)
		}
	}
	data, err := base64.StdEncoding.DecodeString(b64.String())
	if err != nil {
		t.Errorf("guest's %s: %v", name, err)
	}
	return data
}

// benchOutput shows the bench scenario's result as irqnuma bench's
// table, rendered from the JSON the guest sent; with IRQNUMA_LAB_OUT=DIR
// it also writes the table and the guest's SVG there as
// bench-debian-<kernel>.{txt,svg}, and the watch scenario's text as
// watch-debian-<kernel>.txt.
func benchOutput(t *testing.T, k preparedKernel, lines []labLine) {
	data := sentFile(t, lines, "bench.json")
	if len(data) == 0 {
		return
	}
	var doc report.BenchDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Errorf("bench JSON: %v", err)
		return
	}
	var table bytes.Buffer
	if err := report.WriteBench(&table, doc); err != nil {
		t.Errorf("bench table: %v", err)
	}
	t.Logf("irqnuma bench in the %s guest:\n%s", k.Name, table.String())
	dir := os.Getenv("IRQNUMA_LAB_OUT")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Error(err)
		return
	}
	base := filepath.Join(dir, "bench-debian-"+k.Name)
	for ext, b := range map[string][]byte{".txt": table.Bytes(), ".svg": sentFile(t, lines, "bench.svg")} {
		if err := os.WriteFile(base+ext, b, 0o644); err != nil {
			t.Error(err)
		}
	}
	if w := sentFile(t, lines, "watch.txt"); len(w) > 0 {
		if err := os.WriteFile(filepath.Join(dir, "watch-debian-"+k.Name+".txt"), w, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// flowBenchOutput shows the flow-bench scenario's benches (its flow
// given with --flow, then found with --observe) as irqnuma bench's
// tables; with IRQNUMA_LAB_OUT=DIR it writes them there as
// flowbench-<how>-debian-<kernel>.txt.
func flowBenchOutput(t *testing.T, k preparedKernel, lines []labLine) {
	for _, how := range []string{"flow", "observe"} {
		data := sentFile(t, lines, how+"-bench.json")
		if len(data) == 0 {
			continue
		}
		var doc report.BenchDoc
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Errorf("flow bench (%s) JSON: %v", how, err)
			continue
		}
		var table bytes.Buffer
		if err := report.WriteBench(&table, doc); err != nil {
			t.Errorf("flow bench (%s) table: %v", how, err)
		}
		t.Logf("irqnuma bench of the flow placements (%s) in the %s guest:\n%s", how, k.Name, table.String())
		if dir := os.Getenv("IRQNUMA_LAB_OUT"); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Error(err)
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, "flowbench-"+how+"-debian-"+k.Name+".txt"), table.Bytes(), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
}

// writeExport writes the guest's snapshot, sent in base64 chunks, to
// testdata/hosts/lab-debian-<kernel>.tar.gz.
func writeExport(t *testing.T, k preparedKernel, lines []labLine) {
	data := sentFile(t, lines, "snapshot")
	if len(data) == 0 {
		t.Fatalf("guest sent no usable snapshot")
	}
	p := filepath.Join(repoRoot(t), "testdata", "hosts", "lab-debian-"+k.Name+".tar.gz")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", p, len(data))
}
