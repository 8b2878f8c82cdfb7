package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/nicuse"
	"github.com/irqnuma/irqnuma/proc"
)

// ProcessNIC is which NICs a watched process uses (nicuse.Use) and which
// the audit judged it against. Its JSON form is an entry of the audit's
// "processes": fields are added, never renamed.
type ProcessNIC struct {
	nicuse.Use
	// Judged are the NICs its proc- checks ran against, by name: the
	// audited NICs its sockets show it uses; when they cannot tell, the
	// NICs named with --nic; [] for none.
	Judged []string `json:"judged"`
	// JudgedBy says which: "sockets", "--nic", or "" for none.
	JudgedBy string `json:"judged_by"`
}

// Processes says, for each watched process, which NICs it uses and which
// the audit judges it against: a process is judged only against the NICs
// its sockets show it uses (opts.Uses; a process missing there is
// unknown); when they cannot tell, against the NICs named with --nic
// (opts.NICs); without those, against none.
func Processes(audited []string, procs []*proc.Process, opts Options) []ProcessNIC {
	out := make([]ProcessNIC, 0, len(procs))
	for _, p := range procs {
		u, ok := useOf(opts.Uses, p.PID)
		if !ok {
			u = nicuse.Use{PID: p.PID, Comm: p.Comm, NICs: []string{}, Attribution: nicuse.Unknown, How: []string{"its sockets were not read"}}
		}
		pn := ProcessNIC{Use: u, Judged: []string{}}
		switch {
		case u.Known():
			for _, n := range u.NICs {
				if slices.Contains(audited, n) {
					pn.Judged = append(pn.Judged, n)
				}
			}
			if len(pn.Judged) > 0 {
				pn.JudgedBy = "sockets"
			}
		case len(opts.NICs) > 0:
			pn.Judged = append(pn.Judged, audited...)
			if len(pn.Judged) > 0 {
				pn.JudgedBy = "--nic"
			}
		}
		out = append(out, pn)
	}
	return out
}

func useOf(uses []nicuse.Use, pid int) (nicuse.Use, bool) {
	for _, u := range uses {
		if u.PID == pid {
			return u, true
		}
	}
	return nicuse.Use{}, false
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
	switch u.Attribution {
	case nicuse.AnyNIC:
		return fmt.Sprintf("%s is bound to every address only (%s), so any NIC may carry its traffic%s", subj, sock, tail)
	case nicuse.Loopback:
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
