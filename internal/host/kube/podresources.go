package kube

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// SocketFile is the kubelet's pod resources socket under its root
// directory (podresources.Socket in pkg/kubelet/apis/podresources).
const SocketFile = "var/lib/kubelet/pod-resources/kubelet.sock"

// The one method irqnuma asks (k8s.io/kubelet/pkg/apis/podresources/v1,
// api.proto): List, which every kubelet with the API serves and which
// gives every pod's CPUs and devices at once. The messages are decoded here by their field numbers: the
// generated package needs google.golang.org/grpc, whose initialisation
// the CLI would pay at every start.
const methodList = "/v1.PodResourcesLister/List"

// maxMessage bounds an answer: the kubelet's own limit on what it sends
// (podresources.DefaultMaxMsgSize, 16 MiB).
const maxMessage = 16 << 20

// ErrUnimplemented is wrapped by a call the kubelet does not serve
// (gRPC status 12).
var ErrUnimplemented = errors.New("the kubelet does not serve this method")

// APIPod is a pod as List says it: its containers and the CPUs
// the kubelet gave each exclusively (cpu_ids; none for a container on the
// shared pool), and its devices with their NUMA nodes.
type APIPod struct {
	Namespace, Name string
	// CPUs are the pod-level cpu_ids (pod-level resources), usually
	// none; unknown, malformed, when an id is no CPU's, the reason's
	// detail saying which.
	CPUs       unknown.Value[cpuset.Set]
	Containers []APIContainer
}

// APIContainer is one container of an APIPod; CPUs are its cpu_ids as
// APIPod's are the pod's.
type APIContainer struct {
	Name    string
	CPUs    unknown.Value[cpuset.Set]
	Devices []Device
}

// Device is one ContainerDevices: a resource's device IDs and the NUMA
// nodes the device plugin says they are on.
type Device struct {
	Resource string
	IDs      []string
	Nodes    []int
}

// Client speaks the pod resources API over the kubelet's unix socket:
// gRPC's framing and status over unencrypted HTTP/2 (h2c.go), one
// connection per call.
type Client struct {
	socket string
}

// newClient returns a client of the socket; nothing is dialled yet.
func newClient(socket string) *Client { return &Client{socket: socket} }

// Close ends the client; each call's connection is closed by the call.
func (c *Client) Close() {}

// List lists every pod the kubelet runs.
func (c *Client) List(ctx context.Context) ([]APIPod, error) {
	b, err := c.ListRaw(ctx)
	if err != nil {
		return nil, err
	}
	return decodeList(b)
}

// ListRaw is List's answer undecoded: the ListPodResourcesResponse
// message as the kubelet sent it.
func (c *Client) ListRaw(ctx context.Context) ([]byte, error) {
	return c.call(ctx, methodList, nil)
}

// call makes one unary call: the request in gRPC's frame (a zero
// compression flag, a 4-byte big-endian length), the answer's single
// frame back, and the status from the trailers (or the headers of a
// trailers-only answer).
func (c *Client) call(ctx context.Context, method string, msg []byte) ([]byte, error) {
	a, err := h2Call(ctx, c.socket, method, msg)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", c.socket, method, err)
	}
	if err := grpcStatus(a); err != nil {
		return nil, fmt.Errorf("%s %s: %w", c.socket, method, err)
	}
	b, err := unframe(a.body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", c.socket, method, err)
	}
	return b, nil
}

// grpcStatus is the call's gRPC status as an error, nil for OK.
func grpcStatus(a *h2Answer) error {
	if st := a.headers[":status"]; st != "200" {
		return fmt.Errorf("HTTP status %s", clip(st))
	}
	s, msg := a.trailers["grpc-status"], a.trailers["grpc-message"]
	if s == "" {
		s, msg = a.headers["grpc-status"], a.headers["grpc-message"]
	}
	code, err := strconv.Atoi(s)
	switch {
	case s == "" || err != nil:
		return fmt.Errorf("no gRPC status in the answer (%q)", clip(s))
	case code == 0:
		return nil
	case code == 12:
		return fmt.Errorf("%w (gRPC status 12: %s)", ErrUnimplemented, clip(unescape(msg)))
	}
	return fmt.Errorf("gRPC status %d: %s", code, clip(unescape(msg)))
}

// unescape undoes gRPC's percent-encoding of grpc-message.
func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// unframe takes the one message out of a unary answer's body.
func unframe(b []byte) ([]byte, error) {
	if len(b) < 5 {
		return nil, fmt.Errorf("answer of %d bytes has no gRPC frame", len(b))
	}
	if b[0] != 0 {
		return nil, fmt.Errorf("answer compressed (flag %d), which was not asked for", b[0])
	}
	n := binary.BigEndian.Uint32(b[1:5])
	if n > maxMessage || uint64(len(b)-5) != uint64(n) {
		return nil, fmt.Errorf("answer frame says %d bytes, %d follow", n, len(b)-5)
	}
	return b[5:], nil
}
