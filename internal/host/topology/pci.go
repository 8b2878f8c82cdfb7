package topology

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// PCIIDsPaths are where a host keeps the pci.ids database (pciutils,
// hwdata), in the order they are tried, relative to the root.
var PCIIDsPaths = []string{
	"usr/share/hwdata/pci.ids", "usr/share/misc/pci.ids",
	"usr/share/hwdata/pci.ids.gz", "usr/share/misc/pci.ids.gz",
}

// NamePCIDevices fills in the vendor and product names of the NICs' PCI
// functions from the pci.ids database inside the host tree, when it has
// one; otherwise the NICs keep their numeric ids. It never fetches the
// database from the network and runs no tools. Naming is best effort: a
// failure leaves names empty and says so in Notes.
//
// The database is scanned once, for the host's own vendor and device ids
// only, and the scan stops past the highest vendor id wanted (pci.ids is
// sorted by vendor): naming two NICs costs what two names cost, not a
// parse of the whole 1.4 MB file. Only the topology view calls it.
func (h *Host) NamePCIDevices() {
	want := map[pciID]bool{}
	for i := range h.NICs {
		if id, ok := h.pciID(&h.NICs[i]); ok {
			want[id] = true
		}
	}
	if len(want) == 0 {
		return
	}
	var (
		f    *os.File
		name string
		err  error
	)
	for _, p := range PCIIDsPaths {
		name = h.Path(p)
		if f, err = h.fs.OpenFile(name, os.O_RDONLY); err == nil {
			break
		}
	}
	if f == nil {
		h.note("no pci.ids under the root: PCI devices shown by id only")
		return
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			h.note("PCI names unavailable: read %s: %v", name, err)
			return
		}
		r = zr
	}
	vendors, devices, err := scanPCIIDs(r, want)
	if err != nil {
		h.note("PCI names unavailable: read %s: %v", name, err)
		return
	}
	for i := range h.NICs {
		n := &h.NICs[i]
		id, ok := h.pciID(n)
		if !ok {
			continue
		}
		n.Vendor = vendors[id.vendor]
		n.Product = devices[id]
	}
}

// pciID is a PCI function's vendor and device id.
type pciID struct{ vendor, device uint16 }

// pciID returns the ids of a NIC's PCI function: from its vendor and
// device files, else from its modalias ("pci:v000015B3d0000101D...").
func (h *Host) pciID(n *NIC) (pciID, bool) {
	if n.PCI == "" {
		return pciID{}, false
	}
	v, ok1 := parseHex16(n.VendorID)
	d, ok2 := parseHex16(n.DeviceID)
	if ok1 && ok2 {
		return pciID{v, d}, true
	}
	s, err := h.fs.String(h.Path("sys/bus/pci/devices", n.PCI, "modalias"))
	if err != nil {
		return pciID{}, false
	}
	var vid, did uint32
	if _, err := fmt.Sscanf(strings.TrimSpace(s), "pci:v%08Xd%08X", &vid, &did); err != nil || vid > 0xffff || did > 0xffff {
		return pciID{}, false
	}
	return pciID{uint16(vid), uint16(did)}, true
}

// parseHex16 parses a sysfs id attribute such as "0x15b3".
func parseHex16(s string) (uint16, bool) {
	s = strings.TrimSpace(s)
	if len(s) != 6 || !strings.HasPrefix(s, "0x") {
		return 0, false
	}
	v, err := strconv.ParseUint(s[2:], 16, 16)
	return uint16(v), err == nil
}

// scanPCIIDs reads a pci.ids database for the names of the wanted ids:
// vendor lines ("15b3  Mellanox Technologies") and, under each, device
// lines ("\t101d  MT2892 Family [ConnectX-6 Dx]"); subsystem lines (two
// tabs) and the class section ("C 02  Network controller") are skipped.
// It stops past the highest wanted vendor, as the file is sorted by
// vendor id.
func scanPCIIDs(r io.Reader, want map[pciID]bool) (map[uint16]string, map[pciID]string, error) {
	wantVendor := map[uint16]bool{}
	var last uint16
	for id := range want {
		wantVendor[id.vendor] = true
		last = max(last, id.vendor)
	}
	vendors, devices := map[uint16]string{}, map[pciID]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var vendor, prev uint16
	inVendor, sorted := false, true
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) < 7 || line[0] == '#' {
			continue
		}
		if line[0] != '\t' {
			if line[0] == 'C' && line[1] == ' ' {
				break // the class section follows the vendors
			}
			v, ok := hex16(line)
			if !ok || line[4] != ' ' {
				inVendor = false
				continue
			}
			if v < prev {
				sorted = false // an edited file: read it all
			}
			prev = v
			vendor, inVendor = v, wantVendor[v]
			if inVendor {
				vendors[v] = string(bytes.TrimSpace(line[4:]))
			} else if sorted && v > last {
				break
			}
			continue
		}
		if !inVendor || line[1] == '\t' {
			continue
		}
		d, ok := hex16(line[1:])
		if !ok || len(line) < 6 || line[5] != ' ' {
			continue
		}
		if id := (pciID{vendor, d}); want[id] {
			devices[id] = string(bytes.TrimSpace(line[5:]))
		}
	}
	return vendors, devices, sc.Err()
}

// hex16 parses the four hex digits at the start of b.
func hex16(b []byte) (uint16, bool) {
	if len(b) < 5 {
		return 0, false
	}
	var v uint16
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint16(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint16(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint16(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
