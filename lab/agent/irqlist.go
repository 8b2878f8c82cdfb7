package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// irqJSON is one IRQ of `irqnuma irq list -o json`. managed is a
// pointer: null says unknown.
type irqJSON struct {
	IRQ       int     `json:"irq"`
	Name      string  `json:"name"`
	NIC       string  `json:"nic"`
	Queue     int     `json:"queue"`
	Kind      string  `json:"kind"`
	Dir       string  `json:"dir"`
	Node      int     `json:"node"`
	Local     *bool   `json:"local"`
	Managed   *bool   `json:"managed"`
	Affinity  *string `json:"affinity"`
	Effective *string `json:"effective"`
}

type irqDoc struct {
	IRQs  []irqJSON `json:"irqs"`
	Notes []string  `json:"notes"`
}

func (d irqDoc) get(n int) (irqJSON, bool) {
	for _, q := range d.IRQs {
		if q.IRQ == n {
			return q, true
		}
	}
	return irqJSON{}, false
}

func fmtBool(b *bool) string {
	if b == nil {
		return "null"
	}
	return strconv.FormatBool(*b)
}

// refusedWrite says whether err is the kernel refusing user space the
// IRQ's affinity: EIO before 6.12, EPERM since; EACCES where the file's
// mode stops the open.
func refusedWrite(err error) bool {
	return errors.Is(err, unix.EIO) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)
}

func fileMode(p string) string {
	st, err := os.Stat(p)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%04o", st.Mode().Perm())
}

// scenarioIRQList: every queue vector with its queue index; managed
// reported as managed (or unknown, never "no"), proven against real
// writes: every IRQ's current affinity is written back to it, and the
// kernel's answer is the truth.
func scenarioIRQList(l *lab) {
	refused := map[int]error{}
	for _, n := range allIRQs() {
		refused[n] = writeAffinity(n, affinityList(n))
	}
	var d irqDoc
	jsonOf(&d, "irq", "list", "--all")

	for _, n := range l.nics {
		for _, q := range n.queues() {
			j, ok := d.get(q.irq)
			check(fmt.Sprintf("%s-irq%d-queue", n.Name, q.irq), ok && j.NIC == n.Name && j.Queue == q.queue && j.Kind == "queue" && j.Dir == q.dir,
				"/proc/interrupts: %s queue %d %s; irqnuma: listed %v nic %q queue %d kind %q dir %q", n.Name, q.queue, q.dir, ok, j.NIC, j.Queue, j.Kind, j.Dir)
		}
	}

	known := 0
	for _, n := range allIRQs() {
		j, ok := d.get(n)
		if !ok {
			check(fmt.Sprintf("irq%d-listed", n), false, "/proc/irq/%d exists; irq list --all leaves it out", n)
			continue
		}
		err := refused[n]
		what := "accepted"
		if err != nil {
			what = "refused: " + err.Error()
		}
		detail := fmt.Sprintf("IRQ %d %s: the write of its own affinity was %s; smp_affinity mode %s; irqnuma managed %s",
			n, j.Name, what, fileMode(irqDir(n)+"/smp_affinity"), fmtBool(j.Managed))
		switch {
		case err != nil && !refusedWrite(err):
			info(fmt.Sprintf("irq%d-write", n), "%s", detail)
		case j.Managed == nil:
			// Unknown is allowed where the kernel does not mark them.
			check(fmt.Sprintf("irq%d-managed", n), !kernelAtLeast(6, 12), "%s (6.12 and later make a managed IRQ's smp_affinity 0444: irqnuma should know)", detail)
		default:
			known++
			check(fmt.Sprintf("irq%d-managed", n), *j.Managed == (err != nil), "%s", detail)
		}
	}
	info("managed-known", "irqnuma knew managed for %d of %d IRQs", known, len(allIRQs()))

	// The NVMe queue IRQs are the kernel-managed ones of this guest.
	must("nvme-queues", len(l.nvme.queues) > 0, "nvme0 queue IRQs %v", l.nvme.queues)
	for _, n := range l.nvme.queues {
		check(fmt.Sprintf("nvme-irq%d-refused", n), refusedWrite(refused[n]), "write to nvme queue IRQ %d: %v (mode %s)", n, refused[n], fileMode(irqDir(n)+"/smp_affinity_list"))
	}
	if len(l.nvme.queues) > 0 {
		n := l.nvme.queues[0]
		info("nvme-managed-facts", "IRQ %d: smp_affinity %s, smp_affinity_list %s, node %s (device on %d), write: %v",
			n, fileMode(irqDir(n)+"/smp_affinity"), fileMode(irqDir(n)+"/smp_affinity_list"), readFile(irqDir(n)+"/node"), l.nvme.node, refused[n])
	}

	// The table must never say "no" for a managed IRQ.
	tbl := irqnuma("irq", "list", "--all")
	must("table", tbl.code == 0, "%s", tbl)
	rows := strings.Split(strings.TrimSpace(tbl.stdout), "\n")
	header := strings.Fields(rows[0])
	col := -1
	for i, h := range header {
		if h == "MANAGED" {
			col = i
		}
	}
	must("table-managed-column", col >= 0, "header %q", rows[0])
	isQueue := map[string]bool{}
	for _, n := range l.nvme.queues {
		isQueue[strconv.Itoa(n)] = true
	}
	seen := 0
	for _, r := range rows[1:] {
		f := strings.Fields(r)
		if len(f) != len(header) || !isQueue[f[0]] {
			continue
		}
		seen++
		check("table-nvme-irq"+f[0], f[col] != "no", "row %q: MANAGED %q", r, f[col])
	}
	check("table-nvme-rows", seen == len(l.nvme.queues), "%d of %d NVMe queue IRQs found in the table:\n%s", seen, len(l.nvme.queues), tbl.stdout)

	// /proc/irq/N/node of a managed IRQ is the node of its CPUs, not the
	// device's: irqnuma must not call an NVMe queue local by it.
	for _, n := range l.nvme.queues {
		j, _ := d.get(n)
		if j.Local == nil {
			continue
		}
		eff := effective(n)
		if eff == 0 {
			eff = mustCPUs(affinityList(n))
		}
		want := eff.within(l.nodes[l.nvme.node])
		check(fmt.Sprintf("nvme-irq%d-local", n), *j.Local == want, "IRQ %d on CPUs %s, device on node %d (CPUs %s), /proc/irq/%d/node %s: irqnuma local %v",
			n, eff, l.nvme.node, l.nodes[l.nvme.node], n, readFile(irqDir(n)+"/node"), *j.Local)
	}
}
