package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
)

// Watched processes not judged against the NIC they use:
// proc-nic-unknown (its sockets do not tell which NIC, and no --nic
// named one: judged against no NIC) and proc-nic-unaudited (a NIC the
// audit does not cover: not judged against it).
const (
	CheckProcNICUnknown   Check = "proc-nic-unknown"
	CheckProcNICUnaudited Check = "proc-nic-unaudited"
)

func init() {
	register(&check{ids: []Check{CheckProcNICUnknown, CheckProcNICUnaudited}, host: func(a *auditor) error { a.checkProcessNICs(a.pns); return nil }})
}

// checkProcessNICs says, once per process, that a watched process was
// not judged against a NIC it uses: its NIC is unknown (and no --nic
// named one), or the NICs it uses are not audited.
func (a *auditor) checkProcessNICs(pns []ProcessNIC) {
	for _, pn := range pns {
		subj := fmt.Sprintf("%s (PID %d)", pn.Comm, pn.PID)
		var left []string
		for _, n := range pn.NICs {
			if !slices.Contains(pn.Judged, n) {
				left = append(left, n)
			}
		}
		switch {
		case pn.Known() && len(left) > 0:
			why := "which this audit leaves out (--nic names others)"
			if len(a.opts.NICs) == 0 {
				why = "which this audit does not cover (no IRQs found for it)"
			}
			a.add(Finding{Check: CheckProcNICUnaudited, Severity: SeverityInfo, Subject: subj, PID: pn.PID,
				Message: fmt.Sprintf("%s uses %s (from its sockets: %s), %s: not judged against %s",
					subj, strings.Join(left, ", "), first(pn.How), why, plural(len(left), "it", "them")),
				Fix: fmt.Sprintf("irqnuma audit %s--pid %d", nicFlags(left), pn.PID)})
		case !pn.Known() && pn.JudgedBy == "":
			a.add(Finding{Check: CheckProcNICUnknown, Severity: SeverityInfo, Subject: subj, PID: pn.PID,
				Message: unknownMessage(subj, pn.Use),
				Fix:     fmt.Sprintf("name the NIC it uses: irqnuma audit --nic NIC --pid %d (or audit it once it has its connections)", pn.PID)})
		}
	}
}

// unknownMessage says why a process's NIC is not known.
func unknownMessage(subj string, u nicuse.Use) string {
	const tail = ": it was judged against no NIC"
	// nicuse.Of puts the line that decided the attribution first.
	sock, _, _ := strings.Cut(first(u.How), ": ")
	switch a, _ := u.Attribution.Get(); a {
	case nicuse.AttributionAny:
		return fmt.Sprintf("%s is bound to every address only (%s), so any NIC may carry its traffic%s", subj, sock, tail)
	case nicuse.AttributionLoopback:
		return fmt.Sprintf("%s's sockets stay on the host (%s)%s", subj, sock, tail)
	}
	return fmt.Sprintf("which NIC %s uses is unknown: %s%s", subj, first(u.How), tail)
}

// first is the first line of how, "" for none.
func first(how []string) string {
	if len(how) == 0 {
		return ""
	}
	return how[0]
}

// nicFlags is "--nic eth0 --nic eth1 ".
func nicFlags(nics []string) string {
	var b strings.Builder
	for _, n := range nics {
		b.WriteString("--nic " + n + " ")
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
