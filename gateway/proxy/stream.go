package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/wire"
)

// streamChunk is the most read from the shard before it is passed on.
const streamChunk = 32 << 10

// ForwardStream proxies a streamed GET (the event stream): bytes reach
// the client as the shard sends them. The pooled shard connections read
// whole responses, so a stream gets its own connection (shardclient's
// OpenStream, over net/http, which hands the body over as it arrives). The
// shard has ShardTimeout to start answering; after that the stream lasts
// until the client goes away (the next write to it fails: the shard sends
// a heartbeat every 15 s), the shard ends it, or the gateway stops. Each
// write to the client has WriteTimeout, not the whole stream.
func (px *Proxy) ForwardStream(c *fiber.Ctx, r *admitted.Request) error {
	ctx, cancel := context.WithCancel(px.ctx)
	h := http.Header{}
	h.Set(wire.RequestIDHeader, r.RequestID)
	h.Set(fiber.HeaderAccept, "text/event-stream")
	if r.Scope.Limited {
		h.Set(wire.QueueScopeHeader, r.Scope.Header)
	}
	sh := r.ShardHeaders()
	h.Set(wire.FairWeightHeader, string(sh.Weight))
	if sh.EventRetention != nil {
		h.Set(wire.EventRetentionHeader, string(sh.EventRetention))
	}
	if id := c.Get(wire.LastEventIDHeader); id != "" {
		h.Set(wire.LastEventIDHeader, id)
	}
	// A moving namespace is ridden out before the stream starts; once it
	// has, the shard ends it and the client reconnects.
	var st *shardclient.Stream
	p, err := px.toShard(r, r.NS, time.Time{}, func(p *placement) (bool, error) {
		if st != nil {
			st.Close() // an earlier attempt's refusal, read whole
		}
		h.Set(wire.ShardNamespaceHeader, p.shardNS)
		var err error
		st, err = px.shards.OpenStream(ctx, p.route, string(c.Request().URI().RequestURI()), h, px.shardTimeout, px.bodyLimit)
		if err != nil {
			st = nil
			return false, err
		}
		return isMovingStream(st.Resp), nil
	})
	if err != nil {
		cancel()
		if p == nil {
			return err // no placement
		}
		return px.shardFailure(r.NS, r.RequestID, p, err)
	}
	resp := st.Resp
	out := c.Response()
	out.SetStatusCode(resp.StatusCode)
	out.Header.SetContentType(resp.Header.Get(fiber.HeaderContentType))
	if ra := resp.Header.Get(fiber.HeaderRetryAfter); ra != "" {
		out.Header.Set(fiber.HeaderRetryAfter, ra)
	}
	if st.Body != nil || resp.StatusCode != http.StatusOK { // an error answer: short, pass it on whole
		defer cancel()
		defer st.Close()
		body := st.Body
		if body == nil {
			if body, err = io.ReadAll(io.LimitReader(resp.Body, int64(px.bodyLimit))); err != nil {
				return px.shardFailure(r.NS, r.RequestID, p, &shardclient.Failure{Node: "stream", Err: err, Sent: true})
			}
		}
		out.SetBody(body)
		return nil
	}
	out.Header.Set(fiber.HeaderCacheControl, "no-cache")
	out.Header.Set("X-Accel-Buffering", "no") // tell proxies in front not to buffer either
	conn, writeTimeout := c.Context().Conn(), px.writeTimeout
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer cancel()
		defer st.Close()
		copyStream(w, resp.Body, conn, writeTimeout)
	})
	return nil
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
