package client

import (
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Header names of the Jobbie API.
const (
	// NamespaceHeader selects a namespace other than the key's default.
	NamespaceHeader = wire.NamespaceHeader
	// ShardNamespaceHeader names the namespace on a direct shard call
	// (<tenant id>/<namespace>); internal callers use it with the cluster
	// secret as the bearer token.
	ShardNamespaceHeader = wire.ShardNamespaceHeader
	// RequestIDHeader carries the request id the server answers with.
	RequestIDHeader = wire.RequestIDHeader
)

// Client calls the Jobbie HTTP API. It is safe for concurrent use; create
// one per process and share it.
type Client struct {
	base     string
	hc       *http.Client
	header   http.Header
	workerID string
	retry    RetryPolicy
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client use hc instead of its own tuned one.
// hc should have no overall Timeout: Fetch long-polls and bounds itself.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.hc = hc }
}

// WithNamespace sends every request to namespace ns (the key must allow
// it) instead of the key's default namespace.
func WithNamespace(ns string) Option {
	return WithHeader(NamespaceHeader, ns)
}

// WithHeader adds a header to every request. A header set here replaces
// the one New derives from its arguments, so WithHeader("Authorization",
// "Bearer "+secret) with an empty apiKey talks to an internal endpoint.
func WithHeader(key, value string) Option {
	return func(c *Client) { c.header.Set(key, value) }
}

// WithWorkerID names the worker this client works for: Fetch sends it
// unless the request names another, and Ack, Fail and Heartbeat send it so
// the server only accepts them for jobs leased to this worker.
func WithWorkerID(id string) Option {
	return func(c *Client) { c.workerID = id }
}

// WithUserAgent sets the User-Agent of every request.
func WithUserAgent(ua string) Option {
	return WithHeader("User-Agent", ua)
}

// New returns a client for the API at baseURL (e.g.
// "https://jobbie.example.com"; a trailing slash is ignored) that
// authenticates with apiKey as a bearer token. An empty apiKey sends no
// Authorization header unless an option sets one.
func New(baseURL, apiKey string, opts ...Option) *Client {
	c := &Client{
		base:   strings.TrimRight(baseURL, "/"),
		header: http.Header{},
		retry:  DefaultRetryPolicy(),
	}
	c.header.Set("User-Agent", "jobbie-go")
	if apiKey != "" {
		c.header.Set("Authorization", "Bearer "+apiKey)
	}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: NewTransport()}
	}
	return c
}

// BaseURL is the URL the client was created with, without a trailing slash.
func (c *Client) BaseURL() string { return c.base }

// WithNamespace returns a copy of c that sends its requests to namespace
// ns. The copy shares c's connections.
func (c *Client) WithNamespace(ns string) *Client {
	cp := *c
	cp.header = c.header.Clone()
	cp.header.Set(NamespaceHeader, ns)
	return &cp
}

// ForWorker returns a copy of c that acts for worker id (see WithWorkerID).
// The copy shares c's connections.
func (c *Client) ForWorker(id string) *Client {
	cp := *c
	cp.workerID = id
	return &cp
}

// NewTransport returns the http.Transport a Client uses by default: keep-alive
// connections with enough idle connections per host for many concurrent
// long-polls, and dial/TLS timeouts (but no response timeout, since a
// fetch legitimately waits for a job).
func NewTransport() *http.Transport {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   512,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// CloseIdleConnections closes the keep-alive connections the client is
// not using.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }
