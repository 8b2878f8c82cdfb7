package kube

import (
	"errors"
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// eachField calls fn with each field of the protobuf message b: a
// length-delimited field's bytes in v, a varint's value in x. Fixed-size
// fields and groups are skipped (no message here has one); a malformed
// message is an error.
func eachField(b []byte, fn func(n fieldNum, t wireType, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n, err := consumeTag(b)
		if err != nil {
			return fmt.Errorf("protobuf: bad tag: %w", err)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case bytesType:
			v, n, err = consumeBytes(b)
		case varintType:
			x, n, err = consumeVarint(b)
		default:
			n, err = skipValue(num, typ, b, maxGroupDepth)
		}
		if err != nil {
			return fmt.Errorf("protobuf: field %d: %w", num, err)
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// ints calls add with each value of a repeated int64 field: packed
// (proto3's default) or one varint.
func ints(t wireType, v []byte, x uint64, add func(int64)) error {
	if t == varintType {
		add(int64(x))
		return nil
	}
	if t != bytesType {
		return errors.New("protobuf: int64 field of a wrong wire type")
	}
	for len(v) > 0 {
		x, n, err := consumeVarint(v)
		if err != nil {
			return fmt.Errorf("protobuf: packed int64: %w", err)
		}
		add(int64(x))
		v = v[n:]
	}
	return nil
}

// cpuIDs gathers one message's cpu_ids: the ids, or why they are no
// CPUs. An id outside [0, cpuset.MaxID] is one no CPU has (Linux's
// NR_CPUS is far below the bound); more ids than there are below the
// bound repeat some. Either makes the message's CPUs malformed, not
// the whole answer: the other pods' CPUs still read.
type cpuIDs struct {
	ids []int
	why string
}

func (c *cpuIDs) add(id int64) {
	switch {
	case c.why != "":
	case id < 0:
		c.why = fmt.Sprintf("cpu_ids malformed: %d is not a CPU id", id)
	case id > cpuset.MaxID:
		c.why = fmt.Sprintf("cpu_ids malformed: %d is past %d, the largest CPU id", id, cpuset.MaxID)
	case len(c.ids) > cpuset.MaxID:
		c.why = fmt.Sprintf("cpu_ids malformed: more than %d ids, more than there are CPU ids", cpuset.MaxID+1)
	default:
		c.ids = append(c.ids, int(id))
	}
}

// set is the gathered CPUs, or why they are unknown; the ids' array is
// kept for the next message.
func (c *cpuIDs) set() unknown.Value[cpuset.Set] {
	s := unknown.NotAs[cpuset.Set](unknown.KindMalformed, c.why)
	if c.why == "" {
		s = unknown.Of(cpuset.New(c.ids...))
	}
	c.ids, c.why = c.ids[:0], ""
	return s
}

// str is a string field's value, which must be length-delimited.
func str(t wireType, v []byte) (string, error) {
	if t != bytesType {
		return "", errors.New("protobuf: string field of a wrong wire type")
	}
	return string(v), nil
}

// decodeList decodes ListPodResourcesResponse {repeated PodResources
// pod_resources = 1}.
func decodeList(b []byte) ([]APIPod, error) {
	var pods []APIPod
	var d listDecoder
	err := eachField(b, func(n fieldNum, t wireType, v []byte, _ uint64) error {
		if n != 1 {
			return nil
		}
		if t != bytesType {
			return errors.New("protobuf: pod_resources of a wrong wire type")
		}
		p, err := d.pod(v)
		pods = append(pods, p)
		return err
	})
	return pods, err
}

// listDecoder holds the cpu_ids of the pod and of the container being
// decoded, their arrays reused from message to message.
type listDecoder struct{ podCPUs, ctrCPUs cpuIDs }

// pod decodes PodResources {name = 1, namespace = 2, repeated
// ContainerResources containers = 3, repeated int64 cpu_ids = 4}.
func (d *listDecoder) pod(b []byte) (APIPod, error) {
	var p APIPod
	err := eachField(b, func(n fieldNum, t wireType, v []byte, x uint64) error {
		var err error
		switch n {
		case 1:
			p.Name, err = str(t, v)
		case 2:
			p.Namespace, err = str(t, v)
		case 3:
			var c APIContainer
			if c, err = d.container(t, v); err == nil {
				p.Containers = append(p.Containers, c)
			}
		case 4:
			err = ints(t, v, x, d.podCPUs.add)
		}
		return err
	})
	p.CPUs = d.podCPUs.set()
	return p, err
}

// container decodes ContainerResources {name = 1, repeated
// ContainerDevices devices = 2, repeated int64 cpu_ids = 3}; memory and
// dynamic resources are not read.
func (d *listDecoder) container(t wireType, b []byte) (APIContainer, error) {
	var c APIContainer
	if t != bytesType {
		return c, errors.New("protobuf: containers of a wrong wire type")
	}
	err := eachField(b, func(n fieldNum, t wireType, v []byte, x uint64) error {
		var err error
		switch n {
		case 1:
			c.Name, err = str(t, v)
		case 2:
			var dev Device
			if dev, err = decodeDevice(v); err == nil {
				c.Devices = append(c.Devices, dev)
			}
		case 3:
			err = ints(t, v, x, d.ctrCPUs.add)
		}
		return err
	})
	c.CPUs = d.ctrCPUs.set()
	return c, err
}

// decodeDevice decodes ContainerDevices {resource_name = 1, repeated
// string device_ids = 2, TopologyInfo topology = 3}, TopologyInfo being
// {repeated NUMANode nodes = 1} and NUMANode {int64 ID = 1}.
func decodeDevice(b []byte) (Device, error) {
	var d Device
	err := eachField(b, func(n fieldNum, t wireType, v []byte, _ uint64) error {
		var err error
		switch n {
		case 1:
			d.Resource, err = str(t, v)
		case 2:
			var id string
			if id, err = str(t, v); err == nil {
				d.IDs = append(d.IDs, id)
			}
		case 3:
			err = eachField(v, func(n fieldNum, t wireType, v []byte, _ uint64) error {
				if n != 1 {
					return nil
				}
				return eachField(v, func(n fieldNum, t wireType, _ []byte, x uint64) error {
					if n != 1 {
						return nil
					}
					switch id := int64(x); {
					case t != varintType:
						return errors.New("protobuf: NUMANode ID of a wrong wire type")
					case id < 0 || id > cpuset.MaxID:
						return fmt.Errorf("protobuf: NUMA node %d is not a node id (0 to %d)", id, cpuset.MaxID)
					}
					d.Nodes = append(d.Nodes, int(x))
					return nil
				})
			})
		}
		return err
	})
	return d, err
}
