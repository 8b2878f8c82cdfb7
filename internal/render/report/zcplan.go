package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/irqnuma/irqnuma/internal/tune"
)

// WriteZCPlan writes zc prepare's plan: the steps, those skipped with
// why, the blockers, and the CPUs (the application's in every
// tune.MaskFormats form).
func WriteZCPlan(w io.Writer, p *tune.ZCPlan) {
	fmt.Fprintf(w, "zc prepare %s queue %d port %d\n", p.NIC, p.Queue, p.Port)
	for _, s := range p.Steps {
		fmt.Fprintf(w, "  change  %s\n", strings.TrimPrefix(s.Name(), p.NIC+" "))
	}
	fmt.Fprintf(w, "  change  queue %d's IRQ and NAPI thread to CPU %d\n", p.Queue, p.IRQCPU)
	for _, s := range p.Skipped {
		fmt.Fprintf(w, "  skip    %s: %s\n", s.Step, s.Because)
	}
	for _, b := range p.Blockers {
		fmt.Fprintf(w, "  blocker %s\n", b)
	}
	fmt.Fprintf(w, "application CPUs (another core of %s's node than CPU %d and its siblings):\n", p.NIC, p.IRQCPU)
	for _, format := range tune.MaskFormats {
		if s, err := p.App.Format(format, false); err == nil {
			fmt.Fprintf(w, "  %-8s %s\n", format, s)
		}
	}
}
