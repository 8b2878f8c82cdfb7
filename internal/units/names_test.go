package units

import "testing"

func TestNames(t *testing.T) {
	vf := func(pf string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, pf+"v"+itoa(i))
		}
		return out
	}
	tests := []struct {
		give []string
		want string
	}{
		{give: nil, want: ""},
		{give: []string{"eth0"}, want: "eth0"},
		{give: []string{"eth1", "eth0"}, want: "eth0, eth1"},
		{give: []string{"eth10", "eth2", "eth3", "eth4"}, want: "eth2-4, eth10"},
		{give: append(vf("ens1f0", 16), "ens1f0", "ens1f1"), want: "ens1f0, ens1f0v0-15, ens1f1"},
		{give: []string{"0000:19:00.1", "0000:19:00.0"}, want: "0000:19:00.0, 0000:19:00.1"},
		{give: []string{"eth01", "eth02", "eth03"}, want: "eth01, eth02, eth03"}, // leading zeros: names, not numbers
		{give: []string{"lo", "bond0", "bond0"}, want: "bond0, bond0, lo"},
	}
	for _, tt := range tests {
		if got := Names(tt.give); got != tt.want {
			t.Errorf("Names(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func itoa(i int) string { return Ints([]int{i}, "") }

func TestReplaceName(t *testing.T) {
	tests := []struct {
		give, nic, want string
	}{
		{"eth1 has 4 queues", "eth1", "<nic> has 4 queues"},
		{"ls /sys/class/net/eth1/queues", "eth1", "ls /sys/class/net/<nic>/queues"},
		{"eth1's queue IRQs", "eth1", "<nic>'s queue IRQs"},
		{"eth10 and eth1.100 and xeth1 are not eth1.", "eth1", "eth10 and eth1.100 and xeth1 are not <nic>."},
		{"eth0eth0 eth0", "eth0", "eth0eth0 <nic>"},
		{"ethtool -L ens1f0 combined 52", "ens1f0", "ethtool -L <nic> combined 52"},
		{"nothing here", "eth0", "nothing here"},
		{"name empty", "", "name empty"},
	}
	for _, tt := range tests {
		if got := ReplaceName(tt.give, tt.nic, "<nic>"); got != tt.want {
			t.Errorf("ReplaceName(%q, %q) = %q, want %q", tt.give, tt.nic, got, tt.want)
		}
	}
}
