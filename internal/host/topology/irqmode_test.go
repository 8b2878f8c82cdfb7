package topology

import (
	"io/fs"
	"testing"
)

// TestIRQModesManaged holds the one rule for "managed by mode" that irq's
// judgeManaged and the NIC node inference share.
func TestIRQModesManaged(t *testing.T) {
	const ro, rw fs.FileMode = 0o444, 0o644
	tests := []struct {
		name              string
		give              []fs.FileMode // the affinity files counted
		lost, marks       bool
		mode              fs.FileMode // the IRQ asked about
		wantMgd, wantKnow bool
		wantSome          bool // SomeManaged over the files counted
	}{
		{"6.12 tree: read-only beside writable", []fs.FileMode{ro, rw}, false, false, ro, true, true, true},
		{"6.12 tree: the writable one", []fs.FileMode{ro, rw}, false, false, rw, false, true, true},
		{"all writable, kernel marks", []fs.FileMode{rw, rw}, false, true, rw, false, true, false},
		{"all writable, 6.1 kernel", []fs.FileMode{rw, rw}, false, false, rw, false, false, false},
		{"all read-only: modes lost", []fs.FileMode{ro, ro}, false, true, ro, false, false, false},
		{"node file writable: modes lost", []fs.FileMode{ro, rw}, true, true, ro, false, false, false},
	}
	for _, tt := range tests {
		m := IRQModes{Lost: tt.lost, Marks: tt.marks}
		for _, g := range tt.give {
			m.Add(g)
		}
		if mgd, known := m.Managed(tt.mode); mgd != tt.wantMgd || known != tt.wantKnow {
			t.Errorf("%s: Managed(%v) = %v, %v, want %v, %v", tt.name, tt.mode, mgd, known, tt.wantMgd, tt.wantKnow)
		}
		if some := m.SomeManaged(); some != tt.wantSome {
			t.Errorf("%s: SomeManaged() = %v, want %v", tt.name, some, tt.wantSome)
		}
	}
}
