package kube

import (
	"fmt"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// The kubelet's log folders: /var/log/pods/NAMESPACE_NAME_UID/CONTAINER/
// (kuberuntime's BuildPodLogsDirectory) and the links
// /var/log/containers/NAME_NAMESPACE_CONTAINER-ID.log into them
// (logSymlink), the one place on the node joining a container's name to
// its runtime ID.
const (
	podLogDir       = "var/log/pods"
	containerLogDir = "var/log/containers"
)

// podLog is a pod as its log folder names it.
type podLog struct {
	Namespace, Name, UID string
	Containers           []string
}

// readPodLogs lists /var/log/pods; a name that is not NS_NAME_UID is
// skipped (nothing else writes there), an absent folder is no pod.
func readPodLogs(fsys kfile.FS) ([]podLog, error) {
	ents, err := fsys.ReadDir(fsys.Path(podLogDir))
	if kfile.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []podLog
	for _, e := range ents {
		parts := strings.Split(e.Name(), "_")
		if !e.IsDir() || len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			continue
		}
		p := podLog{Namespace: parts[0], Name: parts[1], UID: parts[2]}
		ctrs, err := fsys.ReadDir(fsys.Path(podLogDir, e.Name()))
		if err != nil && !kfile.IsNotExist(err) {
			return nil, err
		}
		for _, c := range ctrs {
			if c.IsDir() {
				p.Containers = append(p.Containers, c.Name())
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// containerLink is one /var/log/containers link's name parsed.
type containerLink struct {
	Pod, Namespace, Container, ID string
}

// parseContainerLink parses NAME_NAMESPACE_CONTAINER-ID.log, the ID 64
// hex digits (names hold no '_', container names may hold '-').
func parseContainerLink(name string) (containerLink, error) {
	base, ok := strings.CutSuffix(name, ".log")
	parts := strings.Split(base, "_")
	if !ok || len(parts) != 3 {
		return containerLink{}, fmt.Errorf("%q is not NAME_NAMESPACE_CONTAINER-ID.log", clip(name))
	}
	i := strings.LastIndexByte(parts[2], '-')
	if i <= 0 || !isContainerID(parts[2][i+1:]) || parts[0] == "" || parts[1] == "" {
		return containerLink{}, fmt.Errorf("%q is not NAME_NAMESPACE_CONTAINER-ID.log", clip(name))
	}
	return containerLink{Pod: parts[0], Namespace: parts[1], Container: parts[2][:i], ID: parts[2][i+1:]}, nil
}

// readContainerLinks lists /var/log/containers; names not in the
// kubelet's form are skipped.
func readContainerLinks(fsys kfile.FS) ([]containerLink, error) {
	ents, err := fsys.ReadDir(fsys.Path(containerLogDir))
	if kfile.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []containerLink
	for _, e := range ents {
		if l, err := parseContainerLink(e.Name()); err == nil {
			out = append(out, l)
		}
	}
	return out, nil
}

// isContainerID: 64 lower case hex digits, as CRI-O, containerd and
// Docker name containers.
func isContainerID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
