package flow

import (
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// PlaceQueue says where rx queue q of the NIC nic is processed — its
// IRQ, its NAPI instance and kthread, RPS, the node — as Predict does
// once it knows a flow's queue, for a queue found another way (by its
// counters, as bench --observe finds it); by says how, and becomes
// the path's QueueBy. The path has no flow, hash or rule.
func PlaceQueue(fsys kfile.FS, nic string, q uint32, by string) (*Path, error) {
	pr, err := newPredictor(fsys, Options{NIC: nic})
	if err != nil {
		return nil, err
	}
	n, err := pr.h.LookupNIC(nic)
	if err != nil {
		return nil, err
	}
	st, err := pr.steering(n.Name)
	if err != nil {
		return nil, err
	}
	p := &Path{NIC: n.Name, NICBy: "--nic", Source: st.Source, Node: pr.h.Locality(n).Node, Queue: unknown.Of(q), QueueBy: by}
	p.place(fsys, pr.h, pr.t, n, st.NIC(n.Name), q)
	return p, nil
}
