package outbound

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Config is a Client's policy. Zero fields take the defaults noted.
type Config struct {
	// AllowPrivate lets requests reach loopback, private and other inside
	// addresses: the operator's --push-allow-private, for tests and a
	// local dev. Default false.
	AllowPrivate bool
	// RootCAs verifies endpoints' certificates; nil: the system's roots.
	RootCAs *x509.CertPool
	// MaxBody is the most of an answer's body read; the rest is dropped
	// and Response.Truncated says so. Default 64 KiB.
	MaxBody int64
	// PerTenant is the most requests one tenant has in flight. Default 32.
	PerTenant int
	// FailFast makes a request of a tenant at its PerTenant bound fail at
	// once with KindBusy; by default it waits for one of the tenant's own
	// requests to finish, as long as its context allows.
	FailFast bool
	// PoolSize is the most idle keep-alive connections kept per target
	// (scheme, host and port). Default PerTenant: a smaller pool makes a
	// tenant busy at its bound on one target close connections after use
	// and handshake again for the next calls.
	PoolSize int
	// Timeout bounds a request without Request.Timeout, from dial to the
	// last byte of the answer. Default 30 s.
	Timeout time.Duration
	// DialTimeout bounds one connection attempt. Default 10 s.
	DialTimeout time.Duration
	// IdleTimeout closes an idle pooled connection. Default 90 s.
	IdleTimeout time.Duration
	// Resolver looks names up; default net.DefaultResolver.
	Resolver Resolver
	// UserAgent is sent with every request. Default "Jobbie".
	UserAgent string
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if c.MaxBody == 0 {
		c.MaxBody = 64 << 10
	}
	def(&c.PerTenant, 32)
	def(&c.PoolSize, c.PerTenant)
	defDur(&c.Timeout, 30*time.Second)
	defDur(&c.DialTimeout, 10*time.Second)
	defDur(&c.IdleTimeout, 90*time.Second)
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	if c.UserAgent == "" {
		c.UserAgent = "Jobbie"
	}
	return c
}

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	if c.MaxBody < 0 || c.PerTenant < 1 || c.PoolSize < 1 || c.Timeout < 0 || c.DialTimeout < 0 || c.IdleTimeout < 0 {
		return errors.New("outbound: config: MaxBody, PerTenant, PoolSize and the timeouts must be positive")
	}
	return nil
}

// Request is one call to a tenant's endpoint.
type Request struct {
	// Tenant owns the endpoint: its PerTenant bound applies.
	Tenant string
	// Method defaults to POST.
	Method string
	URL    string
	// AllowHosts is the namespace's egress allow-list (empty: any public
	// host).
	AllowHosts []string
	Header     http.Header
	Body       []byte
	// Timeout bounds this request; default Config.Timeout.
	Timeout time.Duration
}

// Response is an answer that was read: its status, headers and body (at
// most Config.MaxBody of it; Truncated when there was more).
type Response struct {
	Status    int
	Header    http.Header
	Body      []byte
	Truncated bool
	Latency   time.Duration
}

// Client calls tenants' endpoints under the package's rules. It is safe
// for concurrent use; make one per process.
type Client struct {
	cfg       Config
	guard     *guard
	transport *http.Transport
	slots     *tenantSlots
}

// New returns a Client; cfg is completed with WithDefaults and validated.
func New(cfg Config) (*Client, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := newGuard(cfg)
	tr := &http.Transport{
		Proxy:               nil, // never through an environment's proxy: the guard must see the real target
		DialContext:         g.DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: cfg.DialTimeout,
		MaxIdleConnsPerHost: cfg.PoolSize,
		IdleConnTimeout:     cfg.IdleTimeout,
		DisableCompression:  true, // MaxBody counts the bytes on the wire
	}
	return &Client{cfg: cfg, guard: g, transport: tr, slots: newTenantSlots(cfg.PerTenant, cfg.FailFast)}, nil
}

// Close closes the pooled idle connections.
func (c *Client) Close() { c.transport.CloseIdleConnections() }

// Check is the configuration-time check of a target: CheckURL, then the
// name resolved now and refused if it points inside (unless
// AllowPrivate). Do checks again at dial time, so a name that changes its
// answer later is still refused then.
func (c *Client) Check(ctx context.Context, raw string, allow []string) error {
	if err := CheckURL(raw, allow); err != nil {
		return err
	}
	u, _ := parseURL(raw)
	port := uint16(443)
	if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		port = uint16(p)
	}
	_, err := c.guard.resolve(ctx, u.Hostname(), port)
	return err
}

// Do sends req and reads the answer. A 2xx answer returns its Response
// and nil. A 3xx (not followed), 4xx or 5xx returns its Response too,
// with an *Error of KindRedirect or KindStatus, so a caller may read
// Retry-After; every other failure is an *Error and no Response.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	if err := CheckURL(req.URL, req.AllowHosts); err != nil {
		return nil, &Error{Kind: KindRefused, Tenant: req.Tenant, Err: err}
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = c.cfg.Timeout
	}
	// The wait for a slot is bounded by the caller's context only, so
	// the timeout is the endpoint's time to answer.
	release, err := c.slots.acquire(ctx, req.Tenant)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	hr, err := c.newHTTPRequest(ctx, req)
	if err != nil {
		return nil, &Error{Kind: KindRefused, Tenant: req.Tenant, Err: err}
	}
	start := time.Now()
	res, err := c.transport.RoundTrip(hr)
	if err != nil {
		return nil, classify(ctx, req.Tenant, hr.URL.Hostname(), err)
	}
	defer res.Body.Close()
	out, err := c.read(res)
	if err != nil {
		return nil, classify(ctx, req.Tenant, hr.URL.Hostname(), err)
	}
	out.Latency = time.Since(start)
	return out, answerError(req.Tenant, hr.URL.Hostname(), out)
}

func (c *Client) newHTTPRequest(ctx context.Context, req Request) (*http.Request, error) {
	method := req.Method
	if method == "" {
		method = http.MethodPost
	}
	hr, err := http.NewRequestWithContext(ctx, method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return nil, err
	}
	for k, vs := range req.Header {
		hr.Header[k] = append([]string(nil), vs...)
	}
	hr.Header.Set("User-Agent", c.cfg.UserAgent)
	return hr, nil
}

// read reads at most MaxBody of the body. A truncated body's connection
// is not reused (the rest is not drained).
func (c *Client) read(res *http.Response) (*Response, error) {
	body, err := io.ReadAll(io.LimitReader(res.Body, c.cfg.MaxBody+1))
	if err != nil {
		return nil, err
	}
	out := &Response{Status: res.StatusCode, Header: res.Header, Body: body}
	if int64(len(body)) > c.cfg.MaxBody {
		out.Body, out.Truncated = body[:c.cfg.MaxBody], true
	}
	return out, nil
}

// answerError is the error an answer's status means, or nil for 2xx.
func answerError(tenant, host string, r *Response) error {
	switch {
	case r.Status >= 200 && r.Status < 300:
		return nil
	case r.Status >= 300 && r.Status < 400:
		return &Error{Kind: KindRedirect, Tenant: tenant, Host: host, Status: r.Status, Location: r.Header.Get("Location")}
	}
	body := r.Body
	if len(body) > ErrorBodyBytes {
		body = body[:ErrorBodyBytes]
	}
	return &Error{Kind: KindStatus, Tenant: tenant, Host: host, Status: r.Status, Body: bytes.Clone(body)}
}

// classify turns a transport failure into an *Error of the right kind.
func classify(ctx context.Context, tenant, host string, err error) *Error {
	var oe *Error
	if errors.As(err, &oe) && oe.Kind != KindNetwork {
		oe.Tenant = tenant
		return oe
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) ||
		errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return &Error{Kind: KindTimeout, Tenant: tenant, Host: host, Err: err}
	}
	if oe != nil {
		oe.Tenant = tenant
		return oe
	}
	return &Error{Kind: KindNetwork, Tenant: tenant, Host: host, Err: err}
}
