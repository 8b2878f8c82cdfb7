package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/irqnuma/irqnuma/internal/judge/zc"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// WriteZC writes a zero-copy check: what was checked, a line per
// prerequisite (its id, verdict and evidence, then the command that
// fixes it and what it costs), and the blockers, the first named.
func WriteZC(w io.Writer, r *zc.Report) error {
	if err := linef(w, "%s", zcTitle(r)); err != nil {
		return err
	}
	if err := linef(w, "%-18s %-13s %s", "PREREQUISITE", "STATUS", "EVIDENCE"); err != nil {
		return err
	}
	for _, p := range r.Prereqs {
		if err := linef(w, "%-18s %-13s %s", p.ID, p.Status.String(), p.Evidence); err != nil {
			return err
		}
		if p.Fix != "" && !unknown.Is(p.Status, zc.StatusHolds) {
			if err := linef(w, "%-32s fix: %s", "", p.Fix); err != nil {
				return err
			}
		}
		if p.Cost != "" {
			if err := linef(w, "%-32s cost: %s", "", p.Cost); err != nil {
				return err
			}
		}
	}
	return linef(w, "%s", zcVerdict(r))
}

func zcTitle(r *zc.Report) string {
	nic := r.NIC
	if r.Driver != "" {
		nic += " (" + r.Driver + ")"
	}
	if r.Send {
		return nic + ": zero-copy send"
	}
	q := "queue unknown (" + r.Queue.Why().Detail + ")"
	if n, ok := r.Queue.Get(); ok {
		q = fmt.Sprintf("queue %d (%s)", n, r.QueueBy)
	}
	port := "any port"
	if r.Port != nil {
		port = fmt.Sprintf("TCP port %d", *r.Port)
	}
	return fmt.Sprintf("%s: zero-copy receive on %s, %s", nic, q, port)
}

// zcVerdict is the last line: no, with the first blocker; else yes, or
// not known, with the unknowns named.
func zcVerdict(r *zc.Report) string {
	var unknown []string
	for _, p := range r.Prereqs {
		if !p.Status.Known() {
			unknown = append(unknown, string(p.ID))
		}
	}
	if b := r.Blocker(); b != nil {
		ids := make([]string, 0, len(r.Prereqs))
		for _, p := range r.Blockers() {
			ids = append(ids, string(p.ID))
		}
		return fmt.Sprintf("verdict: no, first because %s: %s (does not hold: %s)", b.ID, b.Evidence, strings.Join(ids, ", "))
	}
	if len(unknown) > 0 {
		return "verdict: nothing fails, but unknown: " + strings.Join(unknown, ", ")
	}
	return "verdict: yes, every prerequisite holds"
}
