package shardclient

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/shardlink"
	"github.com/jobbie/jobbie/wire"
)

// Config configures a Client. Zero values take the defaults in comments.
type Config struct {
	// TLS, when set, makes every TCP request mutual TLS with these
	// credentials. A route's nodes must prove membership of its shard;
	// a node reached by address alone must satisfy NodePolicy (default:
	// any shard node).
	TLS        *pki.Credentials
	NodePolicy pki.Policy
	// ShardOwner, when set, names the tenant owning a shard ("" for a
	// hosted one, as placement says): a route's nodes must then also show
	// that owner in their certificates (pki.OwnedShardMember). It is asked
	// on every handshake or tunnel dial, so it must answer from memory.
	ShardOwner func(shard string) (tenant string)
	// Tunnel, when set, reaches nodes by tunnel address,
	// "tunnel://<shard>/<node>" (a tunnel.Registry: self-hosted shard
	// nodes that dialed in). Each stream's tunnel peer is checked as a TLS
	// peer is: the node the address names, satisfying the route's policy.
	// Without it such addresses are refused.
	Tunnel Tunnel
	// Gossip, when set, is the pool this process has joined: each shard's
	// requests go to the leader it advertises (Run follows it).
	Gossip *gossip.Pool
	// Name is the User-Agent of requests; default "jobbie".
	Name string
	// MaxConns caps connections to one node; every waiting long-poll
	// holds one. Default 16384.
	MaxConns int
	// WriteTimeout bounds writing a request. Default 10s.
	WriteTimeout time.Duration
	// MaxResponseBody bounds an answer read whole. Default 64 MiB.
	MaxResponseBody int
	// RetryTimeout bounds how long a request is retried while its shard
	// has no leader or the leader moved. Default 5s.
	RetryTimeout time.Duration
	// RetryBackoff is the first pause between tries; each next one
	// doubles, up to 250 ms or RetryBackoff if that is longer. Default
	// FirstRetryBackoff.
	RetryBackoff time.Duration
	// NoLink keeps every request on the pools: no node gets a link
	// (link.go). For a process whose role the nodes do not admit on
	// links (control).
	NoLink bool
	Logger *slog.Logger // default slog.Default()
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = "jobbie"
	}
	if c.MaxConns == 0 {
		c.MaxConns = 16384
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 10 * time.Second
	}
	if c.MaxResponseBody == 0 {
		c.MaxResponseBody = 64 << 20
	}
	if c.RetryTimeout == 0 {
		c.RetryTimeout = 5 * time.Second
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = FirstRetryBackoff
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Client sends requests to shard clusters.
type Client struct {
	cfg    Config
	nodes  nodes
	router router
	ctx    context.Context // ends with Close: waits give up
	cancel context.CancelFunc
}

// New returns a client; Run follows gossip, Close ends it.
func New(cfg Config) *Client {
	c := &Client{cfg: cfg.withDefaults()}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.nodes.cfg = c.cfg
	c.nodes.links = links{ctx: c.ctx, off: c.cfg.NoLink,
		opts: shardlink.Options{WriteTimeout: c.cfg.WriteTimeout, IdleTimeout: linkIdle}}
	c.router = router{c: c, routes: map[string]*Route{}}
	ch := make(chan struct{})
	c.router.changed.Store(&ch)
	return c
}

// Run moves routes to new leaders as gossip reports them, until ctx ends
// or the pool shuts down. Without a pool it returns at once.
func (c *Client) Run(ctx context.Context) {
	if c.cfg.Gossip != nil {
		c.router.run(ctx, c.cfg.Gossip)
	}
}

// Close ends the waits of requests being retried, closes idle
// connections and the nodes' links (their requests in flight fail as on
// a lost connection).
func (c *Client) Close() {
	c.cancel()
	c.nodes.closeIdle()
}

// Node returns the pool of one node's address (host:port, an http(s) URL,
// unix:<path> or tunnel://<shard>/<node>), for a request to that node
// alone; with TLS (or through the tunnel) the node must satisfy
// Config.NodePolicy.
func (c *Client) Node(addr string) (*Node, error) { return c.nodes.get(addr, "") }

// Failure is a request that got no answer from the shard.
type Failure struct {
	Node string // the node's address, for logs (never for a tenant's error)
	Err  error
	Sent bool // the request may have reached the node (and been applied)
	// Log is true for the first failure of this node in a second: the
	// caller logs it with its own context, so an outage is a line a
	// second, not a line a request.
	Log bool
}

func (f *Failure) Error() string { return "shard " + f.Node + ": " + f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

// Overloaded reports a failure because every connection to the node was
// busy: retrying would only add load.
func (f *Failure) Overloaded() bool { return errors.Is(f.Err, fasthttp.ErrNoFreeConns) }

// TimedOut reports a failure because the answer did not come in time.
func (f *Failure) TimedOut() bool { return errors.Is(f.Err, fasthttp.ErrTimeout) }

// ErrNoLeader is Do's error when the retry budget ran out while the shard
// answered only "not the leader" without a 503 to pass on.
var ErrNoLeader = errors.New("shardclient: the shard has no leader")

// Do sends req (method, URI, headers and body set by the caller) to rt's
// leader, retrying while the shard elects
// or its leader moved, within the retry budget and deadline. On success
// resp holds the shard's answer, whatever it is: after the budget ran out
// that may be the shard's own 503 no_leader, given Retry-After. An error
// is a *Failure (no answer) or ErrNoLeader.
func (c *Client) Do(rt *Route, req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time) error {
	return c.DoAnswer(rt, req, resp, deadline, nil)
}

// DoAnswer is Do with the answer bounded and held by a (Node.DoAnswer).
// An answer refused for its size or by its budget is never sent again.
func (c *Client) DoAnswer(rt *Route, req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time, a *Answer) error {
	n := rt.Current()
	first := n
	err := n.DoAnswer(req, resp, deadline, a)
	if err == nil && !notLeader(resp.StatusCode()) {
		return nil
	}
	r := c.newRetry(req.Header.Method(), deadline)
	for {
		var hint string
		if err == nil {
			var again bool
			again, hint = moved(resp.StatusCode(), resp.Header.Peek(wire.LeaderHeader), resp.Body())
			if !again {
				rt.served(first, n)
				return nil // the shard's answer, whatever it is
			}
		} else if !r.mayRepeat(err) {
			return c.failure(n, err)
		} else {
			c.router.refused(rt.id, n, err)
		}
		next, named := c.router.next(rt, n, hint)
		if !c.wait(&r, named) {
			return c.gaveUp(n, resp, err)
		}
		n = next
		resp.Reset()
		err = n.DoAnswer(req, resp, deadline, a)
	}
}

// gaveUp is the outcome once the retry budget is spent: the shard's own
// 503 (given Retry-After), or ErrNoLeader, or the last failure.
func (c *Client) gaveUp(n *Node, resp *fasthttp.Response, err error) error {
	if err != nil {
		return c.failure(n, err)
	}
	if resp.StatusCode() != fasthttp.StatusServiceUnavailable {
		return ErrNoLeader
	}
	if len(resp.Header.Peek(fasthttp.HeaderRetryAfter)) == 0 {
		resp.Header.Set(fasthttp.HeaderRetryAfter, "1")
	}
	return nil
}

func (c *Client) failure(n *Node, err error) *Failure {
	return &Failure{Node: n.Host(), Err: err, Sent: Sent(err), Log: n.shouldLog()}
}

// TooLarge is the refusal of the node's answer for its size, if it was.
func (f *Failure) TooLarge() (*AnswerTooLargeError, bool) {
	var e *AnswerTooLargeError
	ok := errors.As(f.Err, &e)
	return e, ok
}

// Stream is a streamed answer opened by OpenStream.
type Stream struct {
	Resp *http.Response
	// Body is the answer already read when it is an error, or a
	// not-the-leader answer given back after the retries ran out.
	Body []byte
	tr   *http.Transport // a one-stream transport, closed with the stream; nil for a keep-alive one
}

// Close releases the stream's connection.
func (s *Stream) Close() {
	_ = s.Resp.Body.Close()
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
}

// OpenStream opens a streamed GET (path and headers in header) at rt's leader, retrying as Do does (a
// stream is a read, so a lost connection may be tried again too). Each
// node gets a one-stream transport: no keep-alive (a stream's connection
// is not reused) and start to bound the wait for the answer to begin.
// maxErrorBody bounds an error answer read whole.
func (c *Client) OpenStream(ctx context.Context, rt *Route, path string, header http.Header, start time.Duration, maxErrorBody int) (*Stream, error) {
	return c.Send(ctx, rt, Request{Method: http.MethodGet, Path: path, Header: header, Start: start, MaxErrorBody: maxErrorBody})
}

// Request is a request Send sends.
type Request struct {
	Method string // default GET
	Path   string // with its query
	Header http.Header
	// Body opens the request's body afresh for each try (nil: none). A
	// request is tried again only when it certainly was not applied (see
	// the package comment); a body that cannot be opened again ends the
	// request with Body's error.
	Body func() (io.ReadCloser, error)
	// Start bounds dialing and the wait for the answer to begin; 0: ctx
	// alone.
	Start time.Duration
	// MaxErrorBody bounds a not-the-leader answer read whole.
	MaxErrorBody int
	// KeepAlive sends the request on the node's keep-alive connections
	// (Start is then ignored: ctx alone bounds it) rather than on a
	// one-stream transport: a request after a stream read to its end goes
	// on the same connection, so the node answers it only once it has
	// finished with the stream (a shard keeps a move's session once the
	// stream was written whole).
	KeepAlive bool
}

// Send sends r to rt's leader and returns the answer as a stream, whatever
// its status, retrying as Do does: unlike Do, the body is streamed and ctx
// ends the request. Each try gets a one-stream transport, as OpenStream's.
func (c *Client) Send(ctx context.Context, rt *Route, r Request) (*Stream, error) {
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	n := rt.Current()
	first := n
	rr := c.newRetry([]byte(r.Method), time.Now().Add(c.cfg.RetryTimeout))
	for {
		st, err := c.openStream(ctx, n, r)
		var hint string
		if err == nil {
			if !notLeader(st.Resp.StatusCode) {
				rt.served(first, n)
				return st, nil
			}
			st.Body, err = io.ReadAll(io.LimitReader(st.Resp.Body, int64(r.MaxErrorBody)))
			st.Close()
			var again bool
			if again, hint = moved(st.Resp.StatusCode, []byte(st.Resp.Header.Get(wire.LeaderHeader)), st.Body); err == nil && !again {
				return st, nil
			}
		}
		if err != nil && !rr.mayRepeat(err) {
			return nil, c.failure(n, err)
		}
		if err != nil {
			c.router.refused(rt.id, n, err)
		}
		next, named := c.router.next(rt, n, hint)
		if !c.wait(&rr, named) {
			if err != nil {
				return nil, c.failure(n, err)
			}
			if st.Resp.StatusCode != http.StatusServiceUnavailable {
				return nil, ErrNoLeader
			}
			if st.Resp.Header.Get(fasthttp.HeaderRetryAfter) == "" {
				st.Resp.Header.Set(fasthttp.HeaderRetryAfter, "1")
			}
			return st, nil
		}
		n = next
	}
}

func (c *Client) openStream(ctx context.Context, n *Node, r Request) (*Stream, error) {
	scheme := "http://"
	if n.hc.IsTLS {
		scheme = "https://"
	}
	var body io.ReadCloser
	if r.Body != nil {
		var err error
		if body, err = r.Body(); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, scheme+n.host+r.Path, body)
	if err != nil {
		if body != nil {
			body.Close()
		}
		return nil, err
	}
	req.Header = r.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if r.KeepAlive {
		resp, err := (&http.Client{Transport: n.keepAlive()}).Do(req)
		if err != nil {
			return nil, err
		}
		return &Stream{Resp: resp}, nil
	}
	tr := n.transport(r.Start, true)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		tr.CloseIdleConnections()
		return nil, err
	}
	return &Stream{Resp: resp, tr: tr}, nil
}

// transport is an HTTP transport to n: one stream per connection
// (oneShot) or keep-alive; start bounds dialing and the wait for an
// answer to begin.
func (n *Node) transport(start time.Duration, oneShot bool) *http.Transport {
	d := &net.Dialer{Timeout: start}
	tr := &http.Transport{DialContext: d.DialContext, DisableKeepAlives: oneShot, DisableCompression: true,
		ResponseHeaderTimeout: start, TLSHandshakeTimeout: start, TLSClientConfig: n.hc.TLSConfig}
	switch {
	case n.tun != nil:
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			if start > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, start)
				defer cancel()
			}
			return n.tun.dial(ctx)
		}
	case n.hc.Dial != nil: // the pool dials a Unix socket: hc.Addr is its path
		path := n.hc.Addr
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx, "unix", path) }
	}
	return tr
}

// keepAlive is n's keep-alive transport for Send, made on first use.
func (n *Node) keepAlive() *http.Transport {
	n.keepOnce.Do(func() { n.keep = n.transport(0, false) })
	return n.keep
}
