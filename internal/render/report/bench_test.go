package report

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/run/bench"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/schematest"
	"github.com/irqnuma/irqnuma/internal/testsupport/watchtest"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

// goldenFile compares got with testdata/golden/<name>, or rewrites it
// with -update.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	path := hosttest.Path("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (go test ./report -update writes it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

// seedStory is a made-up but plausible matrix on the seed host, in
// Gbit/s: the published 93 Gbit/s with both ends on the NIC's node, 62.6
// with the application on the softirq's cores, and less off the node.
var seedStory = map[string]float64{
	"local": 93.1, "local+membind": 93.4, "shared": 62.6, "app-remote": 71.0, "irq-remote": 55.2, "remote": 48.9,
}

// storyBench runs the default matrix on a copy of the seed with a fake
// iperf3: each run adds, to the tree's counters, the CPU time and the
// interrupts such a run would cause where bench placed it, and prints
// the story's throughput; a clock that ticks a second per reading makes
// every interval one second.
func storyBench(t *testing.T) *bench.Result {
	t.Helper()
	root := hosttest.Copy(t, "seed")
	tree := watchtest.Tree{T: t, Root: root}
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	names := map[string]string{}
	exec := func(ctx context.Context, p sched.Placement, args []string, s sched.Streams) (int, error) {
		var irqCPUs cpuset.Set // where the queue IRQs are now
		for n := 284; n <= 299; n++ {
			b, _ := os.ReadFile(filepath.Join(root, "proc/irq", fmt.Sprint(n), "smp_affinity_list"))
			c, _ := cpuset.ParseList(strings.TrimSpace(string(b)))
			irqCPUs = irqCPUs.Union(c)
		}
		b, _ := os.ReadFile(filepath.Join(root, "proc/irq/284/smp_affinity_list"))
		soft, _ := cpuset.ParseList(strings.TrimSpace(string(b)))
		softCPU, _ := soft.Min()
		app, _ := p.CPUs.Min()
		name, ok := names[p.CPUs.String()+"/"+irqCPUs.String()+"/"+p.MemNodes.String()]
		if !ok {
			t.Fatalf("a run on CPUs %s, memory %s, with the IRQs on %s is no cell's", p.CPUs, p.MemNodes, irqCPUs)
		}
		tree.AddStat(app, map[int]uint64{watchtest.User: 3, watchtest.System: 82, watchtest.Softirq: 5, watchtest.Idle: 10})
		tree.AddStat(softCPU, map[int]uint64{watchtest.Softirq: 37, watchtest.Idle: 63})
		tree.AddIRQ(284, softCPU, 120_000)
		tree.AddSoftirq("NET_RX", softCPU, 400_000)
		gbps := seedStory[name]
		fmt.Fprintf(s.Stdout, `{"end":{"sum_sent":{"bits_per_second":%g,"retransmits":%d},"sum_received":{"bits_per_second":%g}}}`,
			gbps*1.001e9, int(100-gbps), gbps*1e9)
		return 0, nil
	}
	cells, _ := bench.ParseCells("default")
	cmd := []string{"iperf3", "-c", "192.0.2.1", "-t", "10", "-J"}
	p, err := bench.NewParser(cmd, "", "")
	if err != nil {
		t.Fatal(err)
	}
	req := bench.Request{Root: hosttest.Open(t, root), NIC: "eth0", Cells: cells, Repeat: 1, Command: cmd, Parser: p, Writer: tune.FileWriter{},
		Exec: exec, Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
	// The placements' CPUs say which cell a run is in.
	dry := req
	dry.DryRun = true
	plan, err := bench.Run(context.Background(), dry)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range plan.Plan.Cells {
		names[c.AppCPUs.String()+"/"+c.IRQCPUs.String()+"/"+c.MemNodes.String()] = c.Name
	}
	res, err := bench.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestWriteBench renders the seed's story as the table and the SVG
// (golden), and the JSON document reads back into the same table.
func TestWriteBench(t *testing.T) {
	doc := NewBenchDoc(storyBench(t))
	var table, svg bytes.Buffer
	if err := WriteBench(&table, doc); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "bench/seed-story.txt", table.Bytes())
	if err := WriteBenchSVG(&svg, doc); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "bench/seed-story.svg", svg.Bytes())
	dec := xml.NewDecoder(bytes.NewReader(svg.Bytes()))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}

	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var back BenchDoc
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := WriteBench(&again, back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(table.String(), again.String()); diff != "" {
		t.Errorf("the table from the JSON document differs (-direct +from JSON):\n%s", diff)
	}
	// The document bench -o json writes of a whole run, measured CPUs and
	// the NIC's verdicts included, is what its schema says.
	var out bytes.Buffer
	if err := WriteBenchAs(&out, doc, true); err != nil {
		t.Fatal(err)
	}
	if got := schematest.Load(t).Validate(t, "bench -o json of the seed's story", out.Bytes()); got != "bench.v2" {
		t.Errorf("bench -o json names %s, want bench.v2", got)
	}
}
