package snapshot

import (
	"path"
	"strconv"

	"github.com/irqnuma/irqnuma/internal/host/nslink"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/pci"
)

// hostNetns records, once, the host's network namespace and its links
// (nslink.RecordHost): zc check reads the NIC's IFLA_XDP from them, on
// the live root from the kernel and on a captured one from this
// recording. A captured root's recording of them is copied as it is.
func (c *capturer) hostNetns() error {
	if !c.fs.Live() {
		ns := nslink.HostNamespace(c.fs)
		ino, err := nslink.Inode(ns)
		if err != nil {
			return nil // the tree records no host namespace
		}
		if err := c.file(path.Join(nslink.RecordDir, "host")); err != nil {
			return err
		}
		return c.copyTree(path.Join(nslink.RecordDir, strconv.FormatUint(ino, 10)))
	}
	ls, err := nslink.RecordHost(c.fs, c.put)
	switch {
	case err != nil:
		c.note("the host's network interfaces (zc check's no-xdp) not captured: " + err.Error())
	case !ls.Links.Known():
		c.note("the host's network interfaces (zc check's no-xdp) not captured: " + ls.Links.Why().Detail)
	}
	return nil
}

// netns records what nicuse follows a process's interfaces by when its
// network namespace is not the host's: the namespace's links and the id
// it gives the host's (nslink.Record on the live root; a captured root's
// recording is copied as it is), the host's routes a veth's traffic
// takes (PID 1's namespace's tables), and the sysfs folder of each PCI
// function its links belong to (a VF: its numa_node and physfn).
func (c *capturer) netns(d string) error {
	ns, err := c.fs.Readlink(c.abs(d + "/ns/net"))
	host := nslink.HostNamespace(c.fs)
	if err != nil || (host != "" && ns == host) {
		return nil
	}
	for _, f := range []string{"route", "ipv6_route", "if_inet6"} {
		if err := c.fileUpTo("proc/1/net/"+f, proc.MaxNetFile); err != nil {
			return err
		}
	}
	if !c.fs.Live() {
		return c.copyTree(nslink.RecordDir)
	}
	ino, err := nslink.Inode(ns)
	if err != nil || c.dirs[path.Join(nslink.RecordDir, strconv.FormatUint(ino, 10))] {
		return nil // not a namespace link, or recorded for another process
	}
	if !c.files[path.Join(nslink.RecordDir, "host")] {
		if _, err := nslink.RecordHost(c.fs, c.put); err != nil {
			c.note("network namespaces not captured: " + err.Error())
			return nil
		}
	}
	pid, _ := strconv.Atoi(path.Base(d))
	ls, err := nslink.Record(c.fs, pid, ns, c.put)
	if err != nil {
		return err
	}
	for _, l := range ls.Links.Or(nil) {
		if l.ParentBus != "pci" || !pci.IsAddress(l.ParentDev) {
			continue
		}
		dev := "sys/bus/pci/devices/" + l.ParentDev
		if err := c.entry(dev); err != nil {
			return err
		}
		real, err := c.resolve(dev)
		if err != nil {
			continue // noted by entry
		}
		if err := c.file(real + "/numa_node"); err != nil {
			return err
		}
		if err := c.entry(real + "/physfn"); err != nil {
			return err
		}
	}
	return nil
}
