package zc

import (
	"sort"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/steer"
)

// queueAPIDrivers are the drivers that set netdev_queue_mgmt_ops in the
// mainline kernel's source as of 6.18 (`grep -rn "queue_mgmt_ops = "
// drivers/net`), with what limits it; a later kernel may add others. Zero-copy receive restarts its queue through
// them; every other driver answers EOPNOTSUPP.
var queueAPIDrivers = map[string]string{
	"bnxt_en":   "bnxt_queue_mgmt_ops, when the firmware allows it (BNXT_SUPPORTS_QUEUE_API; else bnxt_queue_mgmt_ops_unsupp)",
	"gve":       "gve_queue_mgmt_ops",
	"mlx5_core": "mlx5e_queue_mgmt_ops",
	"fbnic":     "fbnic_queue_mgmt_ops",
	"netdevsim": "nsim_queue_mgmt_ops (a test device)",
}

// queueAPINames lists the drivers, for a fix that names them.
func queueAPINames() string {
	names := make([]string, 0, len(queueAPIDrivers))
	for d := range queueAPIDrivers {
		if d != "netdevsim" {
			names = append(names, d)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (c *checker) queueAPI() Prereq {
	const what = "driver with the queue-management API (netdev_queue_mgmt_ops)"
	d := c.driver()
	if d == "" {
		return notKnown(IDQueueAPI, what, c.partKind(steer.PartDriver), c.partWhy(steer.PartDriver, "the driver (ethtool -i):")+", and the device names no driver", "")
	}
	if ops, ok := queueAPIDrivers[d]; ok {
		return holds(IDQueueAPI, what, d+" has "+ops)
	}
	return fails(IDQueueAPI, what, d+" does not implement netdev_queue_mgmt_ops (mainline kernel source as of 6.18)",
		"none on this NIC: zero-copy receive needs a NIC whose driver has it ("+queueAPINames()+")")
}
