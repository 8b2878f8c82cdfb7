package irq

import (
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func TestLanding(t *testing.T) {
	tests := []struct {
		name    string
		give    Info
		want    cpuset.Set
		wantHow Land
	}{
		{"effective within request", Info{Affinity: unknown.Of(cpuset.Range(16, 31)), Effective: unknown.Of(cpuset.New(18))}, cpuset.New(18), LandEffective},
		{"pinned, not yet moved", Info{Affinity: unknown.Of(cpuset.New(16)), Effective: unknown.Of(cpuset.New(53))}, cpuset.New(16), LandPending},
		{"no effective file", Info{Affinity: unknown.Of(cpuset.New(3))}, cpuset.New(3), LandRequested},
		{"not started", Info{Affinity: unknown.Of(cpuset.New(3)), Effective: unknown.Of(cpuset.Set{})}, cpuset.Set{}, LandInactive},
		{"nothing known", Info{}, cpuset.Set{}, ""},
	}
	for _, tt := range tests {
		q := IRQ{Info: tt.give}
		got, how := q.Landing()
		if !got.Equal(tt.want) || how.Or("") != tt.wantHow {
			t.Errorf("%s: Landing() = %s %s, want %s %s", tt.name, got, how, tt.want, tt.wantHow)
		}
	}
}
