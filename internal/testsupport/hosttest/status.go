package hosttest

import (
	"bufio"
	"strings"
	"testing"
)

// StatusField returns the value of one field (such as "Cpus_allowed_list")
// of a /proc/PID/status text, and fails the test when the text has none.
func StatusField(t testing.TB, status, name string) string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in status:\n%s", name, status)
	return ""
}
