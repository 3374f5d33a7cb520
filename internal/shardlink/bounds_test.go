package shardlink

import (
	"bufio"
	"bytes"
	"net"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// What a link holds of the node under a caller that misbehaves or is
// unlucky: streamed answers, stated lengths, deadlines, odd requests.

// A streamed answer (an event stream) does not end on its own: once its
// caller gave up, the node stops it at its next write, and the request
// leaves flight.
func TestAStreamedAnswerEndsWithItsCaller(t *testing.T) {
	ended := make(chan struct{})
	stop := t.Context().Done() // the stream must not outlive the test: the node's cleanup waits for it
	n := serveNode(t, ServerConfig{}, func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			defer close(ended)
			for {
				_, _ = w.WriteString(": heartbeat\n\n")
				if w.Flush() != nil {
					return
				}
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		})
	})
	c := open(t, n.addr)
	req := post("/events", "")
	defer fasthttp.ReleaseRequest(req)
	var resp fasthttp.Response
	require.ErrorIs(t, c.Do(req, &resp, time.Now().Add(100*time.Millisecond), 1<<20), fasthttp.ErrTimeout)
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream went on after its caller gave up")
	}
	eventually(t, func() bool { return c.inFlight() == 0 }, "the stream's request never left flight")
}

// A streamed answer that never ends is cut at MaxAnswer: the caller gets
// a 500 at once, and the stream ends.
func TestAStreamedAnswerIsBounded(t *testing.T) {
	ended := make(chan struct{})
	stop := t.Context().Done() // the stream must not outlive the test: the node's cleanup waits for it
	n := serveNode(t, ServerConfig{MaxAnswer: 64 << 10}, func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			defer close(ended)
			chunk := bytes.Repeat([]byte("e"), 1<<10)
			for {
				_, _ = w.Write(chunk)
				if w.Flush() != nil {
					return
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		})
	})
	c := open(t, n.addr)
	req := post("/export", "")
	defer fasthttp.ReleaseRequest(req)
	var resp fasthttp.Response
	require.NoError(t, c.Do(req, &resp, time.Now().Add(10*time.Second), 1<<20))
	require.Equal(t, fasthttp.StatusInternalServerError, resp.StatusCode(), string(resp.Body()))
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream went on after it was cut")
	}
}

// A frame's length is its sender's word: the node gives memory to what
// came, not to what a header claims (a caller that states 64 MiB and
// sends a kilobyte costs about a kilobyte).
func TestAFramesLengthIsNotMemory(t *testing.T) {
	n := serveNode(t, ServerConfig{MaxBody: 64 << 20}, echo)
	conn, br := rawLink(t, n.addr)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	frame := make([]byte, headerSize+1<<10)
	putHeader(frame, 64<<20, 1, kindRequest)
	_, err := conn.Write(frame)
	require.NoError(t, err)
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	waitClosed(t, conn, br)
	eventually(t, func() bool { return n.links.linksOpen() == 0 }, "the node kept the link")
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated for a frame that claimed 64 MiB and sent 1 KiB")

	// Frames that are as long as they say read whole, both ways.
	c := open(t, n.addr)
	body := string(bytes.Repeat([]byte("x"), 3<<20+7))
	req := post("/long", body)
	defer fasthttp.ReleaseRequest(req)
	var resp fasthttp.Response
	require.NoError(t, c.Do(req, &resp, time.Now().Add(10*time.Second), 4<<20))
	require.Equal(t, "/long "+body, string(resp.Body()))
}

// deadlineConn records the read deadlines its server sets.
type deadlineConn struct {
	net.Conn
	mu   sync.Mutex
	last []time.Time
}

func (d *deadlineConn) SetReadDeadline(t time.Time) error {
	d.mu.Lock()
	d.last = append(d.last, t)
	d.mu.Unlock()
	return d.Conn.SetReadDeadline(t)
}

func (d *deadlineConn) deadlines() []time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.last)
}

// A frame whose header comes just before the read deadline set while the
// link waited (for nothing but a parked request) has a deadline of its
// own for its payload: the link is not cut in the middle of a frame.
func TestAFrameLateInTheIdleWindowIsRead(t *testing.T) {
	g := newGate(t)
	s := NewServer(ServerConfig{MaxBody: 1 << 20, MaxHead: 8 << 10, IdleTimeout: 2 * time.Second,
		Handler: func(ctx *fasthttp.RequestCtx) {
			if string(ctx.PostBody()) == "park" {
				g.hold()
			}
			echo(ctx)
		}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	srv, err := ln.Accept()
	require.NoError(t, err)
	dc := &deadlineConn{Conn: srv}
	served := make(chan struct{})
	go func() {
		defer close(served)
		s.serve(dc, peer{local: srv.LocalAddr(), remote: srv.RemoteAddr()})
	}()
	t.Cleanup(func() { s.stopNow(); <-served })

	_, err = conn.Write(requestFrame(t, 1, "park"))
	require.NoError(t, err)
	<-g.arrived
	// The reader set its deadline again once it dispatched the parked
	// request, and waits for the next frame until then.
	eventually(t, func() bool { return len(dc.deadlines()) >= 2 }, "the reader did not wait for the next frame")
	ds := dc.deadlines()
	deadline := ds[len(ds)-1]
	b := requestFrame(t, 2, "late")
	time.Sleep(time.Until(deadline.Add(-200 * time.Millisecond)))
	_, err = conn.Write(b[:headerSize+4])
	require.NoError(t, err)
	time.Sleep(time.Until(deadline.Add(300 * time.Millisecond)))
	_, err = conn.Write(b[headerSize+4:])
	require.NoError(t, err)

	br := bufio.NewReader(conn)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	require.EqualValues(t, 2, skipAnswer(t, br, "the link was cut in the middle of a frame"))
	g.open()
	require.EqualValues(t, 1, skipAnswer(t, br))
}

// A request that asks to be told to go on (Expect: 100-continue) has
// its body in its frame: it is served, and the link goes on.
func TestExpectContinue(t *testing.T) {
	n := serveNode(t, ServerConfig{}, echo)
	c := open(t, n.addr)
	req := post("/continue", "body")
	defer fasthttp.ReleaseRequest(req)
	req.Header.Set(fasthttp.HeaderExpect, "100-continue")
	var resp fasthttp.Response
	require.NoError(t, c.Do(req, &resp, time.Now().Add(5*time.Second), 1<<20))
	require.Equal(t, "/continue body", string(resp.Body()))
	require.True(t, c.Alive())
}
