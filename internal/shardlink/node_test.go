package shardlink

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// What the tests of links share: a node that serves links with Server
// (serveNode), one that speaks the protocol by hand to be what Server
// never is (serveFake), a gate that holds a handler's requests, and the
// caller's end, opened with Conn (open) or by hand (rawLink).

// node is a real HTTP server on loopback whose Path upgrades to links
// served by handle, as a shard node's does.
type node struct {
	addr  string
	links *Server
}

func serveNode(t *testing.T, cfg ServerConfig, handle fasthttp.RequestHandler) *node {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	if cfg.MaxBody == 0 {
		cfg.MaxBody = 1 << 20
	}
	if cfg.MaxHead == 0 {
		cfg.MaxHead = 8 << 10
	}
	cfg.Handler = handle
	n := &node{addr: ln.Addr().String(), links: NewServer(cfg)}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == Path {
			if err := n.links.Upgrade(ctx); err != nil {
				ctx.Error(err.Error(), fasthttp.StatusBadRequest)
			}
			return
		}
		handle(ctx)
	}}
	done := make(chan struct{})
	go func() { _ = srv.Serve(ln); close(done) }()
	t.Cleanup(func() {
		_ = srv.Shutdown()
		<-done
		n.links.stopNow()
		n.links.served.Wait()
	})
	return n
}

// stopNow ends the node's links at once, as when it crashes.
func (s *Server) stopNow() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Shutdown(ctx)
}

// linksOpen is how many links the node serves.
func (s *Server) linksOpen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.links)
}

// gate holds each request that reaches it (hold, in a handler) until the
// test opens it, counting them and signalling each on arrived. It opens
// by itself when the test ends, before the node's cleanup waits for its
// handlers.
type gate struct {
	ended   <-chan struct{}
	reached atomic.Int32
	arrived chan struct{}
	opened  chan struct{}
	once    sync.Once
}

func newGate(t *testing.T) *gate {
	return &gate{ended: t.Context().Done(), arrived: make(chan struct{}, 64), opened: make(chan struct{})}
}

func (g *gate) hold() {
	g.reached.Add(1)
	select {
	case g.arrived <- struct{}{}:
	default:
	}
	select {
	case <-g.opened:
	case <-g.ended:
	}
}

func (g *gate) open() { g.once.Do(func() { close(g.opened) }) }

// fakeConfig is what a fake node states and does.
type fakeConfig struct {
	KeepAliveMs string // the keep-alive interval its 101 states; empty: none (an older node)
	Silent      bool   // after its 101 it reads and sends nothing, with TCP up
}

// fakeNode is a node on a real socket that speaks links by hand. It takes
// one link and answers its upgrade with 101; then a silent one is what a
// frozen node, or one behind a path that drops packets, looks like to
// its caller, and any other answers each request with 204 and reports
// its path on paths.
type fakeNode struct {
	addr  string
	paths chan string
}

func serveFake(t *testing.T, cfg fakeConfig) *fakeNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeNode{addr: ln.Addr().String(), paths: make(chan string, 16)}
	var wg sync.WaitGroup
	quit := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		var h fasthttp.RequestHeader
		if h.Read(br) != nil {
			return
		}
		answer := "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + Protocol + "\r\n" +
			MaxRequestsHeader + ": 100\r\n" + MaxBodyHeader + ": 65536\r\n" + MaxHeadHeader + ": 8192\r\n"
		if cfg.KeepAliveMs != "" {
			answer += KeepAliveHeader + ": " + cfg.KeepAliveMs + "\r\n"
		}
		if _, err := conn.Write([]byte(answer + "\r\n")); err != nil {
			return
		}
		if !cfg.Silent {
			f.answer(conn, br, quit)
		}
		<-quit // the connection stays up, silent, until the test ends
	}()
	t.Cleanup(func() { close(quit); _ = ln.Close(); wg.Wait() })
	return f
}

// answer answers each request frame read from br with 204, until the
// link or the test ends.
func (f *fakeNode) answer(conn net.Conn, br *bufio.Reader, quit <-chan struct{}) {
	for {
		n, id, _, err := peekHeader(br)
		if err != nil {
			return
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(br, p); err != nil {
			return
		}
		var req fasthttp.Request
		if req.Read(bufio.NewReader(bytes.NewReader(p))) != nil {
			return
		}
		select {
		case f.paths <- string(req.URI().Path()):
		case <-quit:
			return
		}
		ans := []byte("HTTP/1.1 204 No Content\r\n\r\n")
		frame := make([]byte, headerSize, headerSize+len(ans))
		putHeader(frame, len(ans), id, kindAnswer)
		if _, err := conn.Write(append(frame, ans...)); err != nil {
			return
		}
	}
}

// dial opens a link to addr, or says why it could not.
func dial(t *testing.T, addr string) (*Conn, error) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	return Open(conn, "node", time.Now().Add(5*time.Second), Options{WriteTimeout: 5 * time.Second})
}

// open opens a link to addr, closed when the test ends.
func open(t *testing.T, addr string) *Conn {
	t.Helper()
	c, err := dial(t, addr)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func (c *Conn) inFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

func post(path, body string) *fasthttp.Request {
	req := fasthttp.AcquireRequest()
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI(path)
	req.Header.SetHost("node")
	req.SetBodyString(body)
	return req
}

// echo answers with the request's path and body, and says whether it came
// over a link.
func echo(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusCreated)
	ctx.Response.Header.Set("Over", strconv.FormatBool(Over(ctx.Conn())))
	ctx.SetBodyString(string(ctx.Path()) + " " + string(ctx.PostBody()))
}

func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), msg)
		time.Sleep(5 * time.Millisecond)
	}
}

// rawLink opens a link by hand, to speak the protocol badly.
func rawLink(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = conn.Write([]byte("GET " + Path + " HTTP/1.1\r\nHost: node\r\nConnection: Upgrade\r\nUpgrade: " + Protocol + "\r\n\r\n"))
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	var h fasthttp.ResponseHeader
	require.NoError(t, h.Read(br))
	require.Equal(t, fasthttp.StatusSwitchingProtocols, h.StatusCode())
	return conn, br
}

func requestFrame(t *testing.T, id uint64, body string) []byte {
	req := post("/raw", body)
	defer fasthttp.ReleaseRequest(req)
	buf, err := encodeRequest(req)
	require.NoError(t, err)
	putHeader(buf, len(buf)-headerSize, id, kindRequest)
	return buf
}

// sendRequests writes count request frames on a raw link, ids 1 on.
func sendRequests(t *testing.T, conn net.Conn, count int) {
	t.Helper()
	for id := range uint64(count) {
		_, err := conn.Write(requestFrame(t, id+1, "x"))
		require.NoError(t, err)
	}
}

// skipAnswer reads the next frame of a raw link, which must be an
// answer, and returns its id.
func skipAnswer(t *testing.T, br *bufio.Reader, msgAndArgs ...any) uint64 {
	t.Helper()
	n, id, k, err := peekHeader(br)
	require.NoError(t, err, msgAndArgs...)
	require.Equal(t, kindAnswer, k)
	_, err = br.Discard(n)
	require.NoError(t, err)
	return id
}

// waitClosed waits for the node to close conn.
func waitClosed(t *testing.T, conn net.Conn, br *bufio.Reader) {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	for {
		if _, err := br.ReadByte(); err != nil {
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "the node did not close the link")
			return
		}
	}
}
