package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// maxControlBody bounds what the gateway reads from control; key and
// namespace lists are the largest answers.
const maxControlBody = 32 * mib

// controlClient calls the control plane's internal API over mutual TLS,
// admitting only a control node's certificate. It is off the hot path
// (JWKS, revocations, placement misses, tenant admin), so plain net/http
// is enough.
//
// Control runs as a group of nodes, any of which answers (a follower
// forwards to the leader). The client knows them from ControlURL (one
// URL, or several separated by commas) and from gossip (control nodes
// advertise their HTTP address); gossip only says where to look, the
// certificate says whom the gateway reached. It keeps to the node that
// last answered and moves to the next when one cannot be reached, or
// answers 503 no_leader (which means the request was not applied), so a
// node's loss or an election costs a retry, not an error. A write sent to
// a node that then did not answer is not sent again: it may have been
// applied.
type controlClient struct {
	bases []string // configured base URLs
	pool  *gossip.Pool
	http  *http.Client
	// stream shares http's connections without its overall timeout, for
	// answers that are streamed (open).
	stream *http.Client
	// quotas caches what control says of each tenant's quotas (quota.go).
	quotas *quotaCache

	// local, set on a self-hosted shard's local API, answers instead of
	// control (local.go).
	local *localControl

	mu   sync.Mutex
	good string               // the base that answered last
	down map[string]time.Time // base → until when it is tried only after the others
}

// controlDownFor is how long a control node that failed is tried last.
const controlDownFor = 2 * time.Second

func newControlClient(cfg Config) *controlClient {
	if cfg.Local != nil {
		cc := &controlClient{local: &localControl{cfg: cfg.Local}, http: &http.Client{}}
		cc.quotas = newQuotaCache(cc, cfg)
		return cc
	}
	cc := &controlClient{
		pool: cfg.Gossip,
		down: map[string]time.Time{},
		http: &http.Client{
			Timeout: cfg.ControlTimeout,
			Transport: &http.Transport{
				TLSClientConfig: cfg.TLS.Client(pki.Roles(pki.RoleControl)), MaxIdleConnsPerHost: 16,
				// A stopped or unreachable node must fail fast, so the next
				// one is tried within the caller's patience.
				DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
				TLSHandshakeTimeout: 2 * time.Second,
			},
		},
	}
	for _, u := range strings.Split(cfg.ControlURL, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			cc.bases = append(cc.bases, u)
		}
	}
	cc.stream = &http.Client{Transport: cc.http.Transport}
	cc.quotas = newQuotaCache(cc, cfg)
	return cc
}

// candidates lists the control nodes to try, in order: the one that
// answered last, the configured ones, those gossip knows; nodes that
// failed lately go last.
func (cc *controlClient) candidates() []string {
	cc.mu.Lock()
	good := cc.good
	cc.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	add := func(b string) {
		if b != "" && !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	add(good)
	for _, b := range cc.bases {
		add(b)
	}
	if cc.pool != nil {
		for _, m := range cc.pool.Members() {
			if m.Meta.Role == gossip.RoleControl && m.Meta.HTTPAddr != "" {
				add("https://" + m.Meta.HTTPAddr)
			}
		}
	}
	now := time.Now()
	cc.mu.Lock()
	defer cc.mu.Unlock()
	up, downs := out[:0:0], []string{}
	for _, b := range out {
		if now.Before(cc.down[b]) {
			downs = append(downs, b)
		} else {
			up = append(up, b)
		}
	}
	return append(up, downs...)
}

func (cc *controlClient) mark(base string, ok bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if ok {
		cc.good = base
		delete(cc.down, base)
		return
	}
	cc.down[base] = time.Now().Add(controlDownFor)
	if cc.good == base {
		cc.good = ""
	}
}

// controlReply is a control answer: its status, content type,
// Retry-After and body.
type controlReply struct {
	status      int
	contentType string
	retryAfter  string
	body        []byte
	// asOf, when set, is when what the reply says was current (a local
	// API's trust bundle's arrival); else it is when it was asked.
	asOf time.Time
}

// do sends one request; in, when not nil, is sent as JSON. A transport
// failure is returned as an error; any HTTP status is a reply. It tries
// the control nodes in turn (see controlClient).
func (cc *controlClient) do(ctx context.Context, method, path, requestID string, in any) (controlReply, error) {
	if cc.local != nil {
		return cc.local.do(method, path)
	}
	var raw []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return controlReply{}, fmt.Errorf("gateway: encode control request: %w", err)
		}
		raw = b
	}
	var (
		last    controlReply
		lastErr error
	)
	for _, base := range cc.candidates() {
		r, sent, err := cc.once(ctx, base, method, path, requestID, in != nil, raw)
		switch {
		case err == nil && !(r.status == http.StatusServiceUnavailable && (method == http.MethodGet || notApplied(r.body))):
			cc.mark(base, true)
			return r, nil
		case err == nil:
			last, lastErr = r, nil // no leader there, or a read it could not serve: the next may
		case ctx.Err() != nil:
			return controlReply{}, err
		case sent && method != http.MethodGet:
			cc.mark(base, false)
			return controlReply{}, err // perhaps applied: not to be sent twice
		default:
			last, lastErr = controlReply{}, err
		}
		cc.mark(base, false)
	}
	if lastErr == nil && last.status == 0 {
		lastErr = fmt.Errorf("gateway: control %s %s: no control node known", method, path)
	}
	return last, lastErr
}

// once sends the request to one control node; sent reports whether the
// request was written, so it may have been acted on.
func (cc *controlClient) once(ctx context.Context, base, method, path, requestID string, hasBody bool, raw []byte) (controlReply, bool, error) {
	var body io.Reader
	if hasBody {
		body = bytes.NewReader(raw)
	}
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }})
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return controlReply{}, false, fmt.Errorf("gateway: control request: %w", err)
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if requestID != "" {
		req.Header.Set(apierr.RequestIDHeader, requestID)
	}
	resp, err := cc.http.Do(req)
	if err != nil {
		return controlReply{}, wrote.Load(), fmt.Errorf("gateway: control %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxControlBody))
	if err != nil {
		return controlReply{}, true, fmt.Errorf("gateway: control %s %s: read: %w", method, path, err)
	}
	return controlReply{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"),
		retryAfter: resp.Header.Get("Retry-After"), body: b}, true, nil
}

// open sends a GET whose answer is streamed (a backup download) and
// returns control's response with its body unread; the caller closes it.
// The node has ControlTimeout to start answering, not to send it all:
// ctx bounds the rest. Nodes are tried in turn as for do; a 503 from one
// moves on to the next.
func (cc *controlClient) open(ctx context.Context, path, requestID string) (*http.Response, error) {
	if cc.local != nil {
		return nil, errLocalOpen
	}
	var (
		last    *http.Response // a 503, kept when no node serves it
		lastErr error
	)
	for _, base := range cc.candidates() {
		resp, err := cc.openOnce(ctx, base, path, requestID)
		switch {
		case err == nil && resp.StatusCode != http.StatusServiceUnavailable:
			cc.mark(base, true)
			return resp, nil
		case err == nil:
			b, _ := io.ReadAll(io.LimitReader(resp.Body, maxControlBody))
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(b))
			last, lastErr = resp, nil
		case ctx.Err() != nil:
			return nil, err
		default:
			lastErr = err
		}
		cc.mark(base, false)
	}
	if last != nil {
		return last, nil
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("gateway: control GET %s: no control node known", path)
	}
	return nil, lastErr
}

// openOnce sends the GET to one node and waits ControlTimeout at most for
// its answer to start.
func (cc *controlClient) openOnce(ctx context.Context, base, path, requestID string) (*http.Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("gateway: control request: %w", err)
	}
	if requestID != "" {
		req.Header.Set(apierr.RequestIDHeader, requestID)
	}
	slow := time.AfterFunc(cc.http.Timeout, cancel)
	resp, err := cc.stream.Do(req)
	if !slow.Stop() && err == nil {
		resp.Body.Close()
		err = context.DeadlineExceeded
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("gateway: control GET %s: %w", path, err)
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

// notApplied reports a 503 that promises the request was not applied
// (no_leader), so another node may be asked.
func notApplied(body []byte) bool {
	var e wire.ErrorBody
	return json.Unmarshal(body, &e) == nil && e.Error != nil && e.Error.Code == apierr.NoLeader
}

// getJSON fetches path and decodes a 200 answer into out; other statuses
// come back as errors carrying the status.
func (cc *controlClient) getJSON(ctx context.Context, path, requestID string, out any) error {
	_, err := cc.getJSONAsOf(ctx, path, requestID, out)
	return err
}

// getJSONAsOf is getJSON, also telling the reply's asOf (zero from control).
func (cc *controlClient) getJSONAsOf(ctx context.Context, path, requestID string, out any) (time.Time, error) {
	r, err := cc.do(ctx, http.MethodGet, path, requestID, nil)
	if err != nil {
		return time.Time{}, err
	}
	if r.status != http.StatusOK {
		return time.Time{}, &statusError{path: path, status: r.status, body: r.body}
	}
	if err := json.Unmarshal(r.body, out); err != nil {
		return time.Time{}, fmt.Errorf("gateway: control GET %s: decode: %w", path, err)
	}
	return r.asOf, nil
}

// postAPIRequests pushes a gateway's api request counts (usage.go).
func (cc *controlClient) postAPIRequests(ctx context.Context, report wire.APIRequestsReport) error {
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
