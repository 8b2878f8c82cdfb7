package audit

import "slices"

// order is every check id in the order findings of equal severity are
// shown and the checks run, not-checked last: the one place it is said.
// A new check is a file of its own that declares its ids and registers
// them (check.go); its ids go here too, where they belong among the
// others (TestRegistry fails until they do).
var order = []Check{
	CheckNICNodeUnknown,
	CheckIRQRemote, CheckIsolatedIRQ,
	CheckIRQSharedCPU,
	CheckIRQAppCPU,
	CheckIrqbalance,
	CheckProcAbsent,
	CheckProcRemote, CheckProcIRQOverlap, CheckProcMemRemote,
	CheckCgroupIRQ, CheckPodIRQBalancing,
	CheckCgroupNICRemote,
	CheckCgroupMemRemote,
	CheckCgroupSharedCore,
	CheckSteeringMalformed,
	CheckRPSRemote, CheckXPSRemote,
	CheckRSSQueueMissing, CheckRSSQueueUnused,
	CheckNtupleRemote,
	CheckNAPIThreadRemote, CheckNAPIThreadUnpinned, CheckNAPIThreadShared,
	CheckIRQManaged,
	CheckUDPHashNoPorts,
	CheckQueuesVsCPUs,
	CheckChannelsVsCores,
	CheckCPUGovernor,
	CheckNAPISettings,
	CheckIOMMUMode,
	CheckProcNICUnknown, CheckProcNICUnaudited,
	CheckZCBlocked, CheckZCUnknown,
	CheckNotChecked,
}

// place is each id's index in order.
var place = func() map[Check]int {
	m := make(map[Check]int, len(order))
	for i, id := range order {
		m[id] = i
	}
	return m
}()

// Checks returns every check id in order: findings of equal severity
// are shown in it, and the checks run in it.
func Checks() []Check { return slices.Clone(order) }

// Place is c's position in Checks, and len(Checks()) for an id the
// audit does not have.
func (c Check) Place() int {
	if i, ok := place[c]; ok {
		return i
	}
	return len(order)
}
