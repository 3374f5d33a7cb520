package controlclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
)

// Open sends a GET whose answer is streamed (a backup download, say) and
// returns the node's response with its body unread; the caller closes
// it. The node has Config.Timeout to start answering, not to send it
// all: ctx bounds the rest. Nodes are tried in turn as by Do; a 503 from
// one moves on to the next, and is returned, read whole, when no node
// serves it.
func (c *Client) Open(ctx context.Context, path, requestID string) (*http.Response, error) {
	var (
		last    *http.Response // a 503, kept when no node serves it
		lastErr error
	)
	for _, base := range c.candidates() {
		resp, err := c.openOnce(ctx, base, path, requestID)
		switch {
		case err == nil && resp.StatusCode != http.StatusServiceUnavailable:
			c.mark(base, true)
			return resp, nil
		case err == nil:
			b, _ := io.ReadAll(io.LimitReader(resp.Body, c.maxBody))
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(b))
			last, lastErr = resp, nil
		case ctx.Err() != nil:
			return nil, err
		default:
			lastErr = err
		}
		c.mark(base, false)
	}
	if last != nil {
		return last, nil
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("controlclient: GET %s: no control node known", path)
	}
	return nil, lastErr
}

// openOnce sends the GET to one node and waits Config.Timeout at most for
// its answer to start.
func (c *Client) openOnce(ctx context.Context, base, path, requestID string) (*http.Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("controlclient: GET %s: %w", path, err)
	}
	if requestID != "" {
		req.Header.Set(apierr.RequestIDHeader, requestID)
	}
	slow := time.AfterFunc(c.http.Timeout, cancel)
	resp, err := c.stream.Do(req)
	if !slow.Stop() && err == nil {
		resp.Body.Close()
		err = context.DeadlineExceeded
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("controlclient: GET %s: %w", path, err)
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelBody releases a streamed request's context once its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	defer b.cancel()
	return b.ReadCloser.Close()
}
