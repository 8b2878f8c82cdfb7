package irqbalance

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// shippedDefault is /etc/default/irqbalance as Debian's irqbalance
// 1.9.2-1 ships it (testdata/env/README).
func shippedDefault(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("testdata/env/debian-default")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAddBannedIRQs(t *testing.T) {
	debianDefault := shippedDefault(t)
	tests := []struct {
		name      string
		give      string
		inherited []string
		irqs      []int
		want      string
		wantAdded []int
	}{
		{name: "Debian's file: a line added", give: debianDefault, irqs: []int{38, 37, 38},
			want:      debianDefault + AddedComment + "\nIRQBALANCE_ARGS=\"--banirq=37 --banirq=38\"\n",
			wantAdded: []int{37, 38}},
		{name: "absent: the line, with what the files before set", give: "", inherited: []string{"--journal"}, irqs: []int{5},
			want: AddedComment + "\nIRQBALANCE_ARGS=\"--journal --banirq=5\"\n", wantAdded: []int{5}},
		{name: "no final newline", give: "IRQBALANCE_ONESHOT=1", irqs: []int{5},
			want: "IRQBALANCE_ONESHOT=1\n" + AddedComment + "\nIRQBALANCE_ARGS=\"--banirq=5\"\n", wantAdded: []int{5}},
		{name: "the last assignment changes, quotes kept, the rest byte for byte",
			give: "IRQBALANCE_ARGS=\"--banirq=1\"\n  export IRQBALANCE_ARGS='-j --banirq=5'  \r\nX=1\n", irqs: []int{5, 6},
			want: "IRQBALANCE_ARGS=\"--banirq=1\"\n  export IRQBALANCE_ARGS='-j --banirq=5 --banirq=6'  \r\nX=1\n", wantAdded: []int{6}},
		{name: "unquoted: put in double quotes", give: "IRQBALANCE_ARGS=-j\n", irqs: []int{7},
			want: "IRQBALANCE_ARGS=\"-j --banirq=7\"\n", wantAdded: []int{7}},
		{name: "empty value", give: "IRQBALANCE_ARGS=\"\"\n", irqs: []int{7},
			want: "IRQBALANCE_ARGS=\"--banirq=7\"\n", wantAdded: []int{7}},
		{name: "banned already: unchanged", give: "IRQBALANCE_ARGS=\"-i 7 --banirq=8\"\n", irqs: []int{8, 7},
			want: "IRQBALANCE_ARGS=\"-i 7 --banirq=8\"\n"},
	}
	for _, tt := range tests {
		got, added, err := AddBannedIRQs([]byte(tt.give), tt.inherited, tt.irqs)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		if !slices.Equal(added, tt.wantAdded) {
			t.Errorf("%s: added %v, want %v", tt.name, added, tt.wantAdded)
		}
	}
	for _, bad := range []struct{ give, want string }{
		{"IRQBALANCE_ARGS=$X\n", "by hand"},
		{"not an assignment\n", "not KEY=VALUE"},
		{"IRQBALANCE_ARGS=\"--banirq=x\"\n", "not an IRQ number"},
	} {
		if _, _, err := AddBannedIRQs([]byte(bad.give), nil, []int{3}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("AddBannedIRQs(%q) = %v, want an error saying %q", bad.give, err, bad.want)
		}
	}
	if _, _, err := AddBannedIRQs(nil, nil, []int{-1}); err == nil {
		t.Error("AddBannedIRQs(IRQ -1): no error")
	}
}

// FuzzAddBannedIRQs: whatever file it is given, an edit that succeeds is
// a file irqbalance's reader reads, whose IRQBALANCE_ARGS ban the IRQs,
// and every line but the one assignment is kept.
func FuzzAddBannedIRQs(f *testing.F) {
	f.Add([]byte(shippedDefault(f)), uint16(37))
	f.Add([]byte("IRQBALANCE_ARGS=\"--banirq=1\"\n  export IRQBALANCE_ARGS='-j'  \r\n"), uint16(0))
	f.Add([]byte("IRQBALANCE_ARGS=-i5"), uint16(5))
	f.Fuzz(func(t *testing.T, data []byte, irq uint16) {
		out, added, err := AddBannedIRQs(data, nil, []int{int(irq)})
		if err != nil {
			return
		}
		vars, err := parseEnvFile(out)
		if err != nil {
			t.Fatalf("AddBannedIRQs(%q) = %q, which does not parse: %v", data, out, err)
		}
		b := &Settings{Args: strings.Fields(vars[envArgs])}
		if err := b.parseArgs(); err != nil || !slices.Contains(b.BannedIRQs, int(irq)) {
			t.Fatalf("AddBannedIRQs(%q, %d) = %q: IRQBALANCE_ARGS bans %v (%v)", data, irq, out, b.BannedIRQs, err)
		}
		if len(added) == 0 && string(out) != string(data) {
			t.Fatalf("AddBannedIRQs(%q) added nothing and changed the file to %q", data, out)
		}
		in, got := strings.Split(string(data), "\n"), strings.Split(string(out), "\n")
		changed := 0
		for i := 0; i < len(in) && i < len(got); i++ {
			if in[i] != got[i] {
				changed++
			}
		}
		if changed > 1 {
			t.Fatalf("AddBannedIRQs(%q) = %q: %d lines changed, want at most the assignment", data, out, changed)
		}
	})
}

func TestArgsWithBans(t *testing.T) {
	got, err := ArgsWithBans([]string{"-j", "--banirq=5", "--", "x"}, []int{6, 5, 4})
	if want := []string{"-j", "--banirq=5", "--banirq=4", "--banirq=6", "--", "x"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ArgsWithBans = %q, %v; want %q", got, err, want)
	}
}

func TestReadConfig(t *testing.T) {
	root := irqbalanceTree(t, map[string]string{
		"usr/lib/irqbalance/defaults.env": "IRQBALANCE_ARGS=\"--banirq=3 -j\"\n",
		"etc/default/irqbalance":          "IRQBALANCE_BANNED_CPULIST=1\n",
	})
	c, err := ReadConfig(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{File: "/etc/default/irqbalance", Files: []string{"/usr/lib/irqbalance/defaults.env", "/etc/default/irqbalance"},
		Args: []string{"--banirq=3", "-j"}, BannedIRQs: []int{3}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("ReadConfig (-want +got):\n%s", diff)
	}
	bad := irqbalanceTree(t, map[string]string{"etc/sysconfig/irqbalance": "IRQBALANCE_ARGS=--banirq=-4\n"})
	if _, err := ReadConfig(hosttest.Open(t, bad)); err == nil || !strings.Contains(err.Error(), "/etc/sysconfig/irqbalance") {
		t.Errorf("ReadConfig with --banirq=-4: %v, want an error naming the file", err)
	}
	if got := EnvFiles(); !slices.Equal(got, []string{"/usr/lib/irqbalance/defaults.env", "/etc/default/irqbalance", "/etc/sysconfig/irqbalance"}) {
		t.Errorf("EnvFiles() = %v", got)
	}
}
