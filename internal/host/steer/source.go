package steer

import (
	"sort"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// source answers the parts of a NIC's steering that are not sysfs files:
// the live host's netlink and ioctl, the replies a snapshot recorded, or
// the ethtool text of a sosreport.
type source interface {
	// read fills n's parts that come from ethtool and netdev (Driver,
	// Channels, Rings, RSS, Contexts, Features, Coalesce, FlowHash,
	// Rules, Queues, NAPIs, QStats), and calls n.SetUnknown for each it
	// cannot say. n.Name is set; n.Index when the root knows it.
	read(n *NIC)
	// name is what Host.Source says.
	name() Source
	// close releases what the source holds (sockets); it may be a no-op.
	close() error
}

// treeSource is a source a captured root may hold, tried in rank order
// (lowest first): the first whose open says the root has it answers.
type treeSource struct {
	rank int
	// open returns the source when the root holds what it reads.
	open func(fsys kfile.FS) (source, bool)
}

// treeSources are the registered tree sources, by rank.
var treeSources []treeSource

// registerTree adds a tree source; each source's file calls it from init.
func registerTree(s treeSource) {
	treeSources = append(treeSources, s)
	sort.SliceStable(treeSources, func(i, j int) bool { return treeSources[i].rank < treeSources[j].rank })
}
