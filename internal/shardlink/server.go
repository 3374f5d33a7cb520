package shardlink

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobbie/jobbie/internal/runners"
	"github.com/valyala/fasthttp"
)

// ServerConfig is the node's side of its links. Zero values take the
// defaults in comments.
type ServerConfig struct {
	// Handler serves each request (the node's HTTP handler, in process).
	Handler fasthttp.RequestHandler
	// MaxRequests bounds one link's requests in flight; the node reads no
	// more frames of a link at the bound. Default MaxRequests.
	MaxRequests int
	// MaxInFlight bounds the requests in flight on all links at once: at
	// the bound a link reads no more frames, as at its own, so however
	// many links a caller opens, the node serves at most this many link
	// requests (and their goroutines). Default MaxInFlight.
	MaxInFlight int
	// MaxLinks bounds the links open at once, whoever opened them: over
	// it the upgrade is refused (ErrTooManyLinks) and the caller uses its
	// pool. Default MaxLinks.
	MaxLinks int
	// KeepAlive is how often a link with requests in flight sends a
	// keep-alive frame, stated in the 101: a caller that hears nothing
	// for three of them ends the link. Default 5 s.
	KeepAlive time.Duration
	// MaxBody bounds a request's body; MaxHead its request line and
	// headers (and sizes the reader that parses them). A frame over them
	// closes its link.
	MaxBody, MaxHead int
	// MaxAnswer bounds an answer written (a route that streams its answer
	// is not for a link): over it, the caller gets a 500. A streamed
	// answer is read up to it, and stops at its first write after its
	// caller cancelled or the link ended. Default 128 MiB.
	MaxAnswer int
	// WriteTimeout bounds a batch of answers' writes: a caller that stops
	// reading loses its link. Default 30 s.
	WriteTimeout time.Duration
	// IdleTimeout closes a link with nothing in flight that sent nothing
	// for this long. Default 2 min.
	IdleTimeout time.Duration
	Logger      *slog.Logger // default slog.Default()
}

// ServerConfig's defaults. MaxInFlight is the connection pool's
// MaxConns default, so a node admits as many requests on links as on
// connections of their own; MaxLinks is links (each holds two 64 KiB
// buffers) for many gateways, each of which keeps one per node.
const (
	MaxRequests = 4096
	MaxInFlight = 16384
	MaxLinks    = 1024
)

// Server is a node's links: it opens them (Upgrade), serves them, and
// ends them when the node stops (Shutdown).
type Server struct {
	cfg     ServerConfig
	readers sync.Pool // *payloadReader of MaxHead
	ctxs    sync.Pool // *fasthttp.RequestCtx

	mu      sync.Mutex
	links   map[*link]struct{}
	closing bool
	served  sync.WaitGroup
	slots   chan struct{} // the requests in flight on all links (MaxInFlight)

	// Runners serve requests (internal/runners: a fresh goroutine a
	// request grew its stack anew each time, a tenth of a node's CPU).
	// Shutdown ends the idle ones (stopped).
	runners *runners.Pool[job]
	stopped chan struct{}
}

// job is one request frame to serve.
type job struct {
	l *link
	r *request
	p []byte
}

const maxIdleRunners = 256

// NewServer returns the links' server of cfg.
func NewServer(cfg ServerConfig) *Server {
	if cfg.MaxRequests <= 0 {
		cfg.MaxRequests = MaxRequests
	}
	if cfg.MaxAnswer <= 0 {
		cfg.MaxAnswer = 128 << 20
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 2 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = MaxInFlight
	}
	if cfg.MaxLinks <= 0 {
		cfg.MaxLinks = MaxLinks
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 5 * time.Second
	}
	s := &Server{cfg: cfg, links: map[*link]struct{}{}, stopped: make(chan struct{}),
		slots: make(chan struct{}, cfg.MaxInFlight)}
	s.runners = runners.New(maxIdleRunners, s.stopped, func(j job) { j.l.handle(j.r, j.p) })
	s.readers.New = func() any {
		r := &bytes.Reader{}
		return &payloadReader{r: r, br: bufio.NewReaderSize(r, cfg.MaxHead)}
	}
	s.ctxs.New = func() any { return new(fasthttp.RequestCtx) }
	return s
}

// UpgradeError's cases, for the node's 400.
var (
	ErrNotUpgrade = errors.New("shardlink: the request asks for no upgrade to " + Protocol + " (Connection: Upgrade, Upgrade: " + Protocol + ")")
	ErrNested     = errors.New("shardlink: a link cannot be opened over a link")
	// ErrTooManyLinks is an upgrade refused at ServerConfig.MaxLinks (a
	// 503: the caller's requests go on its pool meanwhile).
	ErrTooManyLinks = errors.New("shardlink: the node has as many links open as it takes")
)

// Upgrade answers ctx's request with 101 and serves its connection as a
// link once the answer is written; the caller has admitted the peer.
// The link's requests see the connection's own addresses and TLS state,
// so each is judged by who the link's peer really is.
func (s *Server) Upgrade(ctx *fasthttp.RequestCtx) error {
	if Over(ctx.Conn()) {
		return ErrNested
	}
	if !ctx.Request.Header.ConnectionUpgrade() || !bytes.EqualFold(ctx.Request.Header.Peek(fasthttp.HeaderUpgrade), []byte(Protocol)) {
		return ErrNotUpgrade
	}
	if s.full() {
		return ErrTooManyLinks
	}
	p := peer{local: ctx.LocalAddr(), remote: ctx.RemoteAddr(), tls: ctx.TLSConnectionState()}
	ctx.SetStatusCode(fasthttp.StatusSwitchingProtocols)
	ctx.Response.Header.Set(fasthttp.HeaderConnection, "Upgrade")
	ctx.Response.Header.Set(fasthttp.HeaderUpgrade, Protocol)
	ctx.Response.Header.Set(MaxRequestsHeader, strconv.Itoa(s.cfg.MaxRequests))
	ctx.Response.Header.Set(MaxBodyHeader, strconv.Itoa(s.cfg.MaxBody))
	ctx.Response.Header.Set(MaxHeadHeader, strconv.Itoa(s.cfg.MaxHead))
	ctx.Response.Header.Set(KeepAliveHeader, strconv.FormatInt(s.cfg.KeepAlive.Milliseconds(), 10))
	ctx.Hijack(func(conn net.Conn) { s.serve(conn, p) })
	return nil
}

// Shutdown stops reading the links' requests and waits for those in
// flight to be answered, until ctx ends; then it closes every link.
func (s *Server) Shutdown(ctx context.Context) {
	defer s.stopRunners()
	s.mu.Lock()
	s.closing = true
	for l := range s.links {
		l.halt()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.served.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.mu.Lock()
		for l := range s.links {
			l.kill()
		}
		s.mu.Unlock()
	}
}

// stopRunners ends the idle runners, once; busy ones end after their
// request.
func (s *Server) stopRunners() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.stopped:
	default:
		close(s.stopped)
	}
}

// peer is who is at the link's other end, as its connection says.
type peer struct {
	local, remote net.Addr
	tls           *tls.ConnectionState
}

// link is the node's end of one link.
type link struct {
	s        *Server
	conn     net.Conn // fasthttp's hijacked connection (its reads start with what it buffered)
	raw      net.Conn // the connection under it, which kill closes (fasthttp's Close does not)
	br       *bufio.Reader
	w        *writer
	peer     peer
	gone     atomic.Bool // the link ended: every request's caller is gone
	closing  atomic.Bool // the node stops: read no more requests
	slots    chan struct{}
	inflight sync.WaitGroup
	quit     chan struct{} // closed by halt: the reader stops
	halted   sync.Once

	mu   sync.Mutex
	reqs map[uint64]*request // being served (a cancel finds them here)
}

func (s *Server) serve(conn net.Conn, p peer) {
	raw := conn
	if u, ok := conn.(interface{ UnsafeConn() net.Conn }); ok {
		raw = u.UnsafeConn()
	}
	l := &link{s: s, conn: conn, raw: raw, br: bufio.NewReaderSize(conn, readBuffer), peer: p,
		slots: make(chan struct{}, s.cfg.MaxRequests), quit: make(chan struct{}), reqs: map[uint64]*request{}}
	l.w = newWriter(conn, s.cfg.WriteTimeout, func(error) { l.kill() })
	s.mu.Lock()
	if s.closing || len(s.links) >= s.cfg.MaxLinks { // upgrades at once past Upgrade's check: fasthttp closes conn
		s.mu.Unlock()
		return
	}
	s.links[l] = struct{}{}
	s.served.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.links, l)
		s.mu.Unlock()
		s.served.Done()
	}()
	stopPings := l.keepAlive()
	defer stopPings()
	if err := l.readFrames(); err != nil && !l.closing.Load() {
		if errors.Is(err, ErrGarbage) {
			s.cfg.Logger.Warn("shard: a link broke its protocol; closed", "peer", p.remote.String(), "err", err)
		}
		l.kill()
	}
	l.inflight.Wait() // every answer written (or dropped)
	l.w.close()
	l.kill()
}

// halt stops the link's reading of requests: the node stops.
func (l *link) halt() {
	l.halted.Do(func() {
		l.closing.Store(true)
		close(l.quit)
		_ = l.conn.SetReadDeadline(time.Now()) // the reader stops at once
	})
}

// kill ends the link now: its requests' callers read as gone.
func (l *link) kill() {
	l.gone.Store(true)
	l.halt()
	_ = l.raw.Close()
}

func (l *link) readFrames() error {
	cfg := &l.s.cfg
	for {
		_ = l.conn.SetReadDeadline(time.Now().Add(cfg.IdleTimeout))
		if l.closing.Load() {
			return nil
		}
		n, id, k, err := peekHeader(l.br)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && len(l.slots) > 0 && !l.closing.Load() {
				continue // not idle: a request is in flight (a long-poll parks for seconds)
			}
			return err
		}
		if l.br.Buffered() < n {
			// The deadline above was for the header, and may be about to
			// pass: the payload still to come gets one of its own (a slow
			// sender is still cut).
			_ = l.conn.SetReadDeadline(time.Now().Add(cfg.IdleTimeout))
			if l.closing.Load() { // halt's deadline may be the one just replaced
				return nil
			}
		}
		switch k {
		case kindRequest:
			if n > cfg.MaxBody+cfg.MaxHead {
				return garbage("a request frame of %d bytes, over the bound of %d", n, cfg.MaxBody+cfg.MaxHead)
			}
			if !l.acquire() {
				return nil
			}
			p, err := readPayload(l.br, n)
			if err != nil {
				l.release()
				return err
			}
			r := &request{l: l, id: id}
			l.mu.Lock()
			_, dup := l.reqs[id]
			if !dup {
				l.reqs[id] = r
			}
			l.mu.Unlock()
			if dup {
				putBuf(p)
				l.release()
				return garbage("request %d is in flight already", id)
			}
			l.inflight.Add(1)
			l.s.runners.Run(job{l: l, r: r, p: p})
		case kindCancel:
			if n != 0 {
				return garbage("a cancel frame with a payload")
			}
			l.mu.Lock()
			r := l.reqs[id]
			l.mu.Unlock()
			if r != nil {
				r.cancelled.Store(true)
			}
		default:
			return garbage("a frame of kind %d from the caller", k)
		}
	}
}

// handle serves one request frame's payload p and queues its answer.
func (l *link) handle(r *request, p []byte) {
	s := l.s
	ctx := s.ctxs.Get().(*fasthttp.RequestCtx)
	var conn net.Conn = r
	if l.peer.tls != nil {
		conn = tlsRequest{r}
	}
	ctx.Init2(conn, logger{}, false)
	pr := s.readers.Get().(*payloadReader)
	pr.r.Reset(p)
	pr.br.Reset(pr.r)
	err := ctx.Request.ReadLimitBody(pr.br, s.cfg.MaxBody)
	if err == nil && ctx.Request.MayContinue() {
		// fasthttp leaves the body of an Expect: 100-continue unread, for
		// a server to say go on first; here it is in the frame already.
		ctx.Request.Header.Del(fasthttp.HeaderExpect)
		err = ctx.Request.ContinueReadBody(pr.br, s.cfg.MaxBody)
	}
	left := pr.br.Buffered() + pr.r.Len()
	pr.r.Reset(nil)
	s.readers.Put(pr)
	putBuf(p)
	if err == nil && left > 0 {
		err = errors.New("bytes after the request")
	}
	if err != nil {
		s.cfg.Logger.Warn("shard: a link sent a request that does not parse; closed", "peer", l.peer.remote.String(), "err", err)
		l.kill()
		l.forget(r)
		s.free(ctx)
		r.done(false)
		return
	}
	s.cfg.Handler(ctx)
	if ctx.IsHead() {
		ctx.Response.SkipBody = true
	}
	hint := 512
	if !ctx.Response.IsBodyStream() { // Body would read a stream whole, unbounded
		hint += len(ctx.Response.Body())
	}
	buf, err := encode(ctx.Response.Write, hint, s.cfg.MaxAnswer, r.Gone)
	l.forget(r) // a cancel finds it until its answer is whole
	s.free(ctx) // closes a streamed answer's stream: its writer's next write fails
	switch {
	case errors.Is(err, errGone):
		buf, _ = encode(errorAnswer(fasthttp.StatusServiceUnavailable, "the request's caller is gone"), 0, 0, nil)
	case err != nil:
		buf, _ = encode(errorAnswer(fasthttp.StatusInternalServerError, "the answer is too large for the shard link"), 0, 0, nil)
	}
	putHeader(buf, len(buf)-headerSize, r.id, kindAnswer)
	if !l.w.send(frame{buf: buf, owner: r}) {
		putBuf(buf)
		r.done(false)
	}
}

// errorAnswer writes the answer of a request whose own answer could not
// be sent: over ServerConfig.MaxAnswer, or its caller gone meanwhile
// (every request frame gets an answer frame; that one is dropped).
func errorAnswer(status int, msg string) func(*bufio.Writer) error {
	return func(w *bufio.Writer) error {
		var resp fasthttp.Response
		resp.SetStatusCode(status)
		resp.Header.SetContentType("application/json")
		resp.SetBodyString(`{"error":{"code":"internal","message":"` + msg + `"}}`)
		return resp.Write(w)
	}
}

func (l *link) forget(r *request) {
	l.mu.Lock()
	delete(l.reqs, r.id)
	l.mu.Unlock()
}

func (s *Server) free(ctx *fasthttp.RequestCtx) {
	ctx.Hijack(nil) // a handler's hijack means nothing on a link
	ctx.ResetUserValues()
	ctx.Request.Reset()
	ctx.Response.Reset()
	ctx.Response.SkipBody = false
	s.ctxs.Put(ctx)
}

// request is one request on a link, as the connection its RequestCtx
// reports: the link's addresses (and TLS state, tlsRequest), and Gone
// once its caller cancelled it or the link ended. It is also its
// answer's frame owner: the request leaves flight once its answer was
// written (or dropped).
type request struct {
	l         *link
	id        uint64
	cancelled atomic.Bool
}

// Gone reports whether the request's caller is gone (conncheck asks).
func (r *request) Gone() bool { return r.cancelled.Load() || r.l.gone.Load() }

func (r *request) take() bool { return true }
func (r *request) done(bool) {
	r.l.release()
	r.l.inflight.Done()
}

func (r *request) isLinkRequest() {}

var errNotConn = errors.New("shardlink: a request on a link has no connection of its own")

func (r *request) Read([]byte) (int, error)         { return 0, errNotConn }
func (r *request) Write([]byte) (int, error)        { return 0, errNotConn }
func (r *request) Close() error                     { return nil }
func (r *request) LocalAddr() net.Addr              { return r.l.peer.local }
func (r *request) RemoteAddr() net.Addr             { return r.l.peer.remote }
func (r *request) SetDeadline(time.Time) error      { return nil }
func (r *request) SetReadDeadline(time.Time) error  { return nil }
func (r *request) SetWriteDeadline(time.Time) error { return nil }

// tlsRequest is a request on a TLS link: fasthttp (and so pki.Require)
// reads the link's TLS state from it.
type tlsRequest struct{ *request }

func (r tlsRequest) ConnectionState() tls.ConnectionState { return *r.l.peer.tls }
func (r tlsRequest) Handshake() error                     { return nil } // done: fasthttp asks for both

// Over reports whether conn is a request's on a link.
func Over(conn net.Conn) bool {
	_, ok := conn.(interface{ isLinkRequest() })
	return ok
}

// logger is fasthttp's logger of a link's requests.
type logger struct{}

func (logger) Printf(format string, args ...any) {
	slog.Default().Info("shard link: " + fmt.Sprintf(format, args...))
}
