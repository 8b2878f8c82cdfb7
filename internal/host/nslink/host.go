package nslink

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// fileHost is the recorded name of the host's namespace.
const fileHost = "host"

// hostNSPath returns the /proc link of the host's namespace on the live
// root, and its name: PID 1's, or, when PID 1's may not be read (a
// sandbox whose PID 1 is not irqnuma's to inspect: readlink needs
// ptrace access to it), irqnuma's own, which is the namespace the root's
// /sys/class/net shows as a rule (sysfs lists the namespace it was
// mounted from).
func hostNSPath(fsys kfile.FS) (path, ns string, err error) {
	var errs []string
	for _, who := range []string{"1", "self"} {
		p := filepath.Join(fsys.Root(), "proc", who, "ns", "net")
		ns, err := fsys.Readlink(p)
		if err == nil {
			if _, ierr := Inode(ns); ierr == nil {
				return p, ns, nil
			}
			errs = append(errs, fmt.Sprintf("%s: %q is no network namespace", p, clip(ns)))
			continue
		}
		errs = append(errs, err.Error())
	}
	return "", "", fmt.Errorf("the host's network namespace is unknown: %s", strings.Join(errs, "; "))
}

// HostNamespace returns the namespace ("net:[INODE]") the root's
// interfaces are taken to be in, which a process's namespace is
// compared with: on the live root PID 1's, or irqnuma's own when PID
// 1's cannot be read; on a captured root the one its recording names
// (RecordDir/host), else "" (a tree records none: PID 1's link is then
// the caller's to use).
func HostNamespace(fsys kfile.FS) string {
	if fsys.Live() {
		_, ns, err := hostNSPath(fsys)
		if err != nil {
			return ""
		}
		return ns
	}
	b, err := fsys.ReadLimit(filepath.Join(fsys.Root(), RecordDir, fileHost), 64)
	if err != nil {
		return ""
	}
	ns := strings.TrimSuffix(string(b), "\n")
	if _, err := Inode(ns); err != nil {
		return ""
	}
	return ns
}

// RecordHost hands put the name of the live host's namespace
// (HostNamespace) and the raw replies Read decodes its links from, under
// the paths a captured root keeps them at, so that a reader of the
// host's own links (zc check's no-xdp: the NIC's IFLA_XDP) reads the
// snapshot as it read the host. The links it returns say why they are
// unknown when the kernel could not be asked (Known false): nothing of
// them is then recorded, and a captured root says "not captured".
func RecordHost(fsys kfile.FS, put func(rel string, data []byte) error) (*Links, error) {
	if !fsys.Live() {
		return nil, fmt.Errorf("record the host's network namespace: %s is not the live root", fsys.Root())
	}
	p, ns, err := hostNSPath(fsys)
	if err != nil {
		return nil, err
	}
	ino, err := Inode(ns)
	if err != nil {
		return nil, err
	}
	if err := put(filepath.Join(RecordDir, fileHost), []byte(ns+"\n")); err != nil {
		return nil, err
	}
	var putErr error
	ls, err := readLiveAt(fsys, p, ino, func(name string, data []byte) {
		if putErr == nil {
			putErr = put(filepath.Join(RecordDir, strconv.FormatUint(ino, 10), name), data)
		}
	})
	if err != nil {
		return nil, err
	}
	return ls, putErr
}
