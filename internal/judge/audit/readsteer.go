package audit

import (
	"errors"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// readSteer is the audit's one call to steer.Read: the steering of the
// named interfaces on fsys, told what h found of /sys/class/net: the
// NICs' folders there, or none (a host whose NICs are inferred).
func readSteer(fsys kfile.FS, h *topology.Host, names []string) (*steer.Host, error) {
	opts := steer.ReadOptions{Folders: map[string]bool{}}
	for _, n := range h.NICs {
		opts.NoClassNet = opts.NoClassNet || n.Inferred
		if !n.Inferred {
			opts.Folders[n.Name] = true
		}
	}
	return steer.ReadWith(fsys, names, opts)
}

// ReadSteer reads the steering of the NICs an audit of h covers (those
// named, or every NIC with IRQs) that have an interface name, and the
// napi kthreads of those whose NAPI is threaded: by the PIDs netdev
// napi-get gave, and by name (napi/IF-N) in /proc, which finds those
// netdev does not give (a kernel without napi-get, as 6.1; a NAPI
// instance netdev does not list, as virtio_net's tx NAPI). A kthread
// /proc cannot give is left out, and the checks name it.
func ReadSteer(fsys kfile.FS, h *topology.Host, t *irq.Table, named []string) (*steer.Host, map[int]*proc.Process, error) {
	names := []string{}
	for _, n := range Audited(h, t, named) {
		if n.HasIfName() {
			names = append(names, n.Name)
		}
	}
	sh, err := readSteer(fsys, h, names)
	if errors.Is(err, steer.ErrUnknownInterface) {
		// A name steer refuses (one no kernel allows, as a hostile
		// tree's): read the others, and say that one is unreadable.
		sh, err = readEach(fsys, h, names)
	}
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
		if threaded, _ := napiThreaded(n); threaded {
			readNAPIByName(fsys, n.Name, threads)
		}
	}
	return sh, threads, nil
}

// readNAPIByName adds to threads nic's napi/NIC-N kthreads found by
// name in /proc. A tree without /proc (a capture) adds none.
func readNAPIByName(fsys kfile.FS, nic string, threads map[int]*proc.Process) {
	pids, err := proc.FindByCommPrefix(fsys, napiPrefix(nic))
	if err != nil {
		return
	}
	for _, pid := range pids {
		if threads[pid] != nil {
			continue
		}
		if p, err := proc.Read(fsys, pid); err == nil && isNAPIThreadOf(p.Comm, nic) {
			threads[pid] = p
		}
	}
}

// napiPrefix is the name of nic's NAPI kthreads before the NAPI id:
// napi_kthread_create names them "napi/%s-%d" (netdev name, NAPI id).
func napiPrefix(nic string) string { return "napi/" + nic + "-" }

// isNAPIThreadOf reports whether comm is a NAPI kthread of nic's:
// "napi/NIC-" and a decimal NAPI id ("napi/eth0-x-5" is eth0-x's).
func isNAPIThreadOf(comm, nic string) bool {
	id, ok := strings.CutPrefix(comm, napiPrefix(nic))
	if !ok || id == "" || (len(id) > 1 && id[0] == '0') {
		return false
	}
	_, err := strconv.ParseUint(id, 10, 32)
	return err == nil
}

// readEach reads the interfaces one at a time; one steer refuses is a
// NIC whose every part is unreadable, with the error.
func readEach(fsys kfile.FS, h *topology.Host, names []string) (*steer.Host, error) {
	out, err := readSteer(fsys, h, nil) // the source and the sysctls
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		sh, err := readSteer(fsys, h, []string{name})
		switch {
		case errors.Is(err, steer.ErrUnknownInterface):
			n := &steer.NIC{Name: name}
			for _, p := range unreadableParts {
				n.SetUnknown(p, unknown.Reason{Kind: unknown.KindMalformed, Detail: err.Error()})
			}
			out.NICs = append(out.NICs, n)
		case err != nil:
			return nil, err
		default:
			out.NICs = append(out.NICs, sh.NICs...)
		}
	}
	return out, nil
}

// unreadableParts are the parts a NIC steer refused has unknown.
var unreadableParts = []steer.Part{steer.PartDriver, steer.PartChannels, steer.PartRings, steer.PartRSS, steer.PartFeatures,
	steer.PartCoalesce, steer.PartRules, steer.PartQueues, steer.PartNAPI, steer.PartThreaded}
