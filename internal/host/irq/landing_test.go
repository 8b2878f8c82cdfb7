package irq

import (
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
)

func TestLanding(t *testing.T) {
	tests := []struct {
		name    string
		give    Info
		want    cpuset.Set
		wantHow Land
	}{
		{"effective within request", Info{Affinity: cpuset.Range(16, 31), HasAffinity: true, Effective: cpuset.New(18), HasEffective: true}, cpuset.New(18), LandEffective},
		{"pinned, not yet moved", Info{Affinity: cpuset.New(16), HasAffinity: true, Effective: cpuset.New(53), HasEffective: true}, cpuset.New(16), LandPending},
		{"no effective file", Info{Affinity: cpuset.New(3), HasAffinity: true}, cpuset.New(3), LandRequested},
		{"not started", Info{Affinity: cpuset.New(3), HasAffinity: true, HasEffective: true}, cpuset.Set{}, LandInactive},
		{"nothing known", Info{}, cpuset.Set{}, LandUnknown},
	}
	for _, tt := range tests {
		q := IRQ{Info: tt.give}
		got, how := q.Landing()
		if !got.Equal(tt.want) || how != tt.wantHow {
			t.Errorf("%s: Landing() = %s %s, want %s %s", tt.name, got, how, tt.want, tt.wantHow)
		}
	}
}
