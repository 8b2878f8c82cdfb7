package kube

import (
	"context"
	"slices"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// DefaultMaxPods bounds how many pods ResolveAll adds unless told
// otherwise: twice the kubelet's default --max-pods (110), so a node the
// kubelet runs at its default is covered whole, pods coming and going
// between two lists included.
const DefaultMaxPods = 2 * 110

// ResolveAll is Resolve with every pod the node runs added to sel.Pods
// first (the exporter's --pods all): each pod whose folder in
// /var/log/pods names a UID with a group under kubepods in the cgroup
// tree, as NAMESPACE/NAME, in that order, once each and not again when
// sel.Pods names it already. At most limit are added (0: no bound), the
// first in that order; dropped is how many running pods were left out.
// A folder whose namespace or name is not a Kubernetes object name
// (nothing the kubelet writes) is not a pod.
func ResolveAll(ctx context.Context, fsys kfile.FS, sel *proc.Selection, socket string, limit int) (dropped int, err error) {
	n, err := readGroups(fsys)
	if err != nil {
		return 0, err
	}
	pods := n.running()
	pods = slices.DeleteFunc(pods, func(p string) bool { return slices.Contains(sel.Pods, p) })
	if limit > 0 && len(pods) > limit {
		dropped, pods = len(pods)-limit, pods[:limit]
	}
	// A selection of its own: the caller's Pods are not appended to in
	// place, so a selection shared between scrapes keeps its own.
	sel.Pods = append(slices.Clip(sel.Pods), pods...)
	if len(sel.Pods) == 0 && len(sel.Containers) == 0 {
		return dropped, nil
	}
	return dropped, n.resolve(ctx, socket, sel)
}

// running are the pods of the node with a group in the cgroup tree, as
// NAMESPACE/NAME, sorted, each once (a pod deleted and created again
// under its name has two UIDs).
func (n *node) running() []string {
	var out []string
	for _, l := range n.logs {
		p := l.Namespace + "/" + l.Name
		if _, _, err := proc.SplitPod(p); err != nil || n.cgroups[l.UID] == nil {
			continue
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
