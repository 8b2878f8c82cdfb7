package report

import (
	"io"
	"strconv"

	"github.com/irqnuma/irqnuma/affinity"
	"github.com/irqnuma/irqnuma/irq"
)

// WritePin writes the steps of an irq pin or restore as a table: with
// results, what became of each and where the IRQ is now; withAction, what
// each step was to do.
func WritePin(w io.Writer, rows []affinity.Row, results, withAction bool) error {
	header := []string{"IRQ", "NIC", "QUEUE", "FROM", "TO"}
	if withAction {
		header = append(header, "ACTION")
	}
	if results {
		header = append(header, "RESULT", "AFFINITY", "EFFECTIVE")
	}
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		irqCol, queue := strconv.Itoa(r.IRQ), "other"
		switch {
		case r.Kind == affinity.KindXPS:
			irqCol, queue = "xps", "tx-"+strconv.Itoa(r.Queue)
		case r.IRQ < 0:
			irqCol = "-"
		}
		if r.Kind == irq.KindQueue {
			queue = strconv.Itoa(r.Queue) + r.Dir
		}
		if r.NIC == "" {
			queue = "-"
		}
		row := []string{irqCol, orDash(r.NIC), queue, orDash(r.From), orDash(r.To)}
		if withAction {
			row = append(row, string(r.Action))
		}
		if results {
			row = append(row, string(r.Result), setOrUnknown(r.Affinity), setOrUnknown(r.Effective))
		}
		out = append(out, row)
	}
	if len(out) == 0 {
		_, err := io.WriteString(w, "nothing to do\n")
		return err
	}
	return WriteTable(w, header, out)
}

func setOrUnknown(s *string) string {
	if s == nil {
		return "unknown"
	}
	return orDash(*s)
}
