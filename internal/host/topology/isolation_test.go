package topology

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestCmdlineIsolation reads isolcpus=, nohz_full= and irqaffinity= as
// kernel/sched/isolation.c and kernel/irq/irqdesc.c do: every flag form,
// and what the kernel skips or ignores (a note each, never an error).
func TestCmdlineIsolation(t *testing.T) {
	tests := []struct {
		give                        string
		last                        int // the CPU "N" stands for
		domain, managed, nohz, irqs string
		hasIRQs                     bool
		notes                       []string // a part of each note, in order
	}{
		{give: "ro quiet"},
		{give: "isolcpus=1-3", domain: "1-3"},
		{give: "isolcpus=domain,1-3", domain: "1-3"},
		{give: "isolcpus=nohz,domain,managed_irq,1-3", domain: "1-3", managed: "1-3", nohz: "1-3"},
		{give: "isolcpus=managed_irq,0-4,11-79 nohz_full=0-4,11-79", managed: "0-4,11-79", nohz: "0-4,11-79"},
		{give: "isolcpus=managed_irq,domain,10-11 nohz_full=10-11 rcu_nocbs=10-11", domain: "10-11", managed: "10-11", nohz: "10-11"},
		{give: "isolcpus=nohz,2-3", nohz: "2-3"},
		{give: "nohz-full=1 isolcpus=0-7:2/4", domain: "0-1,4-5", nohz: "1",
			notes: []string{"isolcpus=0-7:2/4 (isolcpus domain) and nohz-full=1 (nohz_full) name different CPUs"}},
		{give: "nohz_full=2-N", last: 7, nohz: "2-7"},
		{give: "isolcpus=N", last: 7, notes: []string{`isolcpus=N: no CPU list after "N"`}},
		{give: "nohz_full=1-N", last: -1, notes: []string{`nohz_full=1-N: cpu list "1-N": "N" (the last CPU) with the CPU count unknown: the kernel ignores it`}},
		{give: "isolcpus=foo,2-3", domain: "2-3", notes: []string{`isolcpus=foo,2-3: unknown flag "foo" skipped`}},
		{give: "isolcpus=managed_irq,foo_bar,2-3", managed: "2-3", notes: []string{`unknown flag "foo_bar" skipped`}},
		{give: "isolcpus=managed_irq,bad-flag,2-3", notes: []string{`flag "bad-flag" is not a word: the kernel ignores the parameter`}},
		{give: "isolcpus=domain", notes: []string{`isolcpus=domain: no CPU list after "domain"`}},
		{give: "isolcpus=domain,", notes: []string{"isolcpus=domain, names no CPU"}},
		{give: "isolcpus=", notes: []string{"isolcpus= names no CPU"}},
		{give: "isolcpus=1-3,", notes: []string{`isolcpus=1-3,: cpu list "1-3,": empty element`}},
		{give: "isolcpus=3-1 nohz_full=x", notes: []string{"isolcpus=3-1: cpu list", "nohz_full=x: cpu list"}},
		{give: "isolcpus==1", notes: []string{`isolcpus==1: cpu list "=1"`}},
		{give: `isolcpus="1-2"`, domain: "1-2"},
		{give: "isolcpus=nohz,2-3 nohz_full=4-5", nohz: "2-3",
			notes: []string{`nohz_full=4-5: the kernel ignores it, as isolcpus=nohz,2-3 already set the nohz_full CPUs to 2-3`}},
		{give: "isolcpus=2-3 isolcpus=managed_irq,2-3 isolcpus=4", domain: "2-3", managed: "2-3",
			notes: []string{"isolcpus=4: the kernel ignores it, as isolcpus=2-3 already set the isolcpus domain CPUs to 2-3"}},
		{give: "irqaffinity=0-1", irqs: "0-1", hasIRQs: true},
		{give: "irqaffinity=0-1 irqaffinity=2", irqs: "2", hasIRQs: true},
		{give: "irqaffinity=0-1 irqaffinity=x", hasIRQs: true, notes: []string{`irqaffinity=x: cpu list "x": bad number "x": invalid syntax: the default IRQ affinity is unknown`}},
		{give: "irqaffinity=", hasIRQs: true, notes: []string{"irqaffinity= names no CPU"}},
		{give: "ro -- isolcpus=1-3 nohz_full=1-3"},
		{give: "isolcpus nohz_full irqaffinity"},
	}
	for _, tt := range tests {
		got := ParseCmdline(tt.give).Isolation(tt.last)
		for _, s := range []struct {
			name     string
			got      cpuset.Set
			wantList string
		}{
			{"Domain", got.Domain, tt.domain}, {"ManagedIRQ", got.ManagedIRQ, tt.managed},
			{"NohzFull", got.NohzFull, tt.nohz}, {"IRQAffinity", got.IRQAffinity.Or(cpuset.Set{}), tt.irqs},
		} {
			if want := list(t, s.wantList); !s.got.Equal(want) {
				t.Errorf("Isolation(%q).%s = %q, want %q", tt.give, s.name, s.got, want)
			}
		}
		// hasIRQs: irqaffinity= was given, so an empty set is an unknown one.
		if unknownIRQs := !got.IRQAffinity.Known(); unknownIRQs != (tt.hasIRQs && tt.irqs == "") {
			t.Errorf("Isolation(%q).IRQAffinity = %v, want known %v", tt.give, got.IRQAffinity, !unknownIRQs)
		}
		if len(got.Notes) != len(tt.notes) {
			t.Errorf("Isolation(%q).Notes = %q, want %d notes like %q", tt.give, got.Notes, len(tt.notes), tt.notes)
			continue
		}
		for i, n := range got.Notes {
			if !strings.Contains(n, tt.notes[i]) {
				t.Errorf("Isolation(%q).Notes[%d] = %q, want it to contain %q", tt.give, i, n, tt.notes[i])
			}
		}
	}
	var none *Cmdline
	if got := none.Isolation(7); !got.Domain.IsEmpty() || !got.IRQAffinity.Or(cpuset.New(0)).IsEmpty() || got.Notes != nil {
		t.Errorf("nil Cmdline: Isolation = %+v, want nothing", got)
	}
}

// FuzzCmdlineIsolation: any command line is read without a panic, and
// what the kernel would ignore is said in a note rather than dropped.
func FuzzCmdlineIsolation(f *testing.F) {
	for _, s := range []string{"isolcpus=managed_irq,0-4,11-79 nohz_full=0-4,11-79", "isolcpus=nohz,domain,1-N:2/4",
		"isolcpus=a,b_c,d-e,1", "irqaffinity=0-N", `isolcpus="domain,1"`, "isolcpus=domain"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := ParseCmdline(s)
		ci := c.Isolation(63)
		asked := false
		for _, p := range c.Params {
			k := paramKey(p.Name)
			asked = asked || p.Set && (k == "isolcpus" || k == "nohz_full")
		}
		set := ci.Domain.Union(ci.ManagedIRQ).Union(ci.NohzFull)
		if asked && set.IsEmpty() && len(ci.Notes) == 0 {
			t.Fatalf("Isolation(%q): no CPU and no note", s)
		}
		if !asked && !set.IsEmpty() {
			t.Fatalf("Isolation(%q) = %+v without isolcpus= or nohz_full=", s, ci)
		}
	})
}

// TestIsolationFromCmdlineRealHost: cnto-worker1 (an OpenShift worker)
// booted with isolcpus=managed_irq,0-4,11-79 nohz_full=0-4,11-79, and its
// capture has no cpu/isolated or cpu/nohz_full: the isolated CPUs come
// from /proc/cmdline and say so. managed_irq has no domain flag, so
// cpu/isolated would be empty on the live host too.
func TestIsolationFromCmdlineRealHost(t *testing.T) {
	realhosts.Require(t)
	c := realhosts.MustLookup(t, "cnto-worker1")
	h, err := Read(hosttest.Open(t, realhosts.Root(t, c)))
	if err != nil {
		t.Fatal(err)
	}
	want := list(t, "0-4,11-79")
	if !h.IsolatedCPUs().Equal(want) || !h.ManagedIRQ.Equal(want) || !h.NohzFull.Equal(want) || !h.Isolated.IsEmpty() {
		t.Errorf("isolated %s (domain %q, managed_irq %s, nohz_full %s), want %s from managed_irq and nohz_full, no domain",
			h.IsolatedCPUs(), h.Isolated, h.ManagedIRQ, h.NohzFull, want)
	}
	wantFrom := IsolationSources{Isolated: unknown.Of(SourceCmdline), NohzFull: unknown.Of(SourceCmdline), ManagedIRQ: unknown.Of(SourceCmdline), IRQAffinity: unknown.Of(SourceCmdline)}
	if h.IsolationFrom != wantFrom {
		t.Errorf("IsolationFrom = %+v, want %+v", h.IsolationFrom, wantFrom)
	}
	if !h.IRQAffinity.IsEmpty() {
		t.Errorf("IRQAffinity = %s, want empty (no irqaffinity=)", h.IRQAffinity)
	}
	n := 0
	for _, cpu := range h.CPUs {
		if cpu.Isolated {
			n++
		}
	}
	if n != 74 {
		t.Errorf("%d CPUs flagged isolated, want 74 (0-4 and 11-79)", n)
	}
}

// TestIsolationUnknownRealHost: hwloc-48amd64's capture has neither
// cpu/isolated, cpu/nohz_full nor /proc/cmdline: isolation is unknown and
// a note says so.
func TestIsolationUnknownRealHost(t *testing.T) {
	realhosts.Require(t)
	c := realhosts.MustLookup(t, "hwloc-48amd64-4pa2n6c-sparse")
	h, err := Read(hosttest.Open(t, realhosts.Root(t, c)))
	if err != nil {
		t.Fatal(err)
	}
	f := h.IsolationFrom
	if f.Isolated.Known() || f.NohzFull.Known() || f.ManagedIRQ.Known() || f.IRQAffinity.Known() || h.Cmdline.Known() || !h.IsolatedCPUs().IsEmpty() {
		t.Errorf("IsolationFrom = %+v, Cmdline %v, isolated %s; want every source unknown", h.IsolationFrom, h.Cmdline, h.IsolatedCPUs())
	}
	if !hasNote(h, "isolated CPUs unknown") {
		t.Errorf("notes %q, want one saying isolated CPUs are unknown", h.Notes)
	}
}

// TestIsolationSysfsAndCmdline: offline-2node has cpu/isolated and
// cpu/nohz_full 10-11 and boots with isolcpus=managed_irq,domain,10-11
// nohz_full=10-11: they agree. Changed so the command line asks for other
// CPUs, sysfs (what the running kernel applied) wins and a note says so.
func TestIsolationSysfsAndCmdline(t *testing.T) {
	root := hosttest.Copy(t, "offline-2node")
	h, err := Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	ten := list(t, "10-11")
	if !h.Isolated.Equal(ten) || !h.NohzFull.Equal(ten) || !h.ManagedIRQ.Equal(ten) {
		t.Errorf("isolated %s, nohz_full %s, managed_irq %s, want 10-11 each", h.Isolated, h.NohzFull, h.ManagedIRQ)
	}
	want := IsolationSources{Isolated: unknown.Of(SourceSysfs), NohzFull: unknown.Of(SourceSysfs), ManagedIRQ: unknown.Of(SourceCmdline), IRQAffinity: unknown.Of(SourceCmdline)}
	if h.IsolationFrom != want {
		t.Errorf("IsolationFrom = %+v, want %+v", h.IsolationFrom, want)
	}
	if hasNote(h, "cmdline") {
		t.Errorf("notes %q, want none about the command line when it agrees", h.Notes)
	}

	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/cmdline", "ro isolcpus=managed_irq,domain,12-15,99 nohz_full=10-11 irqaffinity=0-1\n")
	if h, err = Read(hosttest.Open(t, root)); err != nil {
		t.Fatal(err)
	}
	if !h.Isolated.Equal(ten) || !h.ManagedIRQ.Equal(list(t, "12-15")) || !h.IRQAffinity.Equal(list(t, "0-1")) {
		t.Errorf("isolated %s, managed_irq %s, irqaffinity %s; want 10-11 from sysfs, 12-15 and 0-1 from the command line",
			h.Isolated, h.ManagedIRQ, h.IRQAffinity)
	}
	if !hasNote(h, "cpu/isolated says 10-11 but /proc/cmdline's isolcpus= asks 12-15: cpu/isolated is used") ||
		!hasNote(h, "names CPUs 99 this host does not have") {
		t.Errorf("notes %q, want the disagreement and the missing CPU said", h.Notes)
	}

	// Without the sysfs files the command line is all there is.
	for _, f := range []string{"isolated", "nohz_full"} {
		if err := os.Remove(filepath.Join(root, "sys/devices/system/cpu", f)); err != nil {
			t.Fatal(err)
		}
	}
	if h, err = Read(hosttest.Open(t, root)); err != nil {
		t.Fatal(err)
	}
	if !h.Isolated.Equal(list(t, "12-15")) || !unknown.Is(h.IsolationFrom.Isolated, SourceCmdline) || !unknown.Is(h.IsolationFrom.NohzFull, SourceCmdline) {
		t.Errorf("isolated %s from %s, nohz_full from %s; want 12-15, both from the command line", h.Isolated, h.IsolationFrom.Isolated, h.IsolationFrom.NohzFull)
	}
	if c, _ := h.CPU(13); !c.Isolated {
		t.Errorf("CPU 13 = %+v, want isolated", c)
	}
}

func hasNote(h *Host, part string) bool {
	for _, n := range h.Notes {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}
