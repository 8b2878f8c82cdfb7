package audit

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/irqnuma/irqnuma/internal/host/proc"
)

// Watched processes that do not run: proc-absent. CheckProcAbsent says a process named with --pid or --comm does not
// run, or that the tree holds it only in part (a snapshot taken without
// naming it): nothing about it was checked.
const CheckProcAbsent Check = "proc-absent"

func init() {
	register(&check{ids: []Check{CheckProcAbsent}, host: (*auditor).procAbsent})
}

// procAbsent: proc-absent. A process named with --pid or --comm that does
// not run, or that the tree holds only in part; a --cgroup that names no
// group, or one without a running process.
func (a *auditor) procAbsent() error {
	for _, sel := range a.opts.Absent {
		if sel.Kind.Group() {
			a.cgroupAbsent(sel)
			continue
		}
		a.add(Finding{Check: CheckProcAbsent, Severity: SeverityWarning, Subject: sel.String(),
			Message: fmt.Sprintf("no process matches %s under %s: nothing about it was checked", sel, a.opts.ProcRoot),
			Fix:     "start it, or name it as /proc/PID/comm does (the executable's name, cut to 15 bytes)"})
	}
	for _, m := range a.opts.Partial {
		for _, pid := range m.Partial {
			dir := filepath.Join(a.opts.ProcRoot, strconv.Itoa(pid))
			a.add(Finding{Check: CheckProcAbsent, Severity: SeverityWarning, Subject: fmt.Sprintf("%s (process %d)", m.Selector, pid), PID: pid,
				Message: fmt.Sprintf("process %d matches %s, but the capture holds only its comm (%s has no status), so nothing about it was checked", pid, m.Selector, dir),
				Fix:     fmt.Sprintf("take the snapshot naming it: irqnuma snapshot %s -o FILE.tar.gz", m.Selector)})
		}
	}
	return nil
}

// cgroupAbsent: a --cgroup the root does not hold, or one that holds no
// running process.
func (a *auditor) cgroupAbsent(sel proc.Selector) {
	for _, m := range a.opts.Cgroups {
		if m.Selector != sel {
			continue
		}
		if m.Group == nil && sel.Kind != proc.SelectorKindCgroup {
			a.add(Finding{Check: CheckProcAbsent, Severity: SeverityWarning, Subject: sel.String(),
				Message: fmt.Sprintf("no %s %s on this node (%s): nothing about it was checked", sel.Kind, sel.Pod, m.Missing.Detail),
				Fix:     "name a pod that runs on this node (kubectl get pods -A -o wide --field-selector spec.nodeName=NODE), or a container ID crictl ps shows"})
			return
		}
		if m.Group == nil {
			a.add(Finding{Check: CheckProcAbsent, Severity: SeverityWarning, Subject: sel.String(),
				Message: fmt.Sprintf("no control group %s under %s: nothing about it was checked", sel.Cgroup, filepath.Join(filepath.Dir(a.opts.ProcRoot), "sys/fs/cgroup")),
				Fix:     "name it as /proc/PID/cgroup shows it for one of its processes (cat /proc/PID/cgroup)"})
			return
		}
		a.add(Finding{Check: CheckProcAbsent, Severity: SeverityWarning, Subject: sel.String(),
			Message: fmt.Sprintf("control group %s (%s) holds no running process: none was checked", m.Group.Path, m.Group.Dir),
			Fix:     "start the workload in it, or name the group its processes are in (cat /proc/PID/cgroup)"})
		return
	}
}
