package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// do sends one API request. in, when not nil, is sent as the JSON body; a
// 2xx answer other than 204 is decoded into out when out is not nil. It
// returns the HTTP status, and an *Error for every non-2xx answer. A
// creating POST carries an Idempotency-Key, the same for every send; a
// request that may be sent again is, by the client's RetryPolicy.
func (c *Client) do(ctx context.Context, method, path string, in, out any) (int, error) {
	body, err := encodeBody(method, path, in)
	if err != nil {
		return 0, err
	}
	var key string
	if keyed(method, path) {
		key = idempotencyKey(ctx)
	}
	start, bo := time.Now(), backoff{p: c.retry}
	for attempt := 1; ; attempt++ {
		status, err := c.send(ctx, method, path, body, key, out)
		if err == nil || attempt >= c.retry.MaxAttempts || !retryable(method, key != "", err) {
			return status, err
		}
		if e, ok := AsError(err); ok && e.RetryAfter > c.retry.MaxRetryAfter {
			return status, err // the server asks for longer than the policy waits
		}
		d := bo.next(err)
		if time.Since(start)+d > c.retry.MaxElapsed || !sleepCtx(ctx, d) {
			return status, err
		}
	}
}

// send sends a request once.
func (c *Client) send(ctx context.Context, method, path string, body []byte, key string, out any) (int, error) {
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return 0, err
	}
	if key != "" {
		req.Header.Set(wire.IdempotencyKeyHeader, key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("jobbie: %s %s: %w", method, path, err)
	}
	defer drain(resp.Body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, parseError(resp)
	}
	if err := drainOf(resp.Header); err != nil {
		return resp.StatusCode, err
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("jobbie: %s %s: decode response: %w", method, path, err)
	}
	return resp.StatusCode, nil
}

// encodeBody is in as JSON, or nil for no body.
func encodeBody(method, path string, in any) ([]byte, error) {
	if in == nil {
		return nil, nil
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("jobbie: %s %s: encode request: %w", method, path, err)
	}
	return b, nil
}

func (c *Client) newRequest(ctx context.Context, method, path string, in []byte) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		body = bytes.NewReader(in)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("jobbie: %s %s: %w", method, path, err)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// drain reads what is left of a body (bounded) and closes it so the
// connection goes back to the pool.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxErrorBody))
	_ = body.Close()
}
