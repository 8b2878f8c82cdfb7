package kube

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// apiTimeout bounds the kubelet's answer, as its own clients do.
const apiTimeout = 10 * time.Second

// node is what the root says about its pods, read once.
type node struct {
	fsys    kfile.FS
	logs    []podLog
	links   []containerLink
	cgroups map[string]*podCgroup
	// api is the pod resources API's List, when the kubelet answered;
	// apiWhy why it was not asked or did not answer.
	api     []APIPod
	apiOK   bool
	apiWhy  string
	apiFrom string
	ck      *Checkpoint
	// crio are the folders of CRI-O's storage that hold containers'
	// configs (crioConfigs), read at the first container that wants them.
	crio     []string
	crioRead bool
	// host is the CPUs the host has (topology.ReadHostCPUs), read the
	// first time a kubelet's CPUs are bounded by them; hostErr why they
	// are unknown.
	host     cpuset.Set
	hostErr  error
	hostRead bool
}

// Resolve finds the groups of sel's --pod and --container values on the
// node under fsys and fills sel.Resolved. The kubelet's pod resources
// API is asked over socket when it is there (LiveSocket names the live
// root's; "" asks none); otherwise, or when it does not answer, the CPU
// manager's checkpoint says the exclusive CPUs. A pod or container that
// is not found is no error here: its PodResolution says why.
func Resolve(ctx context.Context, fsys kfile.FS, sel *proc.Selection, socket string) error {
	if len(sel.Pods) == 0 && len(sel.Containers) == 0 {
		return nil
	}
	n, err := readGroups(fsys)
	if err != nil {
		return err
	}
	return n.resolve(ctx, socket, sel)
}

// resolve reads the exclusive CPUs of sel's pods and containers
// (readCPUs) and fills sel.Resolved.
func (n *node) resolve(ctx context.Context, socket string, sel *proc.Selection) error {
	if err := n.readCPUs(ctx, socket, sel); err != nil {
		return err
	}
	if sel.Resolved == nil {
		sel.Resolved = map[proc.Selector]proc.PodResolution{}
	}
	for _, p := range sel.Pods {
		ns, name, err := proc.SplitPod(p)
		if err != nil {
			return err
		}
		sel.Resolved[proc.PodSelector(p)] = n.pod(ns, name)
	}
	for _, c := range sel.Containers {
		sel.Resolved[proc.ContainerSelector(c)] = n.container(c)
	}
	return nil
}

// LiveSocket is the pod resources socket to ask on the root fsys: the
// kubelet's on the live root, none on a tree (a capture has no kubelet).
func LiveSocket(fsys kfile.FS) string {
	if !fsys.Live() {
		return ""
	}
	return fsys.Path(SocketFile)
}

// readGroups reads what the root says about its pods' groups: the
// logs' names and the groups.
func readGroups(fsys kfile.FS) (*node, error) {
	n := &node{fsys: fsys}
	var err error
	if n.logs, err = readPodLogs(fsys); err != nil {
		return nil, err
	}
	if n.links, err = readContainerLinks(fsys); err != nil {
		return nil, err
	}
	if n.cgroups, err = readPodCgroups(fsys); err != nil {
		return nil, err
	}
	return n, nil
}

// readCPUs reads what says the exclusive CPUs: the kubelet's API, and
// when it did not answer the CPU manager's checkpoint, keeping of it the
// entries sel's pods and containers can use.
func (n *node) readCPUs(ctx context.Context, socket string, sel *proc.Selection) error {
	if err := n.askAPI(ctx, n.fsys, socket); err != nil {
		return err
	}
	if n.apiOK {
		return nil // the checkpoint is not read: the API says the CPUs
	}
	f := n.fsys.Path(CheckpointFile)
	b, err := n.fsys.ReadLimit(f, maxMessage)
	switch {
	case kfile.IsNotExist(err):
	case err != nil:
		return err
	default:
		if n.ck, err = parseCheckpoint(b, n.want(sel)); err != nil {
			return kfile.Malformed(f, err)
		}
	}
	return nil
}

// want names the checkpoint entries sel's pods and containers can use:
// the UIDs of the pods (the v2 layout's keys) and the IDs of their
// containers' groups (v1's), as many as the node runs for them.
func (n *node) want(sel *proc.Selection) Want {
	w := Want{UIDs: map[string]bool{}, IDs: map[string]bool{}}
	add := func(pc *podCgroup, id string) {
		w.UIDs[pc.UID] = true
		for _, c := range pc.Containers {
			if strings.HasPrefix(c.ID, id) {
				w.IDs[c.ID] = true
			}
		}
	}
	for _, p := range sel.Pods {
		ns, name, err := proc.SplitPod(p)
		if err != nil {
			continue // Resolve says so
		}
		for _, l := range n.logs {
			if pc := n.cgroups[l.UID]; pc != nil && l.Namespace == ns && l.Name == name {
				add(pc, "")
			}
		}
	}
	for _, id := range sel.Containers {
		for _, pc := range n.cgroups {
			for _, c := range pc.Containers {
				if strings.HasPrefix(c.ID, id) {
					add(pc, c.ID)
				}
			}
		}
	}
	return w
}

// askAPI lists the pods over the kubelet's socket, or on a tree from
// the answer a snapshot recorded (RecordFile).
func (n *node) askAPI(ctx context.Context, fsys kfile.FS, sock string) error {
	if sock == "" {
		return n.recorded(fsys)
	}
	b, err := listRaw(ctx, sock)
	if err != nil {
		n.apiWhy = err.Error()
		return nil
	}
	if n.api, err = decodeList(b); err != nil {
		return fmt.Errorf("%s %s: %w", sock, methodList, err)
	}
	n.apiOK, n.apiFrom = true, "the kubelet's pod resources API (List)"
	return nil
}

// listRaw asks the kubelet's List over sock, if it is there.
func listRaw(ctx context.Context, sock string) ([]byte, error) {
	if _, err := os.Stat(sock); err != nil {
		return nil, fmt.Errorf("no %s", sock)
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	c := newClient(sock)
	defer c.Close()
	return c.ListRaw(ctx)
}

// recorded reads the List answer a snapshot recorded.
func (n *node) recorded(fsys kfile.FS) error {
	f := fsys.Path(RecordFile)
	b, err := fsys.ReadLimit(f, maxMessage)
	if kfile.IsNotExist(err) {
		n.apiWhy = "no kubelet to ask on a tree, and no " + f
		return nil
	}
	if err != nil {
		return err
	}
	if n.api, err = decodeList(b); err != nil {
		return kfile.Malformed(f, err)
	}
	n.apiOK, n.apiFrom = true, "the kubelet's pod resources API (List) as recorded in "+f
	return nil
}

// RecordFile is where a snapshot keeps the kubelet's List answer (the
// ListPodResourcesResponse message as sent) for Resolve to read back.
const RecordFile = "irqnuma/kube/podresources-list.pb"

// Record asks the kubelet's List over socket and hands the answer to put
// as RecordFile; a socket that is not there, or a kubelet that does not
// answer, records nothing, and the returned note says why.
func Record(ctx context.Context, socket string, put func(rel string, data []byte) error) (note string, err error) {
	b, err := listRaw(ctx, socket)
	if err != nil {
		return "the kubelet's pod resources API not recorded: " + err.Error(), nil
	}
	return "", put(RecordFile, b)
}

// source says where the exclusive CPUs come from.
func (n *node) source() string {
	switch {
	case n.apiOK:
		return n.apiFrom
	case n.ck != nil:
		return fmt.Sprintf("/%s (%s layout, policy %s; %s)", CheckpointFile, n.ck.Layout, n.ck.Policy, n.apiWhy)
	}
	return fmt.Sprintf("the cgroup tree and /var/log/pods alone (no /%s; %s): no exclusive CPUs known", CheckpointFile, n.apiWhy)
}

// pod resolves "ns/name": its UIDs from /var/log/pods, the running one's
// containers from the cgroup tree.
func (n *node) pod(ns, name string) proc.PodResolution {
	res := proc.PodResolution{Source: n.source()}
	var api *APIPod
	if n.apiOK {
		for i := range n.api {
			if n.api[i].Namespace == ns && n.api[i].Name == name {
				api = &n.api[i]
			}
		}
		if api == nil {
			res.Missing = unknown.Because(unknown.KindNotReported, fmt.Sprintf("the kubelet's pod resources API lists no pod %s/%s", ns, name))
			return res
		}
	}
	var uids []string
	for _, l := range n.logs {
		if l.Namespace == ns && l.Name == name {
			uids = append(uids, l.UID)
			if pc := n.cgroups[l.UID]; pc != nil {
				res.Groups = append(res.Groups, n.groups(api, l, pc)...)
			}
		}
	}
	switch {
	case len(uids) == 0:
		res.Missing = unknown.Because(unknown.KindNotReported, fmt.Sprintf("no folder %s_%s_UID in /var/log/pods", ns, name))
	case len(res.Groups) == 0:
		res.Missing = unknown.Because(unknown.KindNotReported, fmt.Sprintf("no container group of pod UID %s under kubepods in the cgroup tree", strings.Join(uids, ", ")))
	}
	return res
}

// container resolves a container ID or a unique prefix of one.
func (n *node) container(id string) proc.PodResolution {
	res := proc.PodResolution{Source: n.source()}
	var found []string
	var pod *podCgroup
	var ctr ctrCgroup
	for _, pc := range n.cgroups {
		for _, c := range pc.Containers {
			if strings.HasPrefix(c.ID, id) {
				found, pod, ctr = append(found, c.ID), pc, c
			}
		}
	}
	switch len(found) {
	case 0:
		res.Missing = unknown.Because(unknown.KindNotReported, "no container group with this ID under kubepods in the cgroup tree")
		return res
	case 1:
	default:
		res.Missing = unknown.Because(unknown.KindFailed, fmt.Sprintf("the prefix is ambiguous: %d containers' IDs start with it", len(found)))
		return res
	}
	l := podLog{UID: pod.UID}
	for _, pl := range n.logs {
		if pl.UID == pod.UID {
			l = pl
		}
	}
	var api *APIPod
	for i := range n.api {
		if n.api[i].Namespace == l.Namespace && n.api[i].Name == l.Name && l.Name != "" {
			api = &n.api[i]
		}
	}
	res.Groups = n.groups(api, l, &podCgroup{UID: pod.UID, Path: pod.Path, Containers: []ctrCgroup{ctr}})
	return res
}

// groups are the container groups of one pod, each with its name (from
// /var/log/containers; "" for the pod's sandbox, which has no log) and
// the exclusive CPUs the API or the checkpoint gives it.
func (n *node) groups(api *APIPod, l podLog, pc *podCgroup) []proc.PodGroup {
	var out []proc.PodGroup
	for _, c := range pc.Containers {
		g := proc.PodGroup{Path: c.Path, Pod: proc.PodRef{Namespace: l.Namespace, Name: l.Name, UID: l.UID, ContainerID: c.ID}}
		for _, k := range n.links {
			if k.ID == c.ID {
				g.Pod.Container = k.Container
			}
		}
		g.Pod.ExclusiveCPUs, g.ExclusiveBy = n.exclusive(api, l.UID, g.Pod.Container, c.ID)
		if cpus, ok := g.Pod.ExclusiveCPUs.Get(); ok {
			if why := n.onHost(cpus, g.ExclusiveBy); why.Detail != "" {
				g.Pod.ExclusiveCPUs, g.ExclusiveBy = unknown.Not[cpuset.Set](why), ""
			}
		}
		g.Pod.Devices = devices(api, g.Pod.Container)
		g.Pod.IRQBalancing = unknown.NotAs[proc.IRQBalancing](unknown.KindNotApplicable, "a sandbox runs no workload")
		if g.Pod.Container != "" { // the sandbox runs no workload
			if !n.crioRead {
				n.crio, n.crioRead = crioConfigs(n.fsys), true
			}
			ib, why := readIRQBalancing(n.fsys, n.crio, c.ID, g.Pod.Container)
			switch {
			case ib != nil:
				g.Pod.IRQBalancing = unknown.Of(*ib)
			case why.Kind != "":
				g.Pod.IRQBalancing = unknown.Not[proc.IRQBalancing](why)
			case strings.HasPrefix(path.Base(c.Path), "crio-"):
				g.Pod.IRQBalancing = unknown.NotAs[proc.IRQBalancing](unknown.KindNotCaptured, noCRIOConfig(c.ID))
			default:
				g.Pod.IRQBalancing = notCRIO
			}
		}
		out = append(out, g)
	}
	return out
}

// devices are the devices the API gives the container name.
func devices(api *APIPod, name string) []proc.PodDevice {
	if api == nil || name == "" {
		return nil
	}
	var out []proc.PodDevice
	for _, c := range api.Containers {
		if c.Name != name {
			continue
		}
		for _, d := range c.Devices {
			out = append(out, proc.PodDevice{Resource: d.Resource, IDs: d.IDs, Nodes: d.Nodes})
		}
	}
	return out
}

// exclusive is the container's exclusive CPUs and what says so, or why
// they are unknown: the API's cpu_ids for it (or its pod's), or its
// checkpoint entry, malformed. None are known, and none says so, for a
// container the kubelet's word gives none.
func (n *node) exclusive(api *APIPod, uid, name, id string) (cpus unknown.Value[cpuset.Set], by string) {
	none := unknown.Of(cpuset.Set{})
	if n.apiOK {
		if api == nil || name == "" {
			return none, ""
		}
		const from = "the kubelet's pod resources API"
		if !api.CPUs.Known() {
			return unknown.NotAs[cpuset.Set](unknown.KindMalformed, from+", the pod's "+api.CPUs.Why().Detail), ""
		}
		for _, c := range api.Containers {
			switch set, ok := c.CPUs.Get(); {
			case c.Name != name:
			case !ok:
				return unknown.NotAs[cpuset.Set](unknown.KindMalformed, from+": "+c.CPUs.Why().Detail), ""
			case !set.IsEmpty():
				return c.CPUs, from + ": cpu_ids " + set.List()
			}
		}
		return none, ""
	}
	if n.ck == nil {
		return none, ""
	}
	e, ok := n.ck.CPUs(uid, name, id)
	set, known := e.CPUs.Get()
	switch {
	case !ok:
		return none, ""
	case !known:
		return unknown.NotAs[cpuset.Set](unknown.KindMalformed, fmt.Sprintf("the kubelet's CPU manager: /%s, %s layout: its entry is malformed: %s", CheckpointFile, n.ck.Layout, e.CPUs.Why().Detail)), ""
	}
	return e.CPUs, fmt.Sprintf("the kubelet's CPU manager: /%s, %s layout, gives it %s", CheckpointFile, n.ck.Layout, set.List())
}

// onHost says why the kubelet's word by on a container's CPUs is not
// taken: it names CPUs the host does not have (topology.ReadHostCPUs),
// which no kubelet gives (malformed), or the host's CPUs are unknown
// (failed); the zero Reason when they are all the host's.
func (n *node) onHost(cpus cpuset.Set, by string) unknown.Reason {
	if by == "" {
		return unknown.Reason{}
	}
	if !n.hostRead {
		n.host, n.hostErr = topology.ReadHostCPUs(n.fsys)
		n.hostRead = true
	}
	if n.hostErr != nil {
		return unknown.Because(unknown.KindFailed, fmt.Sprintf("%s, but which CPUs this host has is unknown: %v", by, n.hostErr))
	}
	if out := cpus.Difference(n.host); !out.IsEmpty() {
		return unknown.Because(unknown.KindMalformed, fmt.Sprintf("%s, naming CPUs %s, which this host does not have (it has %s)", by, out.List(), n.host.List()))
	}
	return unknown.Reason{}
}
