package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
)

// maxControlBody bounds what the gateway reads from control; key and
// namespace lists are the largest answers.
const maxControlBody = 32 * mib

// controlClient calls the control plane's internal API over mutual TLS,
// admitting only a control node's certificate. It is off the hot path
// (JWKS, revocations, placement misses, tenant admin), so plain net/http
// is enough.
type controlClient struct {
	base string
	http *http.Client
	// quotas caches what control says of each tenant's quotas (quota.go).
	quotas *quotaCache
}

func newControlClient(cfg Config) *controlClient {
	cc := &controlClient{
		base: strings.TrimRight(cfg.ControlURL, "/"),
		http: &http.Client{
			Timeout:   cfg.ControlTimeout,
			Transport: &http.Transport{TLSClientConfig: cfg.TLS.Client(pki.Roles(pki.RoleControl)), MaxIdleConnsPerHost: 16},
		},
	}
	cc.quotas = newQuotaCache(cc, cfg)
	return cc
}

// controlReply is a control answer: its status, content type and body.
type controlReply struct {
	status      int
	contentType string
	body        []byte
}

// do sends one request; in, when not nil, is sent as JSON. A transport
// failure is returned as an error; any HTTP status is a reply.
func (cc *controlClient) do(ctx context.Context, method, path, requestID string, in any) (controlReply, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return controlReply{}, fmt.Errorf("gateway: encode control request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, cc.base+path, body)
	if err != nil {
		return controlReply{}, fmt.Errorf("gateway: control request: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if requestID != "" {
		req.Header.Set(apierr.RequestIDHeader, requestID)
	}
	resp, err := cc.http.Do(req)
	if err != nil {
		return controlReply{}, fmt.Errorf("gateway: control %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxControlBody))
	if err != nil {
		return controlReply{}, fmt.Errorf("gateway: control %s %s: read: %w", method, path, err)
	}
	return controlReply{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: b}, nil
}

// getJSON fetches path and decodes a 200 answer into out; other statuses
// come back as errors carrying the status.
func (cc *controlClient) getJSON(ctx context.Context, path, requestID string, out any) error {
	r, err := cc.do(ctx, http.MethodGet, path, requestID, nil)
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return &statusError{path: path, status: r.status, body: r.body}
	}
	if err := json.Unmarshal(r.body, out); err != nil {
		return fmt.Errorf("gateway: control GET %s: decode: %w", path, err)
	}
	return nil
}

// postAPIRequests pushes a gateway's api request counts (usage.go).
func (cc *controlClient) postAPIRequests(ctx context.Context, report apiRequestsReport) error {
	r, err := cc.do(ctx, http.MethodPost, apiRequestsPath, "", report)
	if err != nil {
		return err
	}
	if r.status != http.StatusNoContent {
		return &statusError{path: apiRequestsPath, status: r.status, body: r.body}
	}
	return nil
}

// statusError is a control answer other than the one expected.
type statusError struct {
	path   string
	status int
	body   []byte
}

func (e *statusError) Error() string {
	return fmt.Sprintf("gateway: control %s answered %d: %.200s", e.path, e.status, e.body)
}

// passesThrough reports whether a control status is the tenant's to see:
// a 429 is a plan's quota (quota_exceeded, such as max_keys).
func passesThrough(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusNotFound || status == http.StatusConflict ||
		status == http.StatusTooManyRequests
}
