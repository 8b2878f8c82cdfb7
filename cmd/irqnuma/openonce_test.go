package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// opensOf runs irqnuma with args (the first two "--root", root) in
// process with kfile.Trace on, and returns how often each path under the
// root was asked of it, by relative path, and how many asks there were.
// Every traced operation opens the path or its folder (openat2: a read,
// a listing, a stat, a resolve; a link read and an lstat open the folder
// and look the name up in it), so a path asked twice is a second kernel
// path lookup at least. A snapshot's root is the folder it is unpacked
// into, which the trace names (unpackedRoot).
func opensOf(t *testing.T, args ...string) (opens map[string]int, total int) {
	t.Helper()
	root := args[1]
	snapshot := strings.HasSuffix(root, ".tar.gz")
	var mu sync.Mutex
	opens = map[string]int{}
	stop := kfile.Trace(func(a kfile.Access) {
		if a.Rel == "" || a.Op == kfile.OpWrite {
			return
		}
		if a.Root != root && !(snapshot && unpackedRoot.MatchString(a.Root)) {
			return
		}
		mu.Lock()
		opens[a.Rel]++
		total++
		mu.Unlock()
	})
	_, errOut, code := runCLI(t, args...)
	stop()
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	if total == 0 {
		t.Fatalf("%s: the trace saw nothing", strings.Join(args, " "))
	}
	return opens, total
}

// repeated returns the paths of opens asked more than once, with how
// often, sorted.
func repeated(opens map[string]int) []string {
	var out []string
	for p, n := range opens {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s (%d times)", p, n))
		}
	}
	slices.Sort(out)
	return out
}

// TestOpenOnce: topology, audit and map read each path of the host once
// (issue 40): one reading of the tree, handed down from the reader that
// makes it to every judge and renderer that uses it. On dell-2numa
// (872 NIC IRQs, 70 NICs inferred from IRQ names) and on the committed
// trees and a lab snapshot, every path the command touches is touched
// once; a failure names each path touched more often.
func TestOpenOnce(t *testing.T) {
	roots := map[string]func(t *testing.T) string{
		"seed": func(*testing.T) string { return hosttest.Root("seed") },
		"nps2": func(*testing.T) string { return hosttest.Root("nps2") },
		"lab-debian-6.12": func(t *testing.T) string {
			return filepath.Join(moduleRoot(t), "testdata/hosts/lab-debian-6.12.tar.gz")
		},
	}
	if _, ok := realhosts.Optional(t); ok {
		for _, name := range []string{"dell-2numa", "cnto-worker1"} {
			roots[name] = func(t *testing.T) string { return realhosts.Root(t, realhosts.MustLookup(t, name)) }
		}
	}
	cmds := [][]string{
		{"topology"},
		{"audit", "--fail-on", "never"},
		{"map", "--color", "never"},
	}
	for name, mk := range roots {
		t.Run(name, func(t *testing.T) {
			root := mk(t)
			for _, c := range cmds {
				opens, total := opensOf(t, append([]string{"--root", root}, c...)...)
				t.Logf("%s: %d opens of %d paths", strings.Join(c, " "), total, len(opens))
				if r := repeated(opens); len(r) > 0 {
					t.Errorf("%s on %s opens %d paths more than once:\n\t%s", strings.Join(c, " "), name, len(r), strings.Join(r, "\n\t"))
				}
			}
		})
	}
}

// procIRQFile is a path under /proc/irq/N: the IRQ and the file.
var procIRQFile = regexp.MustCompile(`^proc/irq/(\d+)(/.*)?$`)

// TestIRQListReadsOnlyNICIRQs: irq list without --all opens the
// /proc/irq/N files of the NICs' IRQs only, not those of every numbered
// IRQ (issue 40). The NICs' IRQs are those irq list --all gives an
// owner; an IRQ /proc/interrupts does not name has its folder listed
// for its action names (what tells whose it is), and nothing more.
func TestIRQListReadsOnlyNICIRQs(t *testing.T) {
	roots := map[string]func(t *testing.T) string{
		"seed":           func(*testing.T) string { return hosttest.Root("seed") },
		"nps2":           func(*testing.T) string { return hosttest.Root("nps2") },
		"vm-virtio":      func(*testing.T) string { return hosttest.Root("vm-virtio") },
		"lab-debian-6.1": func(t *testing.T) string { return filepath.Join(moduleRoot(t), "testdata/hosts/lab-debian-6.1.tar.gz") },
		"lab-debian-6.12": func(t *testing.T) string {
			return filepath.Join(moduleRoot(t), "testdata/hosts/lab-debian-6.12.tar.gz")
		},
	}
	if _, ok := realhosts.Optional(t); ok {
		for _, name := range []string{"dell-2numa", "cnto-worker1"} {
			roots[name] = func(t *testing.T) string { return realhosts.Root(t, realhosts.MustLookup(t, name)) }
		}
	}
	for name, mk := range roots {
		t.Run(name, func(t *testing.T) {
			root := mk(t)
			out, errOut, code := runCLI(t, "--root", root, "irq", "list", "--all", "-o", "json")
			if code != 0 {
				t.Fatalf("irq list --all: exit %d: %s", code, errOut)
			}
			var doc struct {
				IRQs []struct {
					IRQ int    `json:"irq"`
					NIC string `json:"nic"`
				} `json:"irqs"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			nic := map[int]bool{}
			for _, q := range doc.IRQs {
				if q.NIC != "" {
					nic[q.IRQ] = true
				}
			}
			opens, _ := opensOf(t, "--root", root, "irq", "list")
			var others []string
			perIRQ := 0
			for p := range opens {
				m := procIRQFile.FindStringSubmatch(p)
				if m == nil {
					continue
				}
				perIRQ++
				if n, _ := strconv.Atoi(m[1]); !nic[n] && m[2] != "" {
					others = append(others, p)
				}
			}
			slices.Sort(others)
			t.Logf("%d NIC IRQs of %d; irq list opened %d /proc/irq/N paths", len(nic), len(doc.IRQs), perIRQ)
			if len(others) > 0 {
				t.Errorf("irq list opened %d files of IRQs no NIC owns: %s", len(others), strings.Join(others[:min(len(others), 10)], ", "))
			}
		})
	}
}
