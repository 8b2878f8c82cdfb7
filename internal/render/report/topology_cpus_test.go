package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// TestWriteTopologyLongCPUList: dell-2numa's nodes are the even and the
// odd CPUs 0-103, a list of 181 bytes each; the table shows it whole,
// wrapped after commas onto the rows below, never cut (it printed
// "0,2,4,…,66...(56 more bytes)").
func TestWriteTopologyLongCPUList(t *testing.T) {
	c := realhosts.MustLookup(t, "dell-2numa")
	h, err := topology.Read(hosttest.Open(t, realhosts.Root(t, c)))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := irq.Load(h, irq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTopology(&b, Topology(h, tb)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "more bytes") {
		t.Errorf("a cell was cut:\n%s", out)
	}
	// The CPUS column, read down each node's rows, is the node's list.
	header, rest, _ := strings.Cut(out, "\n")
	at, end := strings.Index(header, "CPUS"), strings.Index(header, "ONLINE")
	got := map[string]string{}
	node := ""
	for line := range strings.SplitSeq(rest, "\n") {
		if line == "" {
			break
		}
		if id := strings.TrimSpace(line[:at]); id != "" {
			node = id
		}
		if len(line) > 120 {
			t.Errorf("line of %d columns: %q", len(line), line)
		}
		got[node] += strings.TrimSpace(line[at:min(end, len(line))])
	}
	want := map[string]cpuset.Set{}
	for _, n := range h.Nodes {
		want[strconv.Itoa(n.ID)] = n.CPUs
	}
	if len(got) != 2 || len(want) != 2 {
		t.Fatalf("nodes %q, want two:\n%s", got, out)
	}
	for id, cpus := range want {
		if got[id] != cpus.List() {
			t.Errorf("node %s CPUs = %q, want %q:\n%s", id, got[id], cpus.List(), out)
		}
	}
}
