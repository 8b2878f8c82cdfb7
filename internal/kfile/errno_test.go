package kfile

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestErrnoFiles: every errno the kernel names reads back from what
// FormatErrno writes (95 as EOPNOTSUPP, as the kernel spells it), and a
// file holding anything else is an error.
func TestErrnoFiles(t *testing.T) {
	for e := unix.Errno(1); e < 4096; e++ {
		if unix.ErrnoName(e) == "" {
			continue
		}
		got, err := ParseErrno(FormatErrno(e))
		if err != nil || got != e {
			t.Errorf("errno %d: %q reads back as %d, %v", int(e), FormatErrno(e), int(got), err)
		}
	}
	if s := string(FormatErrno(unix.EOPNOTSUPP)); s != "EOPNOTSUPP\n" {
		t.Errorf("95 is written %q, want EOPNOTSUPP", s)
	}
	for _, bad := range []string{"", "\n", "ENOSUCH\n", "errno 9999\n", "EPERM\nEPERM\n"} {
		if _, err := ParseErrno([]byte(bad)); err == nil {
			t.Errorf("%q read as an errno", bad)
		}
	}
}
