package audit

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
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

// judged is ProcessNIC's own fields, which its JSON writes after the
// Use's.
type judged struct {
	Judged   []string `json:"judged"`
	JudgedBy string   `json:"judged_by"`
}

// MarshalJSON writes the Use's fields (nicuse.Use.MarshalJSON, which the
// embedding would otherwise promote over the whole entry) and then
// Judged and JudgedBy, in one object.
func (p ProcessNIC) MarshalJSON() ([]byte, error) {
	u, err := json.Marshal(p.Use)
	if err != nil {
		return nil, err
	}
	j, err := json.Marshal(judged{Judged: p.Judged, JudgedBy: p.JudgedBy})
	if err != nil {
		return nil, err
	}
	if len(u) < 2 || u[len(u)-1] != '}' {
		return nil, errors.New("audit: a process's use is not a JSON object")
	}
	out := append(u[:len(u)-1:len(u)-1], ',')
	return append(out, j[1:]...), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *ProcessNIC) UnmarshalJSON(b []byte) error {
	var j judged
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if err := json.Unmarshal(b, &p.Use); err != nil {
		return err
	}
	p.Judged, p.JudgedBy = j.Judged, j.JudgedBy
	return nil
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
			u = nicuse.NotRead(p.PID, p.Comm)
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
