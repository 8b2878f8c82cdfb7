package affinity

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
)

// TestPickOptions: what mask's and exec's flags may not say, each refused
// as ErrUsage naming the flag; good ones become the request.
func TestPickOptions(t *testing.T) {
	eth0 := PickOptions{NIC: "eth0"}
	eth0.Exclude.CPUs = cpuset.New(1)
	tests := []struct {
		give  PickOptions
		given []string
		want  string // the refusal; "" for none
	}{
		{PickOptions{}, nil, "choose the candidate CPUs with exactly one of --nic, --node or --cpus"},
		{PickOptions{NIC: "eth0", Node: 1}, []string{"nic", "node"}, "choose the candidate CPUs with exactly one of --nic, --node or --cpus"},
		{PickOptions{Node: -2}, []string{"node"}, "--node -2: want a node id"},
		{PickOptions{}, []string{"nic"}, "--nic: empty NIC name"},
		{PickOptions{Node: 0, ExcludeIRQ: true}, []string{"node"}, "--exclude-irq-cpus needs --nic: it drops the CPUs where that NIC's queue IRQs land"},
		{PickOptions{NIC: "eth0", Count: 0}, []string{"nic", "count"}, "--count 0: want at least 1"},
		{eth0, []string{"nic"}, ""},
		{PickOptions{Node: 0}, []string{"node"}, ""},
	}
	for _, tt := range tests {
		r, err := tt.give.Request(func(f string) bool { return slices.Contains(tt.given, f) })
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", tt.give, err)
		case tt.want != "" && (!errors.Is(err, ErrUsage) || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("%+v = %v, want ErrUsage saying %q", tt.give, err, tt.want)
		case tt.want == "" && slices.Contains(tt.given, "node") && (r.Node == nil || *r.Node != tt.give.Node):
			t.Errorf("%+v: node %v", tt.give, r.Node)
		case tt.want == "" && !r.Exclude.Equal(tt.give.Exclude.CPUs):
			t.Errorf("%+v: exclude %s", tt.give, r.Exclude)
		}
	}
}
