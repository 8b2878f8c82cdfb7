package audit

import (
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/irq"
	"github.com/irqnuma/irqnuma/proc"
	"github.com/irqnuma/irqnuma/steer"
	"github.com/irqnuma/irqnuma/topology"
)

// readSteer is the audit's one call to steer.Read: the steering of the
// named interfaces on fsys.
func readSteer(fsys kfile.FS, names []string) (*steer.Host, error) { return steer.Read(fsys, names) }

// ReadSteer reads the steering of the NICs an audit of h covers (those
// named, or every NIC with IRQs) that have an interface name, and the
// napi kthreads of those whose NAPI is threaded (by the PIDs netdev
// napi-get gave). A kthread /proc cannot give is left out, and the
// checks name it.
func ReadSteer(fsys kfile.FS, h *topology.Host, t *irq.Table, named []string) (*steer.Host, map[int]*proc.Process, error) {
	names := []string{}
	for _, n := range Audited(h, t, named) {
		if n.HasIfName() {
			names = append(names, n.Name)
		}
	}
	sh, err := readSteer(fsys, names)
	if err != nil {
		return nil, nil, err
	}
	threads := map[int]*proc.Process{}
	for _, n := range sh.NICs {
		for _, napi := range n.NAPIs {
			if napi.PID <= 0 || threads[napi.PID] != nil {
				continue
			}
			if p, err := proc.Read(fsys, napi.PID); err == nil {
				threads[napi.PID] = p
			}
		}
	}
	return sh, threads, nil
}
