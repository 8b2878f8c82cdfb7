package kube

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"
)

// h2Server serves one connection on a unix socket with serve, which
// reads and writes frames by hand: what a server may do that grpc-go's
// does not (pad, ping, split a header block).
func h2Server(t *testing.T, serve func(r *bufio.Reader, w net.Conn)) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "kubelet.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		serve(bufio.NewReader(conn), conn)
	}()
	return sock
}

func writeFrame(w io.Writer, typ, flags byte, stream uint32, p []byte) {
	h := []byte{byte(len(p) >> 16), byte(len(p) >> 8), byte(len(p)), typ, flags, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(h[5:], stream)
	w.Write(append(h, p...))
}

func headerBlock(fields ...string) []byte {
	var b bytesBuffer
	enc := hpack.NewEncoder(&b)
	for i := 0; i+1 < len(fields); i += 2 {
		enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return b
}

// TestH2CallByHand: the call reads an answer whose DATA is padded, whose
// headers come in a HEADERS and a CONTINUATION frame, with a PING
// between, and answers the ping and the settings; the body is the gRPC
// frame sent.
func TestH2CallByHand(t *testing.T) {
	pong := make(chan []byte, 1)
	sock := h2Server(t, func(r *bufio.Reader, w net.Conn) {
		pre := make([]byte, len(h2Preface))
		if _, err := io.ReadFull(r, pre); err != nil || string(pre) != h2Preface {
			return
		}
		writeFrame(w, frameSettings, 0, 0, nil)
		writeFrame(w, framePing, 0, 0, []byte("12345678"))
		hb := headerBlock(":status", "200", "content-type", "application/grpc")
		writeFrame(w, frameHeaders, 0, 1, hb[:2])
		writeFrame(w, frameContinuation, flagEndHeaders, 1, hb[2:])
		body := []byte{0, 0, 0, 0, 3, 'a', 'b', 'c'}
		padded := append(append([]byte{4}, body...), 0, 0, 0, 0)
		writeFrame(w, frameData, flagPadded, 1, padded)
		writeFrame(w, frameHeaders, flagEndHeaders|flagEndStream, 1, headerBlock("grpc-status", "0"))
		// The client's frames: settings, headers, data, then its answers.
		for {
			var h [9]byte
			if _, err := io.ReadFull(r, h[:]); err != nil {
				close(pong)
				return
			}
			p := make([]byte, int(h[0])<<16|int(h[1])<<8|int(h[2]))
			if _, err := io.ReadFull(r, p); err != nil {
				close(pong)
				return
			}
			if h[3] == framePing && h[4]&flagAck != 0 {
				pong <- p
				return
			}
		}
	})
	a, err := h2Call(context.Background(), sock, methodList, nil)
	if err != nil {
		t.Fatalf("h2Call: %v", err)
	}
	if string(a.body) != "\x00\x00\x00\x00\x03abc" || a.headers[":status"] != "200" || a.trailers["grpc-status"] != "0" {
		t.Errorf("h2Call = body %q, headers %v, trailers %v", a.body, a.headers, a.trailers)
	}
	if p := <-pong; string(p) != "12345678" {
		t.Errorf("ping answered with %q, want 12345678", p)
	}
}

// TestH2CallContext: a kubelet that accepts and never answers holds the
// call only until its context ends, and the error says so.
func TestH2CallContext(t *testing.T) {
	sock := h2Server(t, func(r *bufio.Reader, w net.Conn) { io.Copy(io.Discard, r) })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() { _, err := h2Call(ctx, sock, methodList, nil); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("h2Call after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("h2Call still waits 10 s after its context ended")
	}
}

// TestH2CallRefusesBadFrames: a frame past the size this client takes, a
// reset stream and padding past a frame's end are errors, not hangs.
func TestH2CallRefusesBadFrames(t *testing.T) {
	tests := []struct {
		name string
		give func(w net.Conn)
	}{
		{"oversized frame", func(w net.Conn) { writeFrame(w, frameData, 0, 1, make([]byte, maxFrame+1)) }},
		{"reset", func(w net.Conn) { writeFrame(w, frameRSTStream, 0, 1, []byte{0, 0, 0, 2}) }},
		{"padding past the end", func(w net.Conn) { writeFrame(w, frameData, flagPadded, 1, []byte{9, 'a'}) }},
		{"push", func(w net.Conn) { writeFrame(w, framePushPromise, flagEndHeaders, 1, []byte{0, 0, 0, 2}) }},
		{"closed", func(w net.Conn) {}},
	}
	for _, tt := range tests {
		sock := h2Server(t, func(r *bufio.Reader, w net.Conn) {
			pre := make([]byte, len(h2Preface))
			io.ReadFull(r, pre)
			tt.give(w)
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := h2Call(ctx, sock, methodList, nil)
		cancel()
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: h2Call = %v, want an error of its own", tt.name, err)
		}
	}
}
