package controlclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Reply is a control node's answer, read whole.
type Reply struct {
	URL    string // the base URL of the node that answered
	Status int
	Header http.Header
	Body   []byte
}

// Do sends one request; body, when not nil, is sent as JSON, and
// requestID, when not empty, as the request id. A transport failure is
// returned as an error; any HTTP status is a Reply. It tries the control
// nodes in turn (see the package comment).
func (c *Client) Do(ctx context.Context, method, path, requestID string, body any) (Reply, error) {
	return c.DoWith(ctx, method, path, requestID, nil, body)
}

// DoWith is Do with header's fields sent too. A write carrying an
// Idempotency-Key may be sent again as a Repeatable client's are: control
// answers its repeat with the first answer, never a second create.
func (c *Client) DoWith(ctx context.Context, method, path, requestID string, header http.Header, body any) (Reply, error) {
	repeatable := c.repeatable || header.Get(wire.IdempotencyKeyHeader) != ""
	var raw []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return Reply{}, fmt.Errorf("controlclient: encode %s %s: %w", method, path, err)
		}
		raw = b
	}
	var (
		last    Reply
		lastErr error
	)
	for _, base := range c.candidates() {
		r, sent, err := c.once(ctx, base, method, path, requestID, header, body != nil, raw)
		switch {
		case err == nil && !c.movesOn(method, repeatable, r):
			c.mark(base, true)
			return r, nil
		case err == nil:
			last, lastErr = r, nil // no leader there, or a read it could not serve: the next may
		case ctx.Err() != nil:
			return Reply{}, err
		case sent && method != http.MethodGet && !repeatable:
			c.mark(base, false)
			return Reply{}, err // perhaps applied: not to be sent twice
		default:
			last, lastErr = Reply{}, err
		}
		c.mark(base, false)
	}
	if lastErr == nil && last.Status == 0 {
		lastErr = fmt.Errorf("controlclient: %s %s: no control node known", method, path)
	}
	return last, lastErr
}

// once sends the request to one control node; sent reports whether the
// request was written, so it may have been acted on.
func (c *Client) once(ctx context.Context, base, method, path, requestID string, header http.Header, hasBody bool, raw []byte) (Reply, bool, error) {
	var body io.Reader
	if hasBody {
		body = bytes.NewReader(raw)
	}
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }})
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return Reply{}, false, fmt.Errorf("controlclient: %s %s: %w", method, path, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if requestID != "" {
		req.Header.Set(apierr.RequestIDHeader, requestID)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Reply{}, wrote.Load(), fmt.Errorf("controlclient: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody))
	if err != nil {
		return Reply{}, true, fmt.Errorf("controlclient: %s %s: read: %w", method, path, err)
	}
	return Reply{URL: base, Status: resp.StatusCode, Header: resp.Header, Body: b}, true, nil
}

// movesOn reports an answer after which the next node is asked: a 503
// no_leader (control's promise that nothing was applied), a read's 503,
// and, for a repeatable request, any 5xx.
func (c *Client) movesOn(method string, repeatable bool, r Reply) bool {
	if repeatable && r.Status >= 500 {
		return true
	}
	return r.Status == http.StatusServiceUnavailable && (method == http.MethodGet || notApplied(r.Body))
}

// notApplied reports a 503 that promises the request was not applied
// (no_leader), so another node may be asked.
func notApplied(body []byte) bool {
	var e wire.ErrorBody
	return json.Unmarshal(body, &e) == nil && e.Error != nil && e.Error.Code == apierr.NoLeader
}

// JSON is Do for an answer of status want, whose body it decodes into
// out when out is not nil. Another status is a *StatusError; a body that
// does not decode is an error wrapping ErrDecode.
func (c *Client) JSON(ctx context.Context, method, path, requestID string, in any, want int, out any) error {
	r, err := c.Do(ctx, method, path, requestID, in)
	if err != nil {
		return err
	}
	if r.Status != want {
		return &StatusError{URL: r.URL, Method: method, Path: path, Status: r.Status, Header: r.Header, Body: r.Body}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.Body, out); err != nil {
		return fmt.Errorf("controlclient: %s %s: %w: %w", method, path, ErrDecode, err)
	}
	return nil
}

// ErrDecode is wrapped by JSON's error for an answer whose body does not
// decode.
var ErrDecode = errors.New("undecodable answer")

// StatusError is a control answer of another status than the one a call
// wanted.
type StatusError struct {
	URL          string // the base URL of the node that answered
	Method, Path string
	Status       int
	Header       http.Header
	Body         []byte
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("controlclient: %s %s answered %d: %.200s", e.Method, e.Path, e.Status, e.Body)
}
