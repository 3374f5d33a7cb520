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
	tr := s.streamTransport(p.shard)
	resp, err := s.openStream(ctx, tr, c, r, p)
	if err != nil {
		cancel()
		return s.shardFailure(r, p, err)
	}
	out := c.Response()
	out.SetStatusCode(resp.StatusCode)
	out.Header.SetContentType(resp.Header.Get(fiber.HeaderContentType))
	if ra := resp.Header.Get(fiber.HeaderRetryAfter); ra != "" {
		out.Header.Set(fiber.HeaderRetryAfter, ra)
	}
	if resp.StatusCode != http.StatusOK { // an error answer: short, pass it on whole
		defer cancel()
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.cfg.BodyLimit)))
		if err != nil {
			return s.shardFailure(r, p, err)
		}
		out.SetBody(body)
		return nil
	}
	out.Header.Set(fiber.HeaderCacheControl, "no-cache")
	out.Header.Set("X-Accel-Buffering", "no") // tell proxies in front not to buffer either
	conn, writeTimeout := c.Context().Conn(), s.cfg.WriteTimeout
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer tr.CloseIdleConnections()
		defer cancel()
		defer resp.Body.Close()
		copyStream(w, resp.Body, conn, writeTimeout)
	})
	return nil
}

func (s *Server) openStream(ctx context.Context, tr *http.Transport, c *fiber.Ctx, r *call, p *placement) (*http.Response, error) {
	scheme := "http://"
	if p.shard.hc.IsTLS {
		scheme = "https://"
	}
	req, err := http.NewRequestWithContext(ctx, c.Method(), scheme+p.shard.host+string(c.Request().URI().RequestURI()), nil)
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
			if writeTimeout > 0 {
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
