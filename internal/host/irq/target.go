package irq

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// This file names the files irqnuma writes and reads them: an IRQ's
// smp_affinity_list or smp_affinity, and a tx queue's xps_cpus. The
// writes themselves are the tuner's (internal/tune), which accepts only
// the paths ParseTarget accepts.

// ErrPath is wrapped by the error for a path irqnuma never writes.
var ErrPath = errors.New("not a path irqnuma writes")

// Files irqnuma writes.
const (
	FileAffinityList = "smp_affinity_list"
	FileAffinity     = "smp_affinity"
	FileXPS          = "xps_cpus"
)

// Target says what a writable path is: an IRQ's affinity file or a tx
// queue's xps_cpus.
type Target struct {
	Path  string             // rooted: "/proc/irq/284/smp_affinity_list"
	File  string             // FileAffinityList, FileAffinity or FileXPS
	IRQ   unknown.Value[int] // not applicable for xps_cpus
	NIC   string             // "" for an IRQ file
	Queue unknown.Value[int] // tx queue index; not applicable for an IRQ file
}

// The fields of a Target that have no meaning for its file.
var (
	irqFileQueue = unknown.NotAs[int](unknown.KindNotApplicable, "an IRQ file serves no queue")
	xpsIRQ       = unknown.NotAs[int](unknown.KindNotApplicable, "xps_cpus is a queue's, not an IRQ's")
)

// IsList reports whether the file takes the list form ("16-31"); the
// others take the mask form ("ffff0000,00000000").
func (t Target) IsList() bool { return t.File == FileAffinityList }

// AffinityPath returns "/proc/irq/<n>/<file>".
func AffinityPath(n int, file string) string {
	return "/proc/irq/" + strconv.Itoa(n) + "/" + file
}

// XPSPath returns "/sys/class/net/<nic>/queues/tx-<q>/xps_cpus".
func XPSPath(nic string, queue int) string {
	return "/sys/class/net/" + nic + "/queues/tx-" + strconv.Itoa(queue) + "/" + FileXPS
}

// ParseTarget accepts exactly the paths irqnuma writes, rooted and clean:
// /proc/irq/<n>/smp_affinity_list, /proc/irq/<n>/smp_affinity and
// /sys/class/net/<nic>/queues/tx-<q>/xps_cpus. Anything else wraps ErrPath.
func ParseTarget(p string) (Target, error) {
	bad := func(why string) (Target, error) {
		return Target{}, fmt.Errorf("%w: %q: %s", ErrPath, p, why)
	}
	if p == "" || p[0] != '/' || path.Clean(p) != p {
		return bad("want a clean absolute path")
	}
	parts := strings.Split(p[1:], "/")
	switch {
	case len(parts) == 4 && parts[0] == "proc" && parts[1] == "irq":
		n, ok := Decimal(parts[2])
		if !ok {
			return bad("IRQ number is not a non-negative integer")
		}
		if parts[3] != FileAffinityList && parts[3] != FileAffinity {
			return bad("only smp_affinity_list and smp_affinity are written under /proc/irq/<n>")
		}
		return Target{Path: p, File: parts[3], IRQ: unknown.Of(n), Queue: irqFileQueue}, nil
	case len(parts) == 7 && parts[0] == "sys" && parts[1] == "class" && parts[2] == "net" && parts[4] == "queues":
		if !ValidIfName(parts[3]) {
			return bad("not an interface name")
		}
		qs, ok := strings.CutPrefix(parts[5], "tx-")
		if !ok {
			return bad("only tx queues' xps_cpus are written")
		}
		q, ok := Decimal(qs)
		if !ok {
			return bad("queue index is not a non-negative integer")
		}
		if parts[6] != FileXPS {
			return bad("only xps_cpus is written under a queue")
		}
		return Target{Path: p, File: FileXPS, IRQ: xpsIRQ, NIC: parts[3], Queue: unknown.Of(q)}, nil
	}
	return bad("only /proc/irq/<n>/ and /sys/class/net/<nic>/queues/ are written")
}

// Decimal parses a plain non-negative decimal number without sign or
// leading zeros ("0" itself is fine).
func Decimal(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// ValidIfName follows the kernel's dev_valid_name: 1 to 15 bytes, not "."
// or "..", no '/', ':' or white space.
func ValidIfName(s string) bool {
	if s == "" || len(s) > 15 || s == "." || s == ".." {
		return false
	}
	return !strings.ContainsAny(s, "/: \t\n\r\v\f")
}

// ReadValue reads the current value of a file irqnuma writes, as the
// kernel prints it without the final newline.
func ReadValue(fsys kfile.FS, p string) (string, error) {
	_, s, err := ReadRaw(fsys, p)
	return s, err
}

// ReadRaw is ReadValue that also returns the file's bytes as they are
// (the newline, or its absence in a host tree's copy, kept), which a
// rollback writes back.
func ReadRaw(fsys kfile.FS, p string) ([]byte, string, error) {
	if _, err := ParseTarget(p); err != nil {
		return nil, "", err
	}
	return ReadAttr(fsys, p)
}

// ReadAttr reads the one-value attribute file p (rooted, inside root)
// as ReadRaw does, for a path its caller has already validated (the
// tuner's own settings): its bytes as they are, and its value.
func ReadAttr(fsys kfile.FS, p string) ([]byte, string, error) {
	full, err := ResolveIn(fsys, p)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", p, err)
	}
	b, err := fsys.ReadLimit(full, 1<<20)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", p, kfile.UnwrapPath(err))
	}
	return b, string(kfile.TrimAttr(b)), nil
}

// ResolveIn returns the real path of p (rooted, inside root), following
// symlinks inside root as every reader does (kfile.FS):
// /sys/class/net/eth0 is a link into /sys/devices, and an absolute
// target is taken from the tree's top, so a host tree can never redirect
// a write, or the read of the value it replaces, to the live host.
func ResolveIn(fsys kfile.FS, p string) (string, error) {
	if fsys.Live() {
		// The live host: its own links (/sys/class/net/eth0) are the
		// kernel's and there is nothing to leave.
		return p, nil
	}
	real, err := fsys.Resolve(fsys.Path(p))
	if err != nil {
		return "", err
	}
	return fsys.Path(real), nil
}

// ReadBack is what the files say after the run: the requested affinity
// and where the kernel delivers the IRQ (for an IRQ file), or xps_cpus.
type ReadBack struct {
	Affinity  unknown.Value[cpuset.Set]
	Effective unknown.Value[cpuset.Set] // not applicable for xps_cpus
	ReadErr   error
}

// ReadBackOf reads what a written file says now: for an IRQ,
// smp_affinity_list (or smp_affinity) and effective_affinity_list (or
// effective_affinity); for a queue, xps_cpus.
func ReadBackOf(fsys kfile.FS, p string) ReadBack {
	rb := ReadBack{Affinity: unknown.NotAs[cpuset.Set](unknown.KindFailed, "not read back"),
		Effective: unknown.NotAs[cpuset.Set](unknown.KindFailed, "not read back")}
	t, err := ParseTarget(p)
	if err != nil {
		rb.ReadErr = err
		return rb
	}
	if t.File == FileXPS {
		s, err := ReadValue(fsys, p)
		if err != nil {
			rb.ReadErr = err
			return rb
		}
		set, err := cpuset.ParseMask(strings.TrimSpace(s))
		if err != nil {
			rb.ReadErr = fmt.Errorf("read %s: %w", p, err)
			return rb
		}
		rb.Affinity = unknown.Of(set)
		rb.Effective = unknown.NotAs[cpuset.Set](unknown.KindNotApplicable, "a queue has no effective affinity")
		return rb
	}
	in, err := ReadInfo(fsys, t.IRQ.Or(0), false)
	if err != nil {
		rb.ReadErr = err
		return rb
	}
	rb.Affinity, rb.Effective = in.Affinity, in.Effective
	return rb
}

// AffinityFile returns the file to write an IRQ's affinity to: the list
// file, or the mask file where the list file is absent. It fails when the
// IRQ has neither.
func AffinityFile(fsys kfile.FS, n int) (string, error) {
	for _, f := range []string{FileAffinityList, FileAffinity} {
		p := AffinityPath(n, f)
		full, err := ResolveIn(fsys, p)
		if err == nil {
			if _, err = fsys.Stat(full); err == nil {
				return p, nil
			}
		}
		if !kfile.IsNotExist(err) {
			return "", fmt.Errorf("IRQ %d: %w", n, err)
		}
	}
	return "", fmt.Errorf("IRQ %d: no smp_affinity_list or smp_affinity: %w", n, fs.ErrNotExist)
}

// FormatFor renders a CPU set in the form a target file takes: the list
// form for smp_affinity_list, else the kernel's mask of nbits bits
// (nr_cpu_ids).
func FormatFor(t Target, cpus cpuset.Set, nbits int) string {
	if t.IsList() {
		return cpus.List()
	}
	return cpus.Mask(nbits)
}

// ParseValue parses a value read from or saved for a target file.
func ParseValue(t Target, s string) (cpuset.Set, error) {
	if t.IsList() {
		return cpuset.ParseList(s)
	}
	return cpuset.ParseMask(s)
}
