package hostgen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

func (h *Host) renderProc(t *Tree) {
	t.Line("proc/cmdline", h.Cmdline)
	t.File("proc/interrupts", h.Interrupts())
	h.renderIRQDirs(t)
	t.File("proc/stat", h.stat())
	t.File("proc/softirqs", h.softirqs())
	t.File("proc/net/softnet_stat", h.softnetStat())
}

// prec is the width of the IRQ number column, as show_interrupts
// computes it from nr_irqs.
func (h *Host) prec() int {
	prec := 3
	for j := 1000; prec < 10 && j <= h.NrIRQs; j *= 10 {
		prec++
	}
	return prec
}

// padLeft appends v right-aligned in a field of width w.
func padLeft(b []byte, v uint64, w int) []byte {
	var tmp [20]byte
	d := strconv.AppendUint(tmp[:0], v, 10)
	for i := len(d); i < w; i++ {
		b = append(b, ' ')
	}
	return append(b, d...)
}

func padStr(b []byte, s string, w int, left bool) []byte {
	if left {
		b = append(b, s...)
	}
	for i := len(s); i < w; i++ {
		b = append(b, ' ')
	}
	if !left {
		b = append(b, s...)
	}
	return b
}

// Interrupts returns the text of /proc/interrupts: a header naming the
// online CPUs, one row per IRQ with a count column per online CPU, then
// the architecture's named rows.
func (h *Host) Interrupts() []byte {
	prec := h.prec()
	online := h.onlineIDs()
	b := make([]byte, 0, (len(h.IRQs)+30)*(len(online)*11+80))
	b = padStr(b, "", prec+8, false)
	for _, c := range online {
		b = padStr(b, "CPU"+strconv.Itoa(c), 11, true)
	}
	b = append(b, '\n')
	for _, q := range h.IRQs {
		b = padLeft(b, uint64(q.N), prec)
		b = append(b, ':')
		if !h.Format.NewCounts {
			b = append(b, ' ')
		}
		for _, c := range online {
			if h.Format.NewCounts {
				b = append(b, ' ')
				b = padLeft(b, q.Count[c], 10)
			} else {
				b = padLeft(b, q.Count[c], 10)
				b = append(b, ' ')
			}
		}
		b = append(b, ' ')
		b = padStr(b, q.Chip, 8, false)
		b = append(b, ' ')
		b = padLeft(b, uint64(q.HWIRQ), prec)
		if h.Arch == ArchARM64 {
			b = append(b, ' ')
			b = padStr(b, q.Trigger, 8, true)
		} else {
			b = append(b, '-')
			b = padStr(b, q.Trigger, 8, true)
		}
		if len(q.Actions) > 0 {
			b = append(b, "  "...)
			b = append(b, strings.Join(q.Actions, ", ")...)
		}
		b = append(b, '\n')
	}
	if h.Arch == ArchARM64 {
		return h.arm64Rows(b, prec, online)
	}
	return h.x86Rows(b, prec, online)
}

// zeroRow names the x86 rows that stay 0 on a healthy host.
var zeroRow = map[string]bool{"SPU": true, "RTR": true, "TRM": true, "THR": true, "DFR": true,
	"MCE": true, "PIN": true, "NPI": true, "PIW": true}

// archCount is a deterministic per-CPU count for the named rows.
func archCount(row, cpu int) uint64 {
	return uint64((row*7919 + cpu*104729) % 1000003)
}

func (h *Host) x86Rows(b []byte, prec int, online []int) []byte {
	rows := []struct{ name, desc string }{
		{"NMI", "Non-maskable interrupts"}, {"LOC", "Local timer interrupts"},
		{"SPU", "Spurious interrupts"}, {"PMI", "Performance monitoring interrupts"},
		{"IWI", "IRQ work interrupts"}, {"RTR", "APIC ICR read retries"},
		{"RES", "Rescheduling interrupts"}, {"CAL", "Function call interrupts"},
		{"TLB", "TLB shootdowns"}, {"TRM", "Thermal event interrupts"},
		{"THR", "Threshold APIC interrupts"}, {"DFR", "Deferred Error APIC interrupts"},
		{"MCE", "Machine check exceptions"}, {"MCP", "Machine check polls"},
		{"ERR", ""}, {"MIS", ""},
		{"PIN", "Posted-interrupt notification event"}, {"NPI", "Nested posted-interrupt event"},
		{"PIW", "Posted-interrupt wakeup event"}, {"HYP", "Hypervisor callback interrupts"},
	}
	if h.X86Rows != nil {
		byName := map[string]string{}
		for _, r := range rows {
			byName[r.name] = r.desc
		}
		rows = rows[:0:0]
		for _, n := range h.X86Rows {
			rows = append(rows, struct{ name, desc string }{n, byName[n]})
		}
	} else {
		rows = rows[:len(rows)-1] // HYP only on a guest
	}
	for i, r := range rows {
		b = padStr(b, r.name, prec, false)
		b = append(b, ": "...)
		if r.desc == "" { // ERR and MIS: one machine-wide count
			b = padLeft(b, 0, 10)
			b = append(b, '\n')
			continue
		}
		for _, c := range online {
			v := archCount(i, c)
			if zeroRow[r.name] {
				v = 0
			}
			b = padLeft(b, v, 10)
			b = append(b, ' ')
		}
		b = append(b, "  "...)
		b = append(b, r.desc...)
		b = append(b, '\n')
	}
	return b
}

func (h *Host) arm64Rows(b []byte, prec int, online []int) []byte {
	ipis := []string{
		"Rescheduling interrupts", "Function call interrupts", "CPU stop interrupts",
		"CPU stop (for crash dump) interrupts", "Timer broadcast interrupts",
		"IRQ work interrupts", "CPU wake-up interrupts",
	}
	for i, d := range ipis {
		b = padStr(b, "IPI", prec-1, false)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ':')
		if prec >= 4 {
			b = append(b, ' ')
		}
		for _, c := range online {
			var v uint64
			if i < 2 {
				v = archCount(i, c)
			}
			b = padLeft(b, v, 10)
			b = append(b, ' ')
		}
		b = append(b, "      "...)
		b = append(b, d...)
		b = append(b, '\n')
	}
	b = padStr(b, "Err", prec, false)
	b = append(b, ": "...)
	b = padLeft(b, 0, 10)
	return append(b, '\n')
}

func (h *Host) renderIRQDirs(t *Tree) {
	t.Line("proc/irq/default_smp_affinity", h.mask(h.Possible()))
	t.Mode("proc/irq/default_smp_affinity", 0o644)
	for _, q := range h.IRQs {
		d := "proc/irq/" + strconv.Itoa(q.N) + "/"
		t.Line(d+"smp_affinity", h.mask(q.Affinity))
		t.Line(d+"smp_affinity_list", q.Affinity.List())
		t.Line(d+"effective_affinity", h.mask(q.Effective))
		t.Line(d+"effective_affinity_list", q.Effective.List())
		t.Line(d+"affinity_hint", h.mask(q.Hint))
		t.Line(d+"node", strconv.Itoa(q.Node))
		var total uint64
		for _, v := range q.Count {
			total += v
		}
		t.File(d+"spurious", fmt.Appendf(nil, "count %d\nunhandled 0\nlast_unhandled 0 ms\n", total%100000))
		if q.Managed || q.NoBalance {
			t.Mode(d+"smp_affinity", 0o444)
			t.Mode(d+"smp_affinity_list", 0o444)
		}
		for _, a := range q.Actions {
			t.Dir(d + a)
		}
	}
}

// stat returns /proc/stat: the cpu lines of the online CPUs, the intr line
// (total, then one count per IRQ number below nr_irqs) and the rest.
func (h *Host) stat() []byte {
	online := h.onlineIDs()
	var b []byte
	line := func(name string, cpu int) {
		u := uint64(100000 + cpu*37)
		b = fmt.Appendf(b, "%s %d 0 %d %d %d 0 %d 0 0 0\n", name, u, u/3, u*20, u/50, u/40)
	}
	var sum [5]uint64
	for _, c := range online {
		u := uint64(100000 + c*37)
		sum[0] += u
		sum[1] += u / 3
		sum[2] += u * 20
		sum[3] += u / 50
		sum[4] += u / 40
	}
	b = fmt.Appendf(b, "cpu  %d 0 %d %d %d 0 %d 0 0 0\n", sum[0], sum[1], sum[2], sum[3], sum[4])
	for _, c := range online {
		line("cpu"+strconv.Itoa(c), c)
	}
	per := make([]uint64, h.NrIRQs)
	var total uint64
	for _, q := range h.IRQs {
		var s uint64
		for _, v := range q.Count {
			s += v
		}
		if q.N < len(per) {
			per[q.N] = s
		}
		total += s
	}
	b = append(b, "intr "...)
	b = strconv.AppendUint(b, total, 10)
	for _, v := range per {
		b = append(b, ' ')
		b = strconv.AppendUint(b, v, 10)
	}
	b = append(b, '\n')
	b = append(b, "ctxt 8123456789\nbtime 1718000000\nprocesses 1234567\nprocs_running 2\nprocs_blocked 0\n"...)
	b = append(b, "softirq 0 0 0 0 0 0 0 0 0 0 0\n"...)
	return b
}

var softirqNames = []string{"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"}

// softirqs returns /proc/softirqs, which has a column per possible CPU.
func (h *Host) softirqs() []byte {
	var b []byte
	b = padStr(b, "", 20, false)
	for _, c := range h.CPUs {
		b = padStr(b, "CPU"+strconv.Itoa(c.ID), 11, true)
	}
	b = append(b, '\n')
	for i, n := range softirqNames {
		b = padStr(b, n, 12, false)
		b = append(b, ':')
		for _, c := range h.CPUs {
			var v uint64
			if c.Online {
				v = archCount(i+40, c.ID)
				if n == "HI" || n == "IRQ_POLL" {
					v = 0
				}
			}
			b = append(b, ' ')
			b = padLeft(b, v, 10)
		}
		b = append(b, '\n')
	}
	return b
}

// softnetStat returns /proc/net/softnet_stat: one line per online CPU,
// the CPU id in column 13.
func (h *Host) softnetStat() []byte {
	cols := h.Format.SoftnetCols
	if cols == 0 {
		cols = 13
	}
	var b []byte
	for _, c := range h.onlineIDs() {
		v := make([]uint32, cols)
		v[0] = uint32(archCount(60, c))
		v[12] = uint32(c)
		for i, x := range v {
			if i > 0 {
				b = append(b, ' ')
			}
			b = fmt.Appendf(b, "%08x", x)
		}
		b = append(b, '\n')
	}
	return b
}

// sortIRQs orders h.IRQs by number, as /proc/interrupts lists them.
func (h *Host) sortIRQs() {
	slices.SortFunc(h.IRQs, func(a, b *IRQ) int { return a.N - b.N })
}
