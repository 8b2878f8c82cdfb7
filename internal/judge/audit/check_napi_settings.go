package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/steer"
)

// NAPI settings that contradict each other: napi-settings. The rules are
// Documentation/networking/napi.rst's: napi_defer_hard_irqs counts empty
// polls of a repoll timer armed for gro_flush_timeout, so without the
// timeout it defers nothing; irq-suspend-timeout "might not have any
// discernible effect" without both; and with NAPI threaded the receive
// work runs in the kthreads, so busy polling from the application's
// threads adds a second place where it runs.
const CheckNAPISettings Check = "napi-settings"

func init() {
	register(&check{ids: []Check{CheckNAPISettings}, needs: []fact{factSteer}, nic: (*auditor).checkNAPISettings})
}

// checkNAPISettings judges the NIC's sysfs settings, then each NAPI
// instance's own (netdev napi-get) where they differ from the NIC's.
func (a *auditor) checkNAPISettings(c *nicCtx) error {
	n := c.steer.n
	if n == nil {
		return a.steerSkip(c)
	}
	sys := n.Sysfs
	known := sys.DeferHardIRQs != nil && sys.GROFlushTimeout != nil
	sysfsSaid := false
	if known && *sys.DeferHardIRQs > 0 && *sys.GROFlushTimeout == 0 {
		sysfsSaid = true
		a.add(Finding{Check: CheckNAPISettings, Severity: SeverityWarning, NIC: c.nic.Name, Subject: "napi_defer_hard_irqs",
			Message: fmt.Sprintf("%s's napi_defer_hard_irqs is %d but its gro_flush_timeout is 0: no repoll timer is armed, so no hard IRQ is deferred",
				c.nic.Name, *sys.DeferHardIRQs),
			Fix: c.fix(fmt.Sprintf("echo 20000 > /sys/class/net/%s/gro_flush_timeout  # or: echo 0 > /sys/class/net/%s/napi_defer_hard_irqs", c.ifname, c.ifname))})
	}
	var deferNoTimer, suspendAlone []uint32
	for _, napi := range n.NAPIs {
		if napi.DeferHardIRQs == nil || napi.GROFlushTimeout == nil {
			continue
		}
		known = true
		if *napi.DeferHardIRQs > 0 && *napi.GROFlushTimeout == 0 && !sysfsSaid {
			deferNoTimer = append(deferNoTimer, napi.ID)
		}
		if napi.IRQSuspendTimeout != nil && *napi.IRQSuspendTimeout > 0 && (*napi.DeferHardIRQs == 0 || *napi.GROFlushTimeout == 0) {
			suspendAlone = append(suspendAlone, napi.ID)
		}
	}
	if len(deferNoTimer) > 0 {
		a.add(Finding{Check: CheckNAPISettings, Severity: SeverityWarning, NIC: c.nic.Name, Subject: napiSubject(deferNoTimer),
			Message: fmt.Sprintf("%s of %s defer hard IRQs with a gro-flush-timeout of 0: no repoll timer is armed, so nothing is deferred",
				napiSubject(deferNoTimer), c.nic.Name),
			Fix: c.fix(fmt.Sprintf("ynl --family netdev --do napi-set --json '{\"id\": %d, \"gro-flush-timeout\": 20000}'  # for each; or set defer-hard-irqs to 0", deferNoTimer[0]))})
	}
	if len(suspendAlone) > 0 {
		a.add(Finding{Check: CheckNAPISettings, Severity: SeverityInfo, NIC: c.nic.Name, Subject: napiSubject(suspendAlone),
			Message: fmt.Sprintf("%s of %s set irq-suspend-timeout without both defer-hard-irqs and gro-flush-timeout: napi.rst says it then may have no discernible effect",
				napiSubject(suspendAlone), c.nic.Name),
			Fix: c.fix(fmt.Sprintf("echo 20000 > /sys/class/net/%s/gro_flush_timeout; echo 2 > /sys/class/net/%s/napi_defer_hard_irqs", c.ifname, c.ifname))})
	}
	threaded, tknown := napiThreaded(n)
	if busy := busyPolling(a.opts.Steer); threaded && busy != "" {
		a.add(Finding{Check: CheckNAPISettings, Severity: SeverityInfo, NIC: c.nic.Name, Subject: "busy polling and threaded NAPI",
			Message: fmt.Sprintf("%s is set and %s's NAPI is threaded: packets are processed both in the napi kthreads and in the threads that busy poll, so placing the kthreads places only part of the work",
				busy, c.nic.Name),
			Fix: c.fix(fmt.Sprintf("sysctl -w net.core.busy_poll=0 net.core.busy_read=0  # or: echo 0 > /sys/class/net/%s/threaded", c.ifname))})
	}
	if !known && !tknown {
		return a.steerSkip(c)
	}
	return nil
}

// busyPolling names the busy-poll sysctls set above 0: "net.core.busy_poll
// and net.core.busy_read", or "".
func busyPolling(h *steer.Host) string {
	var on []string
	for _, k := range []string{"busy_poll", "busy_read"} {
		for name, v := range h.Sysctls {
			if v > 0 && (name == k || name == "net.core."+k) {
				on = append(on, "net.core."+k)
			}
		}
	}
	slices.Sort(on)
	return strings.Join(slices.Compact(on), " and ")
}

// napiSubject is "NAPI 8193" or "NAPIs 8193-8200".
func napiSubject(ids []uint32) string {
	if len(ids) == 1 {
		return fmt.Sprintf("NAPI %d", ids[0])
	}
	return "NAPIs " + queuesList(ids)
}
