package audit

import (
	"fmt"

	"github.com/irqnuma/irqnuma/internal/judge/zc"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// The zero-copy prerequisites (zc.Check), judged only when the audit is
// asked for them (audit --zc rx|tx): zc-blocked for one that does not
// hold, zc-unknown for one that cannot be told.
const (
	CheckZCBlocked Check = "zc-blocked"
	CheckZCUnknown Check = "zc-unknown"
)

// ZCMode is which zero-copy path the audit judges.
type ZCMode string

// The zero-copy modes of Selection.ZC.
const (
	ZCModeReceive ZCMode = "rx"
	ZCModeSend    ZCMode = "tx"
)

func init() {
	register(&check{ids: []Check{CheckZCBlocked, CheckZCUnknown}, nic: (*auditor).checkZC})
}

// readZC checks every audited NIC for the mode s.ZC, on the steering
// already read; a NIC it cannot check has its error instead.
func readZC(fsys kfile.FS, st *State, s Selection) (map[string]*zc.Report, map[string]error) {
	reports, errs := map[string]*zc.Report{}, map[string]error{}
	for _, name := range AuditedNICs(st.Host, st.IRQs, s.NICs) {
		o := zc.Options{Send: s.ZC == ZCModeSend}
		if n := st.Steer.NIC(name); n != nil {
			o.Steer = n
		}
		r, err := zc.Check(fsys, st.Host, name, o)
		if err != nil {
			errs[name] = err
			continue
		}
		reports[name] = r
	}
	return reports, errs
}

// checkZC turns each prerequisite that does not hold into a warning and
// each unknown into a note, with zc's evidence and fix.
func (a *auditor) checkZC(c *nicCtx) error {
	if err := a.opts.ZCErr[c.nic.Name]; err != nil {
		return skip(c.nic.Name, string(CheckZCBlocked), err.Error())
	}
	r := a.opts.ZC[c.nic.Name]
	if r == nil {
		return nil // not asked
	}
	path := "zero-copy receive"
	if r.Send {
		path = "zero-copy send"
	}
	for _, p := range r.Prereqs {
		f := Finding{NIC: c.nic.Name, Subject: string(p.ID), IRQ: []int{}, Fix: p.Fix}
		switch st, known := p.Status.Get(); {
		case known && st == zc.StatusFails:
			f.Check, f.Severity = CheckZCBlocked, SeverityWarning
			f.Message = fmt.Sprintf("%s on %s: %s does not hold: %s", path, c.nic.Name, p.What, p.Evidence)
		case !known:
			f.Check, f.Severity = CheckZCUnknown, SeverityInfo
			f.Message = fmt.Sprintf("%s on %s: %s is unknown: %s", path, c.nic.Name, p.What, p.Evidence)
		default:
			continue
		}
		if f.Fix == "" {
			f.Fix = "check it on the host itself, as the application's user: irqnuma zc check " + c.nic.Name
			if r.Send {
				f.Fix += " --send"
			}
		}
		if p.Cost != "" {
			f.Message += " (" + p.Cost + ")"
		}
		a.add(f)
	}
	return nil
}
