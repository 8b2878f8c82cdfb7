// Package zc says whether a NIC is ready for io_uring zero-copy receive
// (and, with Send, zero-copy send), prerequisite by prerequisite: each
// holds, does not hold or is unknown, with the evidence read and the
// command that fixes it. It only reads: the kernel's release and
// io_uring sysctls, the caller's capabilities on the live host, the
// NIC's driver and steering (steer) and its IOMMU group (topology).
//
// The prerequisites are the kernel's: io_uring's zero-copy receive
// (io_uring/zcrx.c, Documentation/networking/iou-zcrx.rst) binds a page
// pool memory provider to one rx queue through net_mp_open_rxq
// (net/core/netdev_rx_queue.c), which refuses a device without header
// split or with a non-zero header-split threshold (EINVAL), with an XDP
// program (EEXIST), a queue that already has a memory provider (EEXIST)
// or an AF_XDP socket (EBUSY), and restarts the queue through the
// driver's netdev_queue_mgmt_ops (EOPNOTSUPP without them). Steering the
// flow to that queue and keeping other flows off it is the user's, with
// ethtool, as the kernel's selftest (drivers/net/hw/iou-zcrx.py) does.
package zc

import (
	"errors"
	"fmt"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// Status is a prerequisite's verdict; a verdict that cannot be given is
// an unknown Prereq.Status, with why.
type Status string

// The verdicts.
const (
	StatusHolds Status = "holds"
	StatusFails Status = "does not hold"
)

// String is the verdict's words.
func (s Status) String() string { return string(s) }

// ID names a prerequisite; ids are a contract (-o json, audit): added,
// never renamed.
type ID string

// The prerequisites, in the order Check reports them.
const (
	IDKernel     ID = "kernel"
	IDIOURing    ID = "io-uring"
	IDCapNetAdm  ID = "cap-net-admin"
	IDQueueAPI   ID = "queue-api"
	IDHeaderSplt ID = "header-split"
	IDChannels   ID = "channels"
	IDRSS        ID = "rss-excludes-queue"
	IDNtuple     ID = "ntuple"
	IDFlowRule   ID = "flow-rule"
	IDXDP        ID = "no-xdp"
	IDQueueFree  ID = "queue-free"
	IDIOMMU      ID = "iommu"
)

// Prereq is one prerequisite's verdict with what it was read from.
type Prereq struct {
	ID   ID     `json:"id"`
	What string `json:"what"`
	// Status is the verdict; unknown when it cannot be given, the
	// reason's Detail then Evidence.
	Status unknown.Value[Status] `json:"status"`
	// Evidence is what was read and what it says; for an unknown, why it
	// is not known.
	Evidence string `json:"evidence"`
	// Fix is the command that makes it hold, "" when it holds; a fix no
	// command gives says so in words.
	Fix string `json:"fix,omitempty"`
	// Cost is what the published measurements say it costs (send's
	// IOMMU mode), "" when nothing is published.
	Cost string `json:"cost,omitempty"`
}

// Report is every prerequisite of zero-copy receive (or send) on one NIC.
type Report struct {
	NIC    string `json:"nic"`
	Driver string `json:"driver,omitempty"`
	Send   bool   `json:"send"`
	// Queue is the rx queue checked (receive): unknown with no --queue
	// and no channel count, not applicable to send. QueueBy says where
	// a known one came from.
	Queue   unknown.Value[int] `json:"queue"`
	QueueBy string             `json:"queue_by,omitempty"`
	Port    *int               `json:"port"` // --port; nil: any port
	Prereqs []Prereq           `json:"prereqs"`
}

// MarshalJSON writes the queue's reason beside it when it is unknown.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	return unknown.MarshalObject(plain(r))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Report) UnmarshalJSON(b []byte) error {
	type plain Report
	return unknown.UnmarshalObject(b, (*plain)(r))
}

// Blocker is the first prerequisite that does not hold, nil when none.
func (r *Report) Blocker() *Prereq {
	for i := range r.Prereqs {
		if unknown.Is(r.Prereqs[i].Status, StatusFails) {
			return &r.Prereqs[i]
		}
	}
	return nil
}

// Blockers are every prerequisite that does not hold, in order.
func (r *Report) Blockers() []Prereq {
	var out []Prereq
	for _, p := range r.Prereqs {
		if unknown.Is(p.Status, StatusFails) {
			out = append(out, p)
		}
	}
	return out
}

// Options are what to check.
type Options struct {
	// Queue is the rx queue for zero-copy receive; nil: the last rx
	// queue, the one `ethtool -X IF equal N-1` leaves out of RSS.
	Queue *int
	// Port is the TCP port the application receives on; nil: any rule
	// steering a destination port to the queue counts.
	Port *int
	// Send checks zero-copy send instead of receive.
	Send bool
	// Steer is the NIC's steering when the caller has read it (the
	// audit); nil: Check reads it with steer.Read.
	Steer *steer.NIC
}

// ErrBadOption is wrapped by Check's error for a queue or port out of
// range; it is the user's to fix.
var ErrBadOption = usage.New("bad zero-copy option")

// Check reads what zero-copy receive (o.Send: send) needs on the NIC nic
// of the host h read from fsys, and says of each prerequisite whether it
// holds. A NIC the host does not have is topology.ErrUnknownNIC.
func Check(fsys kfile.FS, h *topology.Host, nic string, o Options) (*Report, error) {
	switch {
	case o.Queue != nil && (*o.Queue < 0 || *o.Queue > 65535):
		return nil, fmt.Errorf("%w: queue %d: want 0 to 65535", ErrBadOption, *o.Queue)
	case o.Port != nil && (*o.Port < 1 || *o.Port > 65535):
		return nil, fmt.Errorf("%w: port %d: want 1 to 65535", ErrBadOption, *o.Port)
	case o.Send && (o.Queue != nil || o.Port != nil):
		return nil, fmt.Errorf("%w: queue and port are receive's; send checks the NIC's IOMMU group", ErrBadOption)
	}
	n, err := h.LookupNIC(nic)
	if err != nil {
		return nil, err
	}
	st := o.Steer
	if st == nil {
		sh, err := steer.Read(fsys, []string{n.Name})
		if err != nil {
			return nil, fmt.Errorf("zero-copy check of %s: %w", n.Name, err)
		}
		if st = sh.NIC(n.Name); st == nil {
			return nil, errors.New("zero-copy check of " + n.Name + ": steering not read")
		}
	}
	c := &checker{fsys: fsys, h: h, nic: n, st: st, o: o}
	c.readKernel()
	r := &Report{NIC: n.Name, Driver: c.driver(), Send: o.Send, Port: o.Port}
	if o.Send {
		r.Queue = unknown.NotAs[int](unknown.KindNotApplicable, "zero-copy send uses no rx queue")
		r.Prereqs = []Prereq{c.kernel(sendKernel), c.ioURing(), c.iommu()}
		return r, nil
	}
	r.Queue, r.QueueBy = c.pickQueue()
	if q, ok := r.Queue.Get(); ok {
		c.queue = &q
	}
	r.Prereqs = []Prereq{
		c.kernel(recvKernel), c.ioURing(), c.capNetAdmin(), c.queueAPI(), c.headerSplit(),
		c.channels(), c.rss(), c.ntuple(), c.flowRule(), c.xdp(), c.queueFree(),
	}
	return r, nil
}

// checker is one Check's reading.
type checker struct {
	fsys  kfile.FS
	h     *topology.Host
	nic   *topology.NIC
	st    *steer.NIC
	o     Options
	queue *int

	release     string       // /proc/sys/kernel/osrelease, "" when not read
	version     Version      // parsed from release; zero when not known
	releaseWhy  string       // why release is not known
	releaseKind unknown.Kind // and of what kind
}

// driver is the NIC's driver: ethtool -i's, else its device's.
func (c *checker) driver() string {
	if c.st.Driver != nil && c.st.Driver.Driver != "" {
		return c.st.Driver.Driver
	}
	return c.nic.Driver
}

// pickQueue is --queue, else the last rx queue (the one `ethtool -X IF
// equal N-1` leaves out), else queue 1 of the two channels the check
// asks for.
func (c *checker) pickQueue() (unknown.Value[int], string) {
	if c.o.Queue != nil {
		return unknown.Of(*c.o.Queue), "--queue"
	}
	if c.st.Channels == nil {
		return unknown.NotAs[int](c.partKind(steer.PartChannels), "the channel count is unknown: give --queue"), ""
	}
	n := int(c.st.Channels.RXQueues())
	if n < 2 {
		return unknown.Of(1), "default: queue 1 of the 2 channels zero-copy needs"
	}
	q := n - 1
	return unknown.Of(q), fmt.Sprintf("default: the last of %d rx queues, which ethtool -X %s equal %d leaves out", n, c.nic.Name, q)
}

// MarshalJSON writes the status's reason beside it when it is unknown.
func (p Prereq) MarshalJSON() ([]byte, error) {
	type plain Prereq
	return unknown.MarshalObject(plain(p))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Prereq) UnmarshalJSON(b []byte) error {
	type plain Prereq
	return unknown.UnmarshalObject(b, (*plain)(p))
}

func holds(id ID, what, evidence string) Prereq {
	return Prereq{ID: id, What: what, Status: unknown.Of(StatusHolds), Evidence: evidence}
}

func fails(id ID, what, evidence, fix string) Prereq {
	return Prereq{ID: id, What: what, Status: unknown.Of(StatusFails), Evidence: evidence, Fix: fix}
}

// notKnown is a prerequisite whose verdict is unknown, of kind k for
// why.
func notKnown(id ID, what string, k unknown.Kind, why, fix string) Prereq {
	return Prereq{ID: id, What: what, Status: unknown.NotAs[Status](k, why), Evidence: why, Fix: fix}
}

// partKind is the kind of why the steering part p is unknown.
func (c *checker) partKind(p steer.Part) unknown.Kind {
	if r, ok := c.st.Why(p); ok {
		return r.Kind
	}
	return unknown.KindNotRead
}

// partWhy is why the steering part p is unknown, in words.
func (c *checker) partWhy(p steer.Part, what string) string {
	if r, ok := c.st.Why(p); ok {
		return what + " " + r.String()
	}
	return what + " not read"
}
