package proc

import (
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/unknown"
)

func TestParseTaskStat(t *testing.T) {
	// A real thread's stat (Linux 6.18), with a comm holding ") (".
	line := "4242 (iperf3 ) (x) S 1 4242 4242 34816 4242 4194560 221 0 0 0 90 6 0 0 20 0 2 0 2869 " +
		"12345678 340 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 21 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	st, err := parseTaskStat("proc/4242/task/4242/stat", []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st.comm != "iperf3 ) (x" || st.state != "S" || st.utime != 90 || st.stime != 6 || st.start != 2869 || !unknown.Is(st.processor, 21) {
		t.Errorf("parseTaskStat = %+v", st)
	}
	for _, bad := range []string{"", "4242 iperf3 S", "4242 (x) S 1 2", "4242 (x) S 1 1 1 1 1 1 1 1 1 1 x 6 0",
		"4242 (x) S 1 1 1 1 1 1 1 1 1 1 1 6 0 0 20 0 2 0 -5 0"} {
		_, err := parseTaskStat("proc/1/stat", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), "proc/1/stat") {
			t.Errorf("parseTaskStat(%q) = %v, want an error naming the file", bad, err)
		}
	}
}

func FuzzParseTaskStat(f *testing.F) {
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 1 0 0 0 5 7 0 0 20 0 1 0 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 3 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseTaskStat("stat", b)
		if cpu, ok := st.processor.Get(); err == nil && ok && cpu < 0 {
			t.Errorf("processor %d", cpu)
		}
	})
}
