package hosttest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BumpIRQ adds by to the first CPU column of irq's row in the tree's
// /proc/interrupts, as the kernel's count of that IRQ on that CPU rises,
// keeping the column's width and the file's mode.
func BumpIRQ(t testing.TB, root string, irq int, by uint64) {
	t.Helper()
	p := filepath.Join(root, "proc", "interrupts")
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	found := false
	for i, l := range lines {
		label, rest, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(label) != strconv.Itoa(irq) {
			continue
		}
		f := strings.Fields(rest)
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			t.Fatalf("IRQ %d's first count %q: %v", irq, f[0], err)
		}
		// Keep the column's width: replace the number right-aligned.
		old, repl := f[0], strconv.FormatUint(n+by, 10)
		at := strings.Index(rest, old)
		pad := rest[:at]
		if len(repl) > len(old) {
			pad = pad[:max(len(pad)-(len(repl)-len(old)), 1)]
		}
		lines[i] = label + ":" + pad + repl + rest[at+len(old):]
		found = true
	}
	if !found {
		t.Fatalf("no IRQ %d in %s", irq, p)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), st.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, st.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}
