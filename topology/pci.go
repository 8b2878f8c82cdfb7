package topology

import (
	"github.com/jaypipes/ghw"
	"github.com/jaypipes/ghw/pkg/pci"
	"github.com/jaypipes/pcidb"
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
		d := info.GetDevice(n.PCI)
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
