package irq

import (
	"math"
	"testing"
)

// TestTotalSaturates: an IRQ whose counts sum past 64 bits totals the
// largest value, not what the sum wrapped to (issue 27).
func TestTotalSaturates(t *testing.T) {
	tests := []struct {
		give []uint64
		want uint64
	}{
		{nil, 0},
		{[]uint64{7, 100000}, 100007},
		{[]uint64{math.MaxUint64, 1}, math.MaxUint64},
	}
	for _, tt := range tests {
		q := IRQ{Counts: tt.give}
		if got := q.Total(); got != tt.want {
			t.Errorf("IRQ{Counts: %v}.Total() = %d, want %d", tt.give, got, tt.want)
		}
	}
}
