package audit

// CheckInfo is what the registry says of one check id, for its
// documentation (irqnuma-audit(1) lists every check from it): a read of
// the registry, never a second list.
type CheckInfo struct {
	ID Check
	// Family are the ids registered with ID, ID included: one unit of the
	// audit that shares its work (irq-remote and isolated-irq).
	Family []Check
	// Needs are the facts the check cannot judge without, beyond the
	// topology and the IRQs every check reads; empty when it needs none.
	Needs []string
	// NotCheckedFix says how to make the check possible when a fact is
	// missing; "" for the general fix (run on the live host, or capture
	// the missing file).
	NotCheckedFix string
	// PerNIC, PerProcess and ForHost say how it runs: per audited NIC,
	// per watched process judged against a NIC, once for the host.
	PerNIC, PerProcess, ForHost bool
}

// Catalogue returns every registered check id in run order (Checks'
// order, less not-checked, which is the audit's own finding and no
// check's), with what its check needs and how it runs.
func Catalogue() []CheckInfo {
	var out []CheckInfo
	for _, ch := range registered() {
		needs := make([]string, len(ch.needs))
		for i, f := range ch.needs {
			needs[i] = string(f)
		}
		for _, id := range ch.ids {
			out = append(out, CheckInfo{ID: id, Family: append([]Check(nil), ch.ids...), Needs: append([]string(nil), needs...),
				NotCheckedFix: ch.fix, PerNIC: ch.nic != nil, PerProcess: ch.proc != nil, ForHost: ch.host != nil})
		}
	}
	return out
}
