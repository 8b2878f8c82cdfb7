package topology

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/pci"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// IOMMU is what /sys says of a host's IOMMUs: the units in
// /sys/class/iommu (dmar0, ivhd0, smmu3...) and the groups in
// /sys/kernel/iommu_groups. A kernel built with IOMMU support has
// /sys/class/iommu even when no IOMMU is active; then it is empty.
type IOMMU struct {
	Units  unknown.Value[[]string] // sys/class/iommu's entries, sorted
	Groups unknown.Value[int]      // number of groups in sys/kernel/iommu_groups
}

// Active reports whether an IOMMU is known to be active: a unit is
// registered, or devices sit in IOMMU groups.
func (m *IOMMU) Active() bool {
	return m != nil && (len(m.Units.Or(nil)) > 0 || m.Groups.Or(0) > 0)
}

// Known reports whether the tree says anything about IOMMUs.
func (m *IOMMU) Known() bool { return m != nil && (m.Units.Known() || m.Groups.Known()) }

// DMAMode is how an IOMMU treats devices' DMA by default: the type of
// its default domain.
type DMAMode string

// The IOMMU's default modes.
const (
	// DMAModePassthrough: DMA addresses are not translated.
	DMAModePassthrough DMAMode = "passthrough"
	// DMAModeTranslated: every DMA address is translated.
	DMAModeTranslated DMAMode = "translated"
	// DMAModeDefault: an IOMMU is on and nothing asks for a mode: the
	// kernel's build default applies, translated unless it was built with
	// CONFIG_IOMMU_DEFAULT_PASSTHROUGH.
	DMAModeDefault DMAMode = "default"
	// DMAModeOff: no IOMMU translates.
	DMAModeOff DMAMode = "off"
)

// String is the mode as output prints it.
func (m DMAMode) String() string { return string(m) }

// IOMMUMode says how the host's IOMMU treats devices' DMA by default (the
// type of its default domain), and how that is known.
type IOMMUMode struct {
	// Mode is the default DMA mode; unknown, with the reason, when
	// neither sysfs nor the command line says.
	Mode unknown.Value[DMAMode]
	// Source is SourceSysfs when sysfs alone decided (no IOMMU unit or
	// group: off), SourceCmdline when the command line did; unknown
	// when Mode is.
	Source unknown.Value[Source]
	// Param is the command-line parameter that decided ("iommu=pt"),
	// "" when none did.
	Param string
}

// ResolveIOMMUMode combines what sysfs says of the IOMMUs (m; nil when not
// read) with what the kernel command line asks (c; nil when the tree lacks
// it). Sysfs that shows no active IOMMU means off, whatever the command
// line asks; otherwise the command line names the mode (Cmdline.
// IOMMUPassthrough). Without sysfs, intel_iommu=on or
// amd_iommu=force_enable without a mode means the build default; a
// command line silent about the IOMMU leaves the mode unknown (AMD and
// some Intel builds enable it by default when present).
func ResolveIOMMUMode(m *IOMMU, c *Cmdline) IOMMUMode {
	decided := func(mode DMAMode, src Source, param string) IOMMUMode {
		return IOMMUMode{Mode: unknown.Of(mode), Source: unknown.Of(src), Param: param}
	}
	// Not captured, or (on the live root) a kernel without IOMMU support
	// when sysfs has no IOMMU folder.
	kind := unknown.KindNotCaptured
	if m != nil && !m.Units.Known() && m.Units.Why().Kind != unknown.KindNotRead {
		kind = m.Units.Why().Kind
	}
	notKnown := func(why unknown.Reason) IOMMUMode {
		return IOMMUMode{Mode: unknown.Not[DMAMode](why), Source: unknown.Not[Source](why)}
	}
	switch {
	case m.Known() && !m.Active():
		return decided(DMAModeOff, SourceSysfs, "")
	case c == nil && m.Known():
		return notKnown(unknown.Because(unknown.KindNotCaptured, "an IOMMU is active and there is no /proc/cmdline to name its mode"))
	case c == nil:
		return notKnown(unknown.Because(kind, "no /sys/class/iommu, /sys/kernel/iommu_groups or /proc/cmdline"))
	}
	if mode, param := c.IOMMUPassthrough(); mode != "" {
		return decided(mode, SourceCmdline, param)
	}
	if m.Active() {
		return decided(DMAModeDefault, SourceCmdline, "")
	}
	if param := c.iommuOn(); param != "" {
		return decided(DMAModeDefault, SourceCmdline, param)
	}
	return notKnown(unknown.Because(kind, "no /sys/class/iommu or /sys/kernel/iommu_groups, and the command line does not turn an IOMMU on"))
}

// IOMMUMode is ResolveIOMMUMode of the host's IOMMU and command line.
func (h *Host) IOMMUMode() IOMMUMode { return ResolveIOMMUMode(h.IOMMU, h.Cmdline.Or(nil)) }

// readIOMMU reads the IOMMU units and groups into h.IOMMU; a folder that
// cannot be read leaves them unknown, with a note.
func (h *Host) readIOMMU() {
	m, err := ReadIOMMU(h.fs)
	if err != nil {
		h.note("%v: IOMMU unknown", err)
		why := unknown.Because(unknown.KindFailed, err.Error())
		m = &IOMMU{Units: unknown.Not[[]string](why), Groups: unknown.Not[int](why)}
	}
	h.IOMMU = m
}

// DomainType is the type of an IOMMU group's default DMA domain, as
// /sys/kernel/iommu_groups/N/type names it; a word the kernel adds later
// is kept as it reads.
type DomainType string

// The default domain types the kernel names.
const (
	// DomainTypeIdentity is passthrough.
	DomainTypeIdentity DomainType = "identity"
	// DomainTypeDMA translates every DMA address, invalidating at once.
	DomainTypeDMA DomainType = "DMA"
	// DomainTypeDMAFQ translates every DMA address, invalidations batched
	// in a flush queue.
	DomainTypeDMAFQ DomainType = "DMA-FQ"
	// DomainTypeBlocked and DomainTypeUnmanaged are not the kernel's
	// default use.
	DomainTypeBlocked   DomainType = "blocked"
	DomainTypeUnmanaged DomainType = "unmanaged"
)

// String is the type as the kernel names it.
func (t DomainType) String() string { return string(t) }

// IOMMUGroup is the IOMMU group of one PCI function and the type of its
// default DMA domain (/sys/kernel/iommu_groups/N/type, Linux 5.11+).
type IOMMUGroup struct {
	ID   unknown.Value[int]        // unknown when the device has no iommu_group link
	Type unknown.Value[DomainType] // unknown when the group has no type file
}

// Translating reports whether the group's default domain translates DMA.
func (g IOMMUGroup) Translating() bool {
	return unknown.Is(g.Type, DomainTypeDMA) || unknown.Is(g.Type, DomainTypeDMAFQ)
}

// ReadIOMMU reads /sys/class/iommu and counts /sys/kernel/iommu_groups.
func ReadIOMMU(fsys kfile.FS) (*IOMMU, error) {
	root := fsys.Root()
	m := &IOMMU{}
	dir := path.Join(root, "sys/class/iommu")
	ents, err := fsys.ReadDir(dir)
	switch {
	case err == nil:
		units := []string{}
		for _, e := range ents {
			units = append(units, e.Name())
		}
		slices.Sort(units)
		m.Units = unknown.Of(units)
	case kfile.IsNotExist(err):
		m.Units = unknown.Not[[]string](absent(fsys, dir))
	default:
		return nil, fmt.Errorf("read IOMMUs: %w", err)
	}
	dir = path.Join(root, "sys/kernel/iommu_groups")
	ents, err = fsys.ReadDir(dir)
	switch {
	case err == nil:
		groups := 0
		for _, e := range ents {
			if _, err := strconv.Atoi(e.Name()); err == nil {
				groups++
			}
		}
		m.Groups = unknown.Of(groups)
	case kfile.IsNotExist(err):
		m.Groups = unknown.Not[int](absent(fsys, dir))
	default:
		return nil, fmt.Errorf("read IOMMU groups: %w", err)
	}
	return m, nil
}

// DeviceIOMMUGroup returns the IOMMU group of a PCI function
// ("0000:98:00.0") from its iommu_group link, and the group's type. A
// device without the link has an unknown ID (no IOMMU translates for it,
// or the tree does not say), and an unknown Type; so does a group without
// a type file (a kernel before 5.11).
func (h *Host) DeviceIOMMUGroup(bdf string) (IOMMUGroup, error) {
	var g IOMMUGroup
	if !pci.IsAddress(bdf) {
		return g, fmt.Errorf("IOMMU group: %q is not a PCI address", bdf)
	}
	link := "sys/bus/pci/devices/" + bdf + "/iommu_group"
	target, err := h.resolve(link)
	if err != nil {
		if kfile.IsNotExist(err) {
			g.ID = unknown.Not[int](h.absent(h.Path(link)))
			g.Type = unknown.Not[DomainType](g.ID.Why())
			return g, nil
		}
		return g, fmt.Errorf("IOMMU group of %s: %w", bdf, err)
	}
	id, err := strconv.Atoi(path.Base(target))
	if err != nil || id < 0 {
		return g, fmt.Errorf("IOMMU group of %s: link to %s is not a group", bdf, target)
	}
	g.ID = unknown.Of(id)
	s, err := h.fs.String(h.Path(target, "type"))
	switch {
	case err == nil && strings.TrimSpace(s) == "":
		g.Type = unknown.NotAs[DomainType](unknown.KindMalformed, h.rel(h.Path(target, "type"))+" is empty")
	case err == nil:
		g.Type = unknown.Of(DomainType(strings.TrimSpace(s)))
	case kfile.IsNotExist(err):
		g.Type = unknown.Not[DomainType](h.absent(h.Path(target, "type")))
	default:
		return g, err
	}
	return g, nil
}
