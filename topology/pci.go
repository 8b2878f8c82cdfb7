package topology

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jaypipes/ghw"
	"github.com/jaypipes/ghw/pkg/pci"
	"github.com/jaypipes/pcidb"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// NamePCIDevices fills in the vendor and product names of the NICs' PCI
// functions from the pci.ids database inside the host tree, when it has
// one; otherwise the NICs keep their numeric ids. It never fetches the
// database from the network and runs no tools. Naming is best effort: a
// failure leaves names empty and says so in Notes.
//
// It is separate from Read because loading pci.ids takes tens of
// milliseconds, which only the topology view needs.
func (h *Host) NamePCIDevices() {
	hasPCI := false
	for _, n := range h.NICs {
		hasPCI = hasPCI || n.PCI != ""
	}
	if !hasPCI {
		return
	}
	noFetch := false
	db, err := pcidb.New(pcidb.WithChroot(h.Root), &pcidb.WithOption{EnableNetworkFetch: &noFetch})
	if err != nil {
		h.note("no pci.ids under the root: PCI devices shown by id only")
		return
	}
	info, err := pci.New(ghw.WithChroot(h.Root), ghw.WithDisableWarnings(), ghw.WithDisableTools(),
		ghw.WithDisableTopology(), ghw.WithPCIDB(db))
	if err != nil {
		h.note("PCI names unavailable: %v", err)
		return
	}
	for i := range h.NICs {
		n := &h.NICs[i]
		if n.PCI == "" {
			continue
		}
		// ghw's own device scan stops at the first function without a
		// modalias (captures often lack them), so each NIC's function is
		// looked up from its own modalias, or from its ids when the tree
		// has no modalias.
		modalias := h.pciModalias(n)
		if modalias == "" {
			continue
		}
		d := info.ParseDevice(n.PCI, modalias)
		if d == nil {
			continue
		}
		if d.Vendor != nil && d.Vendor.Name != "" && d.Vendor.Name != unknownName {
			n.Vendor = d.Vendor.Name
		}
		if d.Product != nil && d.Product.Name != "" && d.Product.Name != unknownName {
			n.Product = d.Product.Name
		}
	}
}

// unknownName is what ghw puts where pci.ids has no entry.
const unknownName = "unknown"

// pciModalias returns the modalias of a NIC's PCI function
// ("pci:v000015B3d0000101Dsv...bc02sc00i00"), built from its vendor,
// device and class files when the tree has no modalias file.
func (h *Host) pciModalias(n *NIC) string {
	dir := h.Path("sys/bus/pci/devices", n.PCI)
	if s, err := kfile.String(dir + "/modalias"); err == nil && strings.HasPrefix(s, "pci:") {
		return strings.TrimSpace(s)
	}
	hex := func(file string) (uint64, bool) {
		s, err := kfile.String(dir + "/" + file)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(s), "0x"), 16, 32)
		return v, err == nil
	}
	vendor, ok1 := hex("vendor")
	device, ok2 := hex("device")
	if !ok1 || !ok2 {
		return ""
	}
	subv, _ := hex("subsystem_vendor")
	subd, _ := hex("subsystem_device")
	class, _ := hex("class")
	return fmt.Sprintf("pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X",
		vendor, device, subv, subd, class>>16&0xff, class>>8&0xff, class&0xff)
}
