package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// buildStatic builds the Go package dir into bin the way make build does
// (static, trimmed, stripped), so sizes and start-up costs compare.
func buildStatic(b *testing.B, dir, bin string) {
	b.Helper()
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", dir, err, out)
	}
}

// pairedRuns runs each command once per round, in turn, for rounds
// rounds, and returns each one's median wall time (fork, exec, run,
// wait) and the median of its per-round ratio to the first command.
func pairedRuns(b *testing.B, rounds int, cmds ...[]string) (medians []time.Duration, ratios []float64) {
	b.Helper()
	times := make([][]time.Duration, len(cmds))
	rs := make([][]float64, len(cmds))
	for range rounds {
		var base time.Duration
		for i, c := range cmds {
			cmd := exec.Command(c[0], c[1:]...)
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%v: %v", c, err)
			}
			d := time.Since(t0)
			if i == 0 {
				base = d
			}
			times[i] = append(times[i], d)
			rs[i] = append(rs[i], float64(d)/float64(base))
		}
	}
	for i := range cmds {
		slices.Sort(times[i])
		slices.Sort(rs[i])
		medians = append(medians, times[i][rounds/2])
		ratios = append(ratios, rs[i][rounds/2])
	}
	return medians, ratios
}

// BenchmarkStartup measures the built binary on this machine's own /proc
// and /sys against the C tools that print the same (issue 40): irq list
// against util-linux's lsirq, topology against numactl -H, and --version
// against a hello-world Go binary built the same way; and topology
// against hwloc's lstopo-no-graphics when installed. Each pair runs in
// turn for rounds rounds, and the medians of the times and of the
// per-round ratios are reported. A peer not installed is left out,
// saying so. irqnuma-exporter --version, which does nothing but start
// (the client library's and its collectors' initialisation), shows what
// the CLI would pay at each start if it linked prometheus/client_golang
// (TestCLINoClientGolang).
func BenchmarkStartup(b *testing.B) {
	if _, err := os.Stat("/proc/interrupts"); err != nil {
		b.Skip("no live /proc")
	}
	dir := b.TempDir()
	hello := filepath.Join(dir, "hello")
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "src", "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644)
	buildStatic(b, filepath.Join(dir, "src"), hello)
	bin := filepath.Join(dir, "irqnuma")
	buildStatic(b, ".", bin)
	exp := filepath.Join(dir, "irqnuma-exporter")
	buildStatic(b, "../irqnuma-exporter", exp)
	const rounds = 201
	pairs := []struct {
		metric string   // the ratio's name: irqnuma's ÷ the peer's
		peer   []string // the peer, its binary looked up in PATH
		cmd    []string // irqnuma's arguments
	}{
		{"version/hello", []string{hello}, []string{"--version"}},
		{"irq-list/lsirq", []string{"lsirq"}, []string{"irq", "list"}},
		{"topology/numactl-H", []string{"numactl", "-H"}, []string{"topology"}},
		{"topology/lstopo", []string{"lstopo-no-graphics"}, []string{"topology"}},
	}
	for b.Loop() {
		for _, p := range pairs {
			peer, err := exec.LookPath(p.peer[0])
			if err != nil {
				b.Logf("%s: %v: left out", p.metric, err)
				continue
			}
			name, _, _ := strings.Cut(p.metric, "/")
			med, ratio := pairedRuns(b, rounds, append([]string{peer}, p.peer[1:]...), append([]string{bin}, p.cmd...))
			b.ReportMetric(float64(med[0].Microseconds()), strings.TrimPrefix(p.metric, name+"/")+"-µs")
			b.ReportMetric(float64(med[1].Microseconds()), name+"-µs")
			b.ReportMetric(ratio[1], p.metric)
		}
		med, ratio := pairedRuns(b, rounds, []string{hello}, []string{exp, "--version"})
		b.ReportMetric(float64(med[1].Microseconds()), "exporter-version-µs")
		b.ReportMetric(ratio[1], "exporter-version/hello")
	}
}
