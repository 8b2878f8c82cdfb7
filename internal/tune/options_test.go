package tune

import (
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// TestPickOptions: what mask's and exec's flags may not say, each refused
// as usage.ErrUsage naming the flag; good ones become the request. What was
// given is what is set: a nil pointer or an empty set was not given.
func TestPickOptions(t *testing.T) {
	nic := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	eth0 := PickOptions{NIC: nic("eth0"), Exclude: cpuset.New(1), Count: num(2)}
	tests := []struct {
		give PickOptions
		want string // the refusal; "" for none
	}{
		{PickOptions{}, "choose the candidate CPUs with exactly one of --nic, --node or --cpus"},
		{PickOptions{NIC: nic("eth0"), Node: num(1)}, "choose the candidate CPUs with exactly one of --nic, --node or --cpus"},
		{PickOptions{Node: num(0), CPUs: cpuset.New(0)}, "choose the candidate CPUs with exactly one of --nic, --node or --cpus"},
		{PickOptions{Node: num(-2)}, "--node -2: want a node id"},
		{PickOptions{NIC: nic("")}, "--nic: empty NIC name"},
		{PickOptions{Node: num(0), ExcludeIRQ: true}, "--exclude-irq-cpus needs --nic: it drops the CPUs where that NIC's queue IRQs land"},
		{PickOptions{NIC: nic("eth0"), Count: num(0)}, "--count 0: want at least 1"},
		{eth0, ""},
		{PickOptions{Node: num(0)}, ""},
		{PickOptions{CPUs: cpuset.New(2, 3), OnePerCore: true}, ""},
	}
	for _, tt := range tests {
		r, err := tt.give.Request()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", tt.give, err)
		case tt.want != "" && (!usage.Is(err) || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("%+v = %v, want usage.ErrUsage saying %q", tt.give, err, tt.want)
		case tt.want != "":
		case tt.give.Node != nil && (r.Node == nil || *r.Node != *tt.give.Node), tt.give.Node == nil && r.Node != nil:
			t.Errorf("%+v: node %v", tt.give, r.Node)
		case tt.give.NIC != nil && r.NIC != *tt.give.NIC, tt.give.NIC == nil && r.NIC != "":
			t.Errorf("%+v: nic %q", tt.give, r.NIC)
		case tt.give.Count != nil && r.Count != *tt.give.Count, tt.give.Count == nil && r.Count != 0:
			t.Errorf("%+v: count %d", tt.give, r.Count)
		case !r.Exclude.Equal(tt.give.Exclude), !r.CPUs.Equal(tt.give.CPUs), r.OnePerCore != tt.give.OnePerCore:
			t.Errorf("%+v: request %+v", tt.give, r)
		}
	}
}
