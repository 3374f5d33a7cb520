package gateway

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
)

// proxiedStream proxies a response that does not end (the event stream):
// bytes reach the client as the shard sends them.
var proxiedStream = endpoint{handle: (*Server).forwardStream}

// lastEventIDHeader names the last event a reconnecting client has seen.
const lastEventIDHeader = "Last-Event-ID"

// streamChunk is the most read from the shard before it is passed on.
const streamChunk = 32 << 10

// forwardStream proxies a streamed GET. The pooled shard connections read
// whole responses, so a stream gets its own connection (net/http, which
// hands the body over as it arrives). The shard has ShardTimeout to start
// answering; after that the stream lasts until the client goes away (the
// next write to it fails: the shard sends a heartbeat every 15 s), the
// shard ends it, or the gateway stops. Each write to the client has
// WriteTimeout, not the whole stream.
func (s *Server) forwardStream(c *fiber.Ctx, r *call) error {
	p, err := s.placements.lookup(r.key.TenantID, r.ns, r.requestID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(s.ctx)
	st, err := s.openLeaderStream(ctx, c, r, p)
	if err != nil {
		cancel()
		return err
	}
	resp := st.resp
	out := c.Response()
	out.SetStatusCode(resp.StatusCode)
	out.Header.SetContentType(resp.Header.Get(fiber.HeaderContentType))
	if ra := resp.Header.Get(fiber.HeaderRetryAfter); ra != "" {
		out.Header.Set(fiber.HeaderRetryAfter, ra)
	}
	if st.body != nil || resp.StatusCode != http.StatusOK { // an error answer: short, pass it on whole
		defer cancel()
		defer st.tr.CloseIdleConnections()
		defer resp.Body.Close()
		body := st.body
		if body == nil {
			if body, err = readShort(resp, s.cfg.BodyLimit); err != nil {
				return s.shardFailure(r, p, st.sc, err)
			}
		}
		out.SetBody(body)
		return nil
	}
	out.Header.Set(fiber.HeaderCacheControl, "no-cache")
	out.Header.Set("X-Accel-Buffering", "no") // tell proxies in front not to buffer either
	conn, writeTimeout, tr := c.Context().Conn(), s.cfg.WriteTimeout, st.tr
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer tr.CloseIdleConnections()
		defer cancel()
		defer resp.Body.Close()
		copyStream(w, resp.Body, conn, writeTimeout)
	})
	return nil
}

// openedStream is a shard's answer to a stream request: the response,
// and its body already read when it is a not-the-leader answer given
// back after the retries ran out.
type openedStream struct {
	resp *http.Response
	body []byte
	tr   *http.Transport
	sc   *shardClient
}

// openLeaderStream opens the stream at the shard's leader, retrying as
// retryShard does (a stream is a read, so a lost connection may be tried
// again too) within LeaderRetryTimeout.
func (s *Server) openLeaderStream(ctx context.Context, c *fiber.Ctx, r *call, p *placement) (openedStream, error) {
	sc := p.route.current()
	first := sc
	// Wall clock: retry.go measures the budget against time.Now.
	lr := s.newLeaderRetry([]byte(http.MethodGet), time.Now().Add(s.cfg.LeaderRetryTimeout))
	for {
		tr := s.streamTransport(sc)
		resp, err := s.openStream(ctx, tr, c, r, p, sc)
		var hint string
		var body []byte
		if err == nil {
			if !notLeader(resp.StatusCode) {
				p.route.served(first, sc)
				return openedStream{resp: resp, tr: tr, sc: sc}, nil
			}
			body, err = readShort(resp, s.cfg.BodyLimit)
			resp.Body.Close()
			tr.CloseIdleConnections()
			var again bool
			if again, hint = moved(resp.StatusCode, []byte(resp.Header.Get(LeaderHeader)), body); err == nil && !again {
				return openedStream{resp: resp, body: body, tr: tr, sc: sc}, nil
			}
		} else {
			tr.CloseIdleConnections()
		}
		if err != nil && !lr.mayRepeat(err) {
			return openedStream{}, s.shardFailure(r, p, sc, err)
		}
		next, named := s.router.next(p.route, sc, hint)
		if !s.wait(&lr, named) {
			if err != nil {
				return openedStream{}, s.shardFailure(r, p, sc, err)
			}
			if resp.StatusCode != http.StatusServiceUnavailable {
				return openedStream{}, noLeader(r)
			}
			if resp.Header.Get(fiber.HeaderRetryAfter) == "" {
				resp.Header.Set(fiber.HeaderRetryAfter, "1")
			}
			return openedStream{resp: resp, body: body, tr: tr, sc: sc}, nil
		}
		sc = next
	}
}

// readShort reads an error answer's body, which is small.
func readShort(resp *http.Response, limit int) ([]byte, error) {
	return io.ReadAll(io.LimitReader(resp.Body, int64(limit)))
}

func (s *Server) openStream(ctx context.Context, tr *http.Transport, c *fiber.Ctx, r *call, p *placement, sc *shardClient) (*http.Response, error) {
	scheme := "http://"
	if sc.hc.IsTLS {
		scheme = "https://"
	}
	req, err := http.NewRequestWithContext(ctx, c.Method(), scheme+sc.host+string(c.Request().URI().RequestURI()), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set(fiber.HeaderAuthorization, string(s.shardAuth))
	req.Header.Set(ShardNamespaceHeader, p.shardNS)
	req.Header.Set(apierr.RequestIDHeader, r.requestID)
	req.Header.Set(fiber.HeaderAccept, "text/event-stream")
	if id := c.Get(lastEventIDHeader); id != "" {
		req.Header.Set(lastEventIDHeader, id)
	}
	return (&http.Client{Transport: tr}).Do(req)
}

// streamTransport returns a one-stream transport to the shard: no
// keep-alive (a stream's connection is not reused), the pool's dialing
// (TCP, TLS or a Unix socket) and ShardTimeout for the response to start.
func (s *Server) streamTransport(sc *shardClient) *http.Transport {
	d := &net.Dialer{Timeout: s.cfg.ShardTimeout}
	tr := &http.Transport{
		DialContext:           d.DialContext,
		DisableKeepAlives:     true,
		DisableCompression:    true,
		ResponseHeaderTimeout: s.cfg.ShardTimeout,
		TLSHandshakeTimeout:   s.cfg.ShardTimeout,
	}
	if sc.hc.Dial != nil { // the pool dials a Unix socket: hc.Addr is its path
		path := sc.hc.Addr
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		}
	}
	return tr
}

// copyStream passes what the shard sends on at once, until either side
// ends. Each write gets writeTimeout from when it starts.
func copyStream(w *bufio.Writer, body io.Reader, conn net.Conn, writeTimeout time.Duration) {
	buf := make([]byte, streamChunk)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if writeTimeout > 0 { // a socket deadline: wall clock
				_ = conn.SetWriteDeadline(time.Now().Add(writeTimeout))
			}
			if _, werr := w.Write(buf[:n]); werr != nil || w.Flush() != nil {
				return // the client went away
			}
		}
		if err != nil {
			return // the shard ended the stream, or the gateway is stopping
		}
	}
}
