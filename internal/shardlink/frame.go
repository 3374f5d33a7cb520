// Package shardlink is one long-lived connection to a shard node that
// carries many HTTP/1.1 requests at once, and their answers: a link. A
// caller (internal/shardclient) sends each request as a frame and waits
// for the answer frame of the same id; the node (shard/api) serves each
// request frame in process through its own HTTP handler. Under
// concurrency many frames share each write and read system call, where a
// pool of keep-alive connections makes one of each a request and side.
//
// A frame is [payload length: 4 bytes][request id: 8][kind: 1][payload],
// big-endian. Kinds: a request (the payload is the request as fasthttp
// writes it, so the node parses it with fasthttp and one set of rules
// applies), an answer (the answer as fasthttp writes it), a cancel (the
// caller gave up on that id; empty payload), a keep-alive (id 0, empty
// payload: the node sends one every KeepAliveHeader milliseconds while it
// has requests in flight, so that a caller tells a node that parks its
// requests from one that is gone without a word). Every request frame gets
// exactly one answer frame, a cancelled one too: both ends count a
// request in flight until its answer, so the caller never has more in
// flight than the node admits.
//
// A link is opened by an upgrade (GET Path with Connection: Upgrade and
// Upgrade: Protocol) on the node's HTTP listener, behind the same caller
// check as its /api/v1 routes; the node's 101 states its bounds
// (MaxRequestsHeader, MaxBodyHeader, MaxHeadHeader), which the caller
// keeps: a request over them goes another way, never on the link. It
// also states KeepAliveHeader; a caller that hears nothing at all on a
// link for three of those while requests wait ends the link, as if it had
// died (a node that states none is never judged so).
package shardlink

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
)

// The upgrade that opens a link.
const (
	Path     = "/internal/v1/link"
	Protocol = "jobbie-link"
	// The node's bounds, stated in its 101.
	MaxRequestsHeader = "Jobbie-Link-Max-Requests" // requests in flight at once
	MaxBodyHeader     = "Jobbie-Link-Max-Body"     // a request's body, bytes
	MaxHeadHeader     = "Jobbie-Link-Max-Head"     // a request's line and headers, bytes
	KeepAliveHeader   = "Jobbie-Link-Keep-Alive"   // milliseconds between keep-alives while requests are in flight
)

type kind byte

const (
	kindRequest kind = 1
	kindAnswer  kind = 2
	kindCancel  kind = 3
	kindPing    kind = 4
)

// headerSize is a frame header's length.
const headerSize = 13

// ErrGarbage is why a link was closed whose peer sent what the protocol
// does not allow: an unknown kind, an id it should not use, a frame over
// the bounds, a request that does not parse.
var ErrGarbage = errors.New("shardlink: the peer broke the link's protocol")

func garbage(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrGarbage}, args...)...)
}

// putHeader writes a frame's header into b[:headerSize].
func putHeader(b []byte, n int, id uint64, k kind) {
	binary.BigEndian.PutUint32(b, uint32(n))
	binary.BigEndian.PutUint64(b[4:], id)
	b[12] = byte(k)
}

// peekHeader reads the next frame's header from br without consuming it
// until it is whole: a read deadline that passes while a link waits for
// its next frame leaves the link intact.
func peekHeader(br *bufio.Reader) (n int, id uint64, k kind, err error) {
	b, err := br.Peek(headerSize)
	if err != nil {
		return 0, 0, 0, err
	}
	n = int(binary.BigEndian.Uint32(b))
	id = binary.BigEndian.Uint64(b[4:])
	k = kind(b[12])
	_, _ = br.Discard(headerSize)
	return n, id, k, nil
}

// Frame buffers: a frame's header and payload in one slice, so the
// writer writes it with one call. Buffers up to maxPooled are reused.
const maxPooled = 256 << 10

var bufs sync.Pool

func getBuf(n int) []byte {
	if n <= maxPooled {
		if p, ok := bufs.Get().(*[]byte); ok && cap(*p) >= n {
			return (*p)[:n]
		}
		return make([]byte, n, max(n, 4<<10))
	}
	return make([]byte, n)
}

func putBuf(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooled {
		return
	}
	b = b[:0]
	bufs.Put(&b)
}

// readPayload reads a frame's payload of n bytes from br. A frame's
// length is its sender's word: past maxPooled the buffer grows as the
// bytes come, so a header that claims megabytes and a sender that then
// sends little (or nothing) costs what it sent.
func readPayload(br *bufio.Reader, n int) ([]byte, error) {
	if n <= maxPooled {
		p := getBuf(n)
		if _, err := io.ReadFull(br, p); err != nil {
			putBuf(p)
			return nil, err
		}
		return p, nil
	}
	p := make([]byte, 0, maxPooled)
	for len(p) < n {
		if len(p) == cap(p) {
			p = slices.Grow(p, min(n, 2*cap(p))-len(p))
		}
		m, err := br.Read(p[len(p):min(n, cap(p))])
		p = p[:len(p)+m]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return p, nil
}

// appender is an io.Writer that appends to its buffer, for fasthttp's
// writers, up to limit bytes (0: any), while gone (if set) is false: a
// streamed answer (an event stream) never ends by itself, and stops at
// its first write after its caller left.
type appender struct {
	b     []byte
	limit int
	gone  func() bool
}

var (
	errOverLimit = errors.New("shardlink: the frame is over its limit")
	errGone      = errors.New("shardlink: the request's caller is gone")
)

func (a *appender) Write(p []byte) (int, error) {
	if a.limit > 0 && len(a.b)+len(p) > a.limit {
		return 0, errOverLimit
	}
	if a.gone != nil && a.gone() {
		return 0, errGone
	}
	a.b = append(a.b, p...)
	return len(p), nil
}
