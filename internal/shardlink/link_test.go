package shardlink

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/conncheck"
	"github.com/jobbie/jobbie/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

func TestFrameHeader(t *testing.T) {
	b := make([]byte, headerSize)
	putHeader(b, 70000, 1<<40+7, kindCancel)
	// The header arrives in two pieces with a timeout between them: the
	// first piece stays buffered, and the header reads whole after.
	pr, pw := net.Pipe()
	defer pr.Close()
	defer pw.Close()
	go func() { _, _ = pw.Write(b[:5]) }()
	br := bufio.NewReader(pr)
	require.NoError(t, pr.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
	_, _, _, err := peekHeader(br)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout())
	go func() { _, _ = pw.Write(b[5:]) }()
	require.NoError(t, pr.SetReadDeadline(time.Time{}))
	n, id, k, err := peekHeader(br)
	require.NoError(t, err)
	require.Equal(t, 70000, n)
	require.Equal(t, uint64(1<<40+7), id)
	require.Equal(t, kindCancel, k)
}

// Many goroutines' requests share one link, each getting its own answer.
func TestManyRequestsOnOneLink(t *testing.T) {
	n := serveNode(t, ServerConfig{}, echo)
	c := open(t, n.addr)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := fasthttp.AcquireResponse()
			defer fasthttp.ReleaseResponse(resp)
			for i := range 50 {
				req := post(fmt.Sprintf("/g%d", g), strconv.Itoa(i))
				err := c.Do(req, resp, time.Now().Add(10*time.Second), 1<<20)
				fasthttp.ReleaseRequest(req)
				want := fmt.Sprintf("/g%d %d", g, i)
				switch {
				case err != nil:
					errs <- err
					return
				case resp.StatusCode() != fasthttp.StatusCreated || string(resp.Body()) != want || string(resp.Header.Peek("Over")) != "true":
					errs <- fmt.Errorf("got %d %q, want 201 %q over the link", resp.StatusCode(), resp.Body(), want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Zero(t, c.inFlight())
}

// A caller whose deadline passes gets fasthttp.ErrTimeout at once; the
// node sees its request's caller gone (a parked fetch gives its lease
// back), and the request leaves flight when the node answers it.
func TestCancel(t *testing.T) {
	sawGone := make(chan struct{})
	n := serveNode(t, ServerConfig{}, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) != "/park" {
			ctx.SetStatusCode(fasthttp.StatusNoContent)
			return
		}
		deadline := time.Now().Add(10 * time.Second)
		for !conncheck.Gone(ctx.Conn()) {
			if time.Now().After(deadline) {
				ctx.SetStatusCode(fasthttp.StatusRequestTimeout)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		close(sawGone)
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	})
	c := open(t, n.addr)
	req := post("/park", "")
	defer fasthttp.ReleaseRequest(req)
	var resp fasthttp.Response
	err := c.Do(req, &resp, time.Now().Add(100*time.Millisecond), 1<<20)
	require.ErrorIs(t, err, fasthttp.ErrTimeout)
	select {
	case <-sawGone:
	case <-time.After(10 * time.Second):
		t.Fatal("the node never saw the caller gone")
	}
	eventually(t, func() bool { return c.inFlight() == 0 }, "the cancelled request's answer was never taken")
	// The link goes on.
	req2 := post("/after", "x")
	defer fasthttp.ReleaseRequest(req2)
	require.NoError(t, c.Do(req2, &resp, time.Now().Add(5*time.Second), 1<<20))
	require.Equal(t, fasthttp.StatusNoContent, resp.StatusCode())
}

// A link that dies with a request written and unanswered fails it with a
// *LostError (the node may have applied it); one that has ended takes no
// request (ErrNotTaken: it may go another way).
func TestDyingLink(t *testing.T) {
	g := newGate(t)
	n := serveNode(t, ServerConfig{}, func(*fasthttp.RequestCtx) { g.hold() })
	c := open(t, n.addr)
	req := post("/write", "x")
	defer fasthttp.ReleaseRequest(req)
	var resp fasthttp.Response
	done := make(chan error, 1)
	go func() { done <- c.Do(req, &resp, time.Now().Add(10*time.Second), 1<<20) }()
	<-g.arrived
	n.links.stopNow() // the node stops at once: its links end
	var lost *LostError
	require.ErrorAs(t, <-done, &lost)
	<-c.Done()
	require.ErrorIs(t, c.Do(req, &resp, time.Now().Add(time.Second), 1<<20), ErrNotTaken)
}

// Bounds: a request over the node's body bound is not taken (it goes the
// pool's way, where the node answers 413); an answer over the caller's
// bound is refused without ending the link.
func TestBounds(t *testing.T) {
	const size = 100 << 10
	n := serveNode(t, ServerConfig{MaxBody: 1000}, func(ctx *fasthttp.RequestCtx) {
		ctx.SetBody(bytes.Repeat([]byte("a"), size))
	})
	c := open(t, n.addr)
	big := post("/big", string(bytes.Repeat([]byte("b"), 1001)))
	defer fasthttp.ReleaseRequest(big)
	var resp fasthttp.Response
	require.ErrorIs(t, c.Do(big, &resp, time.Now().Add(time.Second), 1<<20), ErrNotTaken)

	req := post("/small", "x")
	defer fasthttp.ReleaseRequest(req)
	var tl *TooLargeError
	require.ErrorAs(t, c.Do(req, &resp, time.Now().Add(5*time.Second), size-1), &tl)
	require.Equal(t, size-1, tl.Limit)
	require.Equal(t, size, tl.Stated)
	require.ErrorAs(t, c.Do(req, &resp, time.Now().Add(5*time.Second), 100), &tl, "a frame far over the bound is skipped unread")
	require.Equal(t, -1, tl.Stated)
	require.NoError(t, c.Do(req, &resp, time.Now().Add(5*time.Second), size))
	require.Len(t, resp.Body(), size)
}

// A caller that breaks the protocol loses its link.
func TestGarbageClosesTheLink(t *testing.T) {
	n := serveNode(t, ServerConfig{MaxBody: 1000, MaxHead: 4096}, echo)
	for name, frame := range map[string][]byte{
		"unknown kind": func() []byte { b := make([]byte, headerSize); putHeader(b, 0, 1, kind(9)); return b }(),
		"an answer":    func() []byte { b := make([]byte, headerSize); putHeader(b, 0, 1, kindAnswer); return b }(),
		"over the bound": func() []byte {
			b := make([]byte, headerSize)
			putHeader(b, 1000+4096+1, 1, kindRequest)
			return b
		}(),
		"not a request": func() []byte {
			b := append(make([]byte, headerSize), "hello"...)
			putHeader(b, 5, 1, kindRequest)
			return b
		}(),
		"two requests in one frame": func() []byte {
			one := requestFrame(t, 1, "a")[headerSize:]
			b := append(append(make([]byte, headerSize), one...), one...)
			putHeader(b, len(b)-headerSize, 1, kindRequest)
			return b
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			conn, br := rawLink(t, n.addr)
			_, err := conn.Write(frame)
			require.NoError(t, err)
			waitClosed(t, conn, br)
		})
	}
}

// The node reads no more of a link's requests than its bound: a caller
// over it waits, and gets nothing more served.
func TestRequestsInFlightAreBounded(t *testing.T) {
	g := newGate(t)
	n := serveNode(t, ServerConfig{MaxRequests: 3}, func(*fasthttp.RequestCtx) { g.hold() })
	conn, br := rawLink(t, n.addr)
	sendRequests(t, conn, 5)
	eventually(t, func() bool { return g.reached.Load() == 3 }, "the node did not serve up to its bound")
	time.Sleep(50 * time.Millisecond) // a fourth would show up by now; the assertion below is the bound
	require.EqualValues(t, 3, g.reached.Load())
	g.open()
	eventually(t, func() bool { return g.reached.Load() == 5 }, "the rest were not served once slots freed")
	// All five answers come back.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	for range 5 {
		skipAnswer(t, br)
	}
}

// A caller that does not read its answers loses its link once the
// node's writes stall for WriteTimeout: what the node holds for it is
// bounded by its requests in flight and ends with the link.
func TestSlowReaderLosesItsLink(t *testing.T) {
	answer := bytes.Repeat([]byte("z"), 1<<20)
	n := serveNode(t, ServerConfig{WriteTimeout: 200 * time.Millisecond, MaxRequests: 16}, func(ctx *fasthttp.RequestCtx) {
		ctx.SetBody(answer)
	})
	conn, _ := rawLink(t, n.addr)
	sendRequests(t, conn, 16)
	eventually(t, func() bool { return n.links.linksOpen() == 0 }, "the node kept the link of a caller that reads nothing")
}

// A HEAD's answer states its body's length without the body: it reads
// whole, and the link goes on.
func TestHead(t *testing.T) {
	n := serveNode(t, ServerConfig{}, echo)
	c := open(t, n.addr)
	req := post("/head", "")
	defer fasthttp.ReleaseRequest(req)
	req.Header.SetMethod(fasthttp.MethodHead)
	var resp fasthttp.Response
	require.NoError(t, c.Do(req, &resp, time.Now().Add(5*time.Second), 1<<20))
	require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())
	require.Equal(t, len("/head "), resp.Header.ContentLength())
	require.Empty(t, resp.Body())
	req.Header.SetMethod(fasthttp.MethodPost)
	require.NoError(t, c.Do(req, &resp, time.Now().Add(5*time.Second), 1<<20))
	require.Equal(t, "/head ", string(resp.Body()))
}
