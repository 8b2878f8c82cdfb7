package kube

import (
	"path"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// The kubelet's groups (pkg/kubelet/cm: the node's "kubepods", a QoS
// level below it for Burstable and BestEffort pods, none for Guaranteed
// ones, then "pod"+UID) under the systemd driver, each name escaped and
// joined into a slice, '-' in the UID written '_':
//
//	kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<UID>.slice/crio-<ID>.scope
//	kubepods.slice/kubepods-pod<UID>.slice/cri-containerd-<ID>.scope
//
// and under the cgroupfs driver:
//
//	kubepods/burstable/pod<UID>/<ID>   (containerd; CRI-O: crio-<ID>)
var (
	kubepodsRoots = []string{"kubepods.slice", "kubepods"}
	qosLevels     = map[string]bool{
		"kubepods-burstable.slice": true, "kubepods-besteffort.slice": true,
		"burstable": true, "besteffort": true,
	}
	// scopePrefixes are the runtimes' prefixes to a container's ID in
	// its group's name: CRI-O's, containerd's CRI plugin's, Docker's.
	scopePrefixes = []string{"crio-", "cri-containerd-", "docker-"}
)

// podCgroup is a pod's group and its containers' groups, each a path
// within the hierarchy ("/kubepods.slice/…").
type podCgroup struct {
	UID        string
	Path       string
	Containers []ctrCgroup
}

type ctrCgroup struct{ ID, Path string }

// hierarchy is the folder under the root whose groups ReadCgroup reads:
// the unified one on a v2 host, else v1's cpuset.
func hierarchy(fsys kfile.FS) string {
	if _, err := fsys.Stat(fsys.Path("sys/fs/cgroup/cgroup.controllers")); err == nil {
		return "sys/fs/cgroup"
	}
	return "sys/fs/cgroup/cpuset"
}

// readPodCgroups finds every pod's group by its name, keyed by pod UID.
func readPodCgroups(fsys kfile.FS) (map[string]*podCgroup, error) {
	h := hierarchy(fsys)
	out := map[string]*podCgroup{}
	for _, top := range kubepodsRoots {
		if err := scanPods(fsys, h, "/"+top, out, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scanPods looks in the group p for pods' groups, and one level further
// in QoS groups when qos.
func scanPods(fsys kfile.FS, h, p string, out map[string]*podCgroup, qos bool) error {
	ents, err := fsys.ReadDir(fsys.Path(h, p))
	if kfile.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		child := path.Join(p, e.Name())
		if qos && qosLevels[e.Name()] {
			if err := scanPods(fsys, h, child, out, false); err != nil {
				return err
			}
			continue
		}
		uid, ok := podUID(e.Name())
		if !ok {
			continue
		}
		pc := &podCgroup{UID: uid, Path: child}
		ctrs, err := fsys.ReadDir(fsys.Path(h, child))
		if err != nil && !kfile.IsNotExist(err) {
			return err
		}
		for _, c := range ctrs {
			if id, ok := containerID(c.Name()); ok && c.IsDir() {
				pc.Containers = append(pc.Containers, ctrCgroup{ID: id, Path: path.Join(child, c.Name())})
			}
		}
		out[uid] = pc
	}
	return nil
}

// podUID reads a pod's UID from its group's name: "pod<UID>" (cgroupfs)
// or "…-pod<UID with '_'>.slice" (systemd).
func podUID(name string) (string, bool) {
	uid, ok := strings.CutPrefix(name, "pod")
	if base, slice := strings.CutSuffix(name, ".slice"); slice {
		i := strings.LastIndex(base, "-pod")
		if i < 0 {
			return "", false
		}
		uid, ok = strings.ReplaceAll(base[i+4:], "_", "-"), true
	}
	if !ok || uid == "" {
		return "", false
	}
	for _, r := range uid {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') && r != '-' {
			return "", false
		}
	}
	return uid, true
}

// containerID reads a container's ID from its group's name: the ID, or
// a runtime's prefix and the ID, ".scope" after it under systemd. The
// runtime's own groups ("crio-conmon-<ID>.scope") are not containers.
func containerID(name string) (string, bool) {
	base := strings.TrimSuffix(name, ".scope")
	for _, p := range scopePrefixes {
		if rest, ok := strings.CutPrefix(base, p); ok {
			base = rest
			break
		}
	}
	return base, isContainerID(base)
}
