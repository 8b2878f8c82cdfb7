package kube

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"golang.org/x/net/http2/hpack"
)

// One gRPC unary call over unencrypted HTTP/2 (RFC 9113, "prior
// knowledge": the client's preface, no upgrade), as much of the protocol
// as a call to the kubelet's socket takes: kube speaks it itself rather
// than through net/http, whose HTTP/1, TLS and certificate code every
// irqnuma command would initialise at start for the one flag (--pod)
// that asks the kubelet. Header blocks are HPACK (golang.org/x/net's
// hpack, which links nothing of net/http).

// The frame types and flags used.
const (
	frameData         = 0x0
	frameHeaders      = 0x1
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePushPromise  = 0x5
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	frameContinuation = 0x9

	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20
)

// h2Preface opens a connection (RFC 9113 3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// Bounds of what the kubelet may send: a frame no larger than the
// protocol's default SETTINGS_MAX_FRAME_SIZE (this client announces no
// other), and header blocks of at most maxHeaderBytes in all.
const (
	maxFrame       = 16384
	maxHeaderBytes = 64 << 10
)

// h2Answer is what a unary call's stream returned: the headers, the
// trailers (none for a trailers-only answer) and the body.
type h2Answer struct {
	headers, trailers map[string]string
	body              []byte
}

// h2Call makes one call of method on the unix socket: it sends msg in
// gRPC's frame and reads the stream to its end. ctx bounds the call.
func h2Call(ctx context.Context, socket, method string, msg []byte) (*h2Answer, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	c := &h2Conn{rw: bufio.NewReadWriter(bufio.NewReader(conn), bufio.NewWriter(conn))}
	if err := c.request(method, msg); err != nil {
		return nil, c.ctxErr(ctx, err)
	}
	a, err := c.answer()
	if err != nil {
		return nil, c.ctxErr(ctx, err)
	}
	return a, nil
}

// h2Conn is one connection with one stream, number 1.
type h2Conn struct {
	rw  *bufio.ReadWriter
	hdr [9]byte
}

// ctxErr is err, or the context's error when the context ended the call.
func (c *h2Conn) ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

// frame writes one frame.
func (c *h2Conn) frame(typ, flags byte, stream uint32, payload []byte) {
	var h [9]byte
	h[0], h[1], h[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	h[3], h[4] = typ, flags
	binary.BigEndian.PutUint32(h[5:], stream)
	c.rw.Write(h[:])
	c.rw.Write(payload)
}

// request writes the preface, this client's settings (no server push),
// the call's headers and its one message, ending the stream.
func (c *h2Conn) request(method string, msg []byte) error {
	c.rw.WriteString(h2Preface)
	c.frame(frameSettings, 0, 0, []byte{0, 2, 0, 0, 0, 0}) // SETTINGS_ENABLE_PUSH 0
	var block bytesBuffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", method},
		{":authority", "localhost"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			return err
		}
	}
	if len(block) > maxFrame {
		return fmt.Errorf("request headers of %d bytes", len(block))
	}
	c.frame(frameHeaders, flagEndHeaders, 1, block)
	grpc := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(grpc[1:], uint32(len(msg)))
	grpc = append(grpc, msg...)
	for len(grpc) > maxFrame {
		c.frame(frameData, 0, 1, grpc[:maxFrame])
		grpc = grpc[maxFrame:]
	}
	c.frame(frameData, flagEndStream, 1, grpc)
	return c.rw.Flush()
}

// bytesBuffer is the io.Writer hpack encodes into.
type bytesBuffer []byte

func (b *bytesBuffer) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// readFrame reads the next frame: its type, flags, stream and payload.
func (c *h2Conn) readFrame(buf []byte) (typ, flags byte, stream uint32, payload []byte, err error) {
	if _, err = io.ReadFull(c.rw, c.hdr[:]); err != nil {
		return 0, 0, 0, nil, fmt.Errorf("read frame: %w", err)
	}
	n := int(c.hdr[0])<<16 | int(c.hdr[1])<<8 | int(c.hdr[2])
	if n > maxFrame {
		return 0, 0, 0, nil, fmt.Errorf("frame of %d bytes, past the %d this client takes", n, maxFrame)
	}
	payload = buf[:n]
	if _, err = io.ReadFull(c.rw, payload); err != nil {
		return 0, 0, 0, nil, fmt.Errorf("read frame: %w", err)
	}
	return c.hdr[3], c.hdr[4], binary.BigEndian.Uint32(c.hdr[5:]) & 0x7fffffff, payload, nil
}

// unpad takes a frame's padding (and a HEADERS frame's priority) off.
func unpad(typ, flags byte, p []byte) ([]byte, error) {
	if flags&flagPadded != 0 {
		if len(p) < 1 || int(p[0]) > len(p)-1 {
			return nil, errors.New("frame padding past its end")
		}
		p = p[1 : len(p)-int(p[0])]
	}
	if typ == frameHeaders && flags&flagPriority != 0 {
		if len(p) < 5 {
			return nil, errors.New("HEADERS frame priority past its end")
		}
		p = p[5:]
	}
	return p, nil
}

// answer reads frames until stream 1 ends: its header blocks (headers,
// then trailers) and its body, answering settings and pings and giving
// back flow-control window as the body is read.
func (c *h2Conn) answer() (*h2Answer, error) {
	a := &h2Answer{}
	s := &h2Stream{dec: hpack.NewDecoder(4096, nil)}
	s.dec.SetMaxStringLength(maxHeaderBytes)
	buf := make([]byte, maxFrame)
	for {
		typ, flags, stream, p, err := c.readFrame(buf)
		if err != nil {
			return nil, err
		}
		end, err := c.handle(s, a, typ, flags, stream, p)
		if err != nil {
			return nil, err
		}
		// What the client answers (acks, window) is sent best-effort: a
		// server gone away shows as the next read's error, and what it
		// sent before is still read.
		_ = c.rw.Flush()
		if end {
			return a, nil
		}
	}
}

// h2Stream is the reading of stream 1's header blocks: the connection's
// HPACK decoder (its table spans every block) and a block being gathered
// from CONTINUATION frames.
type h2Stream struct {
	dec       *hpack.Decoder
	block     []byte
	gathering bool
	endStream bool // the block being gathered ends the stream
}

// handle takes one frame, and says whether stream 1 ended with it.
func (c *h2Conn) handle(s *h2Stream, a *h2Answer, typ, flags byte, stream uint32, p []byte) (bool, error) {
	if s.gathering && typ != frameContinuation {
		return false, fmt.Errorf("frame type %d inside a header block", typ)
	}
	switch typ {
	case frameSettings:
		if flags&flagAck == 0 {
			c.frame(frameSettings, flagAck, 0, nil)
		}
	case framePing:
		if flags&flagAck == 0 && len(p) == 8 {
			c.frame(framePing, flagAck, 0, p)
		}
	case frameGoAway:
		if len(p) >= 8 && binary.BigEndian.Uint32(p)&0x7fffffff < 1 {
			return false, fmt.Errorf("connection refused by GOAWAY (error code %d)", binary.BigEndian.Uint32(p[4:]))
		}
	case framePushPromise:
		return false, errors.New("server push, which this client turned off")
	case frameRSTStream:
		if stream == 1 && len(p) == 4 {
			return false, fmt.Errorf("stream reset (error code %d)", binary.BigEndian.Uint32(p))
		}
	case frameData:
		if stream != 1 {
			return false, nil
		}
		if len(p) > 0 { // flow control counts the whole payload, padding too
			var inc [4]byte
			binary.BigEndian.PutUint32(inc[:], uint32(len(p)))
			c.frame(frameWindowUpdate, 0, 0, inc[:])
			c.frame(frameWindowUpdate, 0, 1, inc[:])
		}
		data, err := unpad(typ, flags, p)
		if err != nil {
			return false, err
		}
		if len(a.body)+len(data) > maxMessage+5 {
			return false, fmt.Errorf("answer past %d bytes", maxMessage)
		}
		a.body = append(a.body, data...)
		return flags&flagEndStream != 0, nil
	case frameHeaders, frameContinuation:
		return c.headers(s, a, typ, flags, stream, p)
	}
	return false, nil
}

// headers gathers a header block and, at its end, decodes it into the
// answer's headers (the first block) or trailers (the second).
func (c *h2Conn) headers(s *h2Stream, a *h2Answer, typ, flags byte, stream uint32, p []byte) (bool, error) {
	switch {
	case typ == frameHeaders:
		if stream != 1 {
			return false, fmt.Errorf("HEADERS on stream %d, which this client did not open", stream)
		}
		var err error
		if p, err = unpad(typ, flags, p); err != nil {
			return false, err
		}
		s.block, s.gathering, s.endStream = s.block[:0], true, flags&flagEndStream != 0
	case !s.gathering:
		return false, errors.New("CONTINUATION frame outside a header block")
	}
	if len(s.block)+len(p) > maxHeaderBytes {
		return false, fmt.Errorf("header block past %d bytes", maxHeaderBytes)
	}
	s.block = append(s.block, p...)
	if flags&flagEndHeaders == 0 {
		return false, nil
	}
	s.gathering = false
	fields, err := s.dec.DecodeFull(s.block)
	if err != nil {
		return false, fmt.Errorf("header block: %w", err)
	}
	m := make(map[string]string, len(fields))
	for _, f := range fields {
		m[f.Name] = f.Value
	}
	switch {
	case a.headers == nil:
		a.headers = m
	case a.trailers == nil:
		a.trailers = m
	default:
		return false, errors.New("a third header block on the stream")
	}
	return s.endStream, nil
}
