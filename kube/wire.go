package kube

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/irqnuma/irqnuma/cpuset"
)

// eachField calls fn with each field of the protobuf message b: a
// length-delimited field's bytes in v, a varint's value in x. Fixed-size
// fields are skipped (no message here has one); a malformed message is
// an error.
func eachField(b []byte, fn func(n protowire.Number, t protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("protobuf: bad tag: %w", protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("protobuf: field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// appendInts appends a repeated int64 field: packed (proto3's default)
// or one varint.
func appendInts(out *[]int, t protowire.Type, v []byte, x uint64) error {
	add := func(x uint64) error {
		if int64(x) < 0 || x >= maxCPU {
			return fmt.Errorf("protobuf: id %d is not a CPU or node", int64(x))
		}
		*out = append(*out, int(x))
		return nil
	}
	if t == protowire.VarintType {
		return add(x)
	}
	if t != protowire.BytesType {
		return errors.New("protobuf: int64 field of a wrong wire type")
	}
	for len(v) > 0 {
		x, n := protowire.ConsumeVarint(v)
		if n < 0 {
			return fmt.Errorf("protobuf: packed int64: %w", protowire.ParseError(n))
		}
		if err := add(x); err != nil {
			return err
		}
		v = v[n:]
	}
	return nil
}

// str is a string field's value, which must be length-delimited.
func str(t protowire.Type, v []byte) (string, error) {
	if t != protowire.BytesType {
		return "", errors.New("protobuf: string field of a wrong wire type")
	}
	return string(v), nil
}

// decodeList decodes ListPodResourcesResponse {repeated PodResources
// pod_resources = 1}.
func decodeList(b []byte) ([]APIPod, error) {
	var pods []APIPod
	err := eachField(b, func(n protowire.Number, t protowire.Type, v []byte, _ uint64) error {
		if n != 1 {
			return nil
		}
		if t != protowire.BytesType {
			return errors.New("protobuf: pod_resources of a wrong wire type")
		}
		p, err := decodePod(v)
		pods = append(pods, p)
		return err
	})
	return pods, err
}

// decodePod decodes PodResources {name = 1, namespace = 2, repeated
// ContainerResources containers = 3, repeated int64 cpu_ids = 4}.
func decodePod(b []byte) (APIPod, error) {
	var p APIPod
	var cpus []int
	err := eachField(b, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
		var err error
		switch n {
		case 1:
			p.Name, err = str(t, v)
		case 2:
			p.Namespace, err = str(t, v)
		case 3:
			var c APIContainer
			if c, err = decodeContainer(t, v); err == nil {
				p.Containers = append(p.Containers, c)
			}
		case 4:
			err = appendInts(&cpus, t, v, x)
		}
		return err
	})
	p.CPUs = cpuset.New(cpus...)
	return p, err
}

// decodeContainer decodes ContainerResources {name = 1, repeated
// ContainerDevices devices = 2, repeated int64 cpu_ids = 3}; memory and
// dynamic resources are not read.
func decodeContainer(t protowire.Type, b []byte) (APIContainer, error) {
	var c APIContainer
	if t != protowire.BytesType {
		return c, errors.New("protobuf: containers of a wrong wire type")
	}
	var cpus []int
	err := eachField(b, func(n protowire.Number, t protowire.Type, v []byte, x uint64) error {
		var err error
		switch n {
		case 1:
			c.Name, err = str(t, v)
		case 2:
			var d Device
			if d, err = decodeDevice(v); err == nil {
				c.Devices = append(c.Devices, d)
			}
		case 3:
			err = appendInts(&cpus, t, v, x)
		}
		return err
	})
	c.CPUs = cpuset.New(cpus...)
	return c, err
}

// decodeDevice decodes ContainerDevices {resource_name = 1, repeated
// string device_ids = 2, TopologyInfo topology = 3}, TopologyInfo being
// {repeated NUMANode nodes = 1} and NUMANode {int64 ID = 1}.
func decodeDevice(b []byte) (Device, error) {
	var d Device
	err := eachField(b, func(n protowire.Number, t protowire.Type, v []byte, _ uint64) error {
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
			err = eachField(v, func(n protowire.Number, t protowire.Type, v []byte, _ uint64) error {
				if n != 1 {
					return nil
				}
				return eachField(v, func(n protowire.Number, t protowire.Type, _ []byte, x uint64) error {
					if n != 1 {
						return nil
					}
					return appendInts(&d.Nodes, t, nil, x)
				})
			})
		}
		return err
	})
	return d, err
}
