package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// do sends one API request. in, when not nil, is sent as the JSON body; a
// 2xx answer other than 204 is decoded into out when out is not nil. It
// returns the HTTP status, and an *Error for every non-2xx answer.
func (c *Client) do(ctx context.Context, method, path string, in, out any) (int, error) {
	req, err := c.newRequest(ctx, method, path, in)
	if err != nil {
		return 0, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("jobbie: %s %s: %w", method, path, err)
	}
	defer drain(resp.Body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, parseError(resp)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("jobbie: %s %s: decode response: %w", method, path, err)
	}
	return resp.StatusCode, nil
}

func (c *Client) newRequest(ctx context.Context, method, path string, in any) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("jobbie: %s %s: encode request: %w", method, path, err)
		}
		body = bytes.NewReader(b)
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
