package topology

import (
	"os"
	"sync"
)

// kept holds files topology read that another reader of the same host
// reads next (irq.Load: /proc/interrupts, and the node and affinity
// files of the IRQs an inferred NIC's node came from), so that a
// command reads each once: one reading, handed down. Each is handed out
// once (TakeRead) and then forgotten, so it is neither held past its use
// nor served in place of a later, fresh reading.
type kept struct {
	mu    sync.Mutex
	reads map[string]keptRead
	// drivers are the PCI functions' drivers read (PCIDriver), by
	// address: asked again by the audit, kept for as long as the host.
	drivers map[string]string
}

// keptRead is one file's reading: its content and mode, or the error.
type keptRead struct {
	b    []byte
	mode os.FileMode
	err  error
}

// readKeep reads p through the host's root, whole (kfile.FS.Read) or as
// a small file (ReadMode), and keeps the outcome for TakeRead.
func (h *Host) readKeep(p string, whole bool) ([]byte, os.FileMode, error) {
	var (
		b    []byte
		mode os.FileMode
		err  error
	)
	if whole {
		b, err = h.fs.Read(p)
	} else {
		b, mode, err = h.fs.ReadMode(p, nil)
	}
	if h.kept == nil {
		return b, mode, err
	}
	h.kept.mu.Lock()
	defer h.kept.mu.Unlock()
	if h.kept.reads == nil {
		h.kept.reads = map[string]keptRead{}
	}
	h.kept.reads[p] = keptRead{b: b, mode: mode, err: err}
	return b, mode, err
}

// take returns and forgets the kept reading of p, if any.
func (h *Host) take(p string) (keptRead, bool) {
	if h.kept == nil {
		return keptRead{}, false
	}
	h.kept.mu.Lock()
	defer h.kept.mu.Unlock()
	r, ok := h.kept.reads[p]
	delete(h.kept.reads, p)
	return r, ok
}

// TakeRead returns what topology.Read read of the small file p (a path
// under the root, as Path makes it): its content, permission bits and
// error, and forgets it; a file it did not read, or one already taken,
// is read now into buf (kfile.FS.ReadMode). Readers of the host that
// read a file topology may have read already (irq's /proc/irq/N files)
// read it through here.
func (h *Host) TakeRead(p string, buf []byte) ([]byte, os.FileMode, error) {
	if r, ok := h.take(p); ok {
		return r.b, r.mode, r.err
	}
	return h.fs.ReadMode(p, buf)
}

// TakeInterrupts returns /proc/interrupts as topology.Read read it (to
// infer NICs from IRQ names), and forgets it; when it did not, or it
// was taken, the file is read now (kfile.FS.Read).
func (h *Host) TakeInterrupts() ([]byte, error) {
	p := h.Path("proc/interrupts")
	if r, ok := h.take(p); ok {
		return r.b, r.err
	}
	return h.fs.Read(p)
}

// keepDriver keeps the driver of the PCI function bdf for PCIDriver.
func (h *Host) keepDriver(bdf, driver string) {
	if h.kept == nil {
		return
	}
	h.kept.mu.Lock()
	defer h.kept.mu.Unlock()
	if h.kept.drivers == nil {
		h.kept.drivers = map[string]string{}
	}
	h.kept.drivers[bdf] = driver
}

// keptDriver returns the driver of bdf PCIDriver read, if it did.
func (h *Host) keptDriver(bdf string) (string, bool) {
	if h.kept == nil {
		return "", false
	}
	h.kept.mu.Lock()
	defer h.kept.mu.Unlock()
	drv, ok := h.kept.drivers[bdf]
	return drv, ok
}
