package topology

import (
	"errors"
	"strings"
	"testing"
)

// TestLookupNICEscapesNames: the NIC names an unknown-NIC error lists come
// from the host and may hold a line break or a terminal escape; the error
// text holds neither raw, so it stays one line.
func TestLookupNICEscapesNames(t *testing.T) {
	h := &Host{NICs: []NIC{{Name: "eth0\nirqnuma: fake"}, {Name: "e\x1b[31m"}}}
	_, err := h.LookupNIC("eth9")
	if !errors.Is(err, ErrUnknownNIC) {
		t.Fatalf("LookupNIC(eth9) = %v, want ErrUnknownNIC", err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\x1b") {
		t.Errorf("LookupNIC error holds a raw line break or escape: %q", msg)
	}
	if !strings.Contains(msg, `eth0\x0airqnuma: fake`) || !strings.Contains(msg, `e\x1b[31m`) {
		t.Errorf("LookupNIC error = %q, want the names escaped", msg)
	}
}
