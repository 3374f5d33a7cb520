package controlclient

import (
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jobbie/jobbie/internal/gossip"
)

// Config configures a Client. URL and TLS are required.
type Config struct {
	// URL is a control node's base URL, e.g. "https://10.0.0.5:7070", or
	// several, comma-separated.
	URL string
	// TLS is the client side of mutual TLS: this process's certificate,
	// and whom it admits at the other end (for Jobbie's processes,
	// pki.Credentials.Client(pki.Roles(pki.RoleControl)): control alone).
	TLS *tls.Config
	// Gossip, when set, adds the control nodes the pool knows to the
	// configured ones. The caller owns the pool.
	Gossip *gossip.Pool
	// Timeout bounds each call to one node, and how long a streamed
	// answer may take to start. Default 5s.
	Timeout time.Duration
	// MaxBody bounds what is read of an answer. Default 32 MiB.
	MaxBody int64
	// Repeatable says every call made with this client may be sent again
	// without harm (a shard's registration, a certificate renewal, a join
	// whose single-use token a repeat could only find used): a write whose
	// answer was lost, or that a node answered with any 5xx, is tried at
	// the next node too, as a read is.
	Repeatable bool
}

// Client calls the control plane. It is safe for concurrent use.
type Client struct {
	bases      []string // configured base URLs
	pool       *gossip.Pool
	maxBody    int64
	repeatable bool
	http       *http.Client
	// stream shares http's connections without its overall timeout, for
	// answers that are streamed (Open).
	stream *http.Client

	mu   sync.Mutex
	good string               // the base that answered last
	down map[string]time.Time // base → until when it is tried only after the others
}

// downFor is how long a control node that failed is tried last.
const downFor = 2 * time.Second

// dialTimeout bounds reaching one node: a stopped or unreachable node
// must fail fast, so the next one is tried within the caller's patience.
const dialTimeout = 2 * time.Second

// New builds a client; it connects on first use.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 32 << 20
	}
	c := &Client{
		bases:      SplitURLs(cfg.URL),
		pool:       cfg.Gossip,
		maxBody:    cfg.MaxBody,
		repeatable: cfg.Repeatable,
		down:       map[string]time.Time{},
		http: &http.Client{
			Timeout: cfg.Timeout,
			Transport: &http.Transport{
				TLSClientConfig: cfg.TLS, MaxIdleConnsPerHost: 16,
				DialContext:         (&net.Dialer{Timeout: dialTimeout}).DialContext,
				TLSHandshakeTimeout: dialTimeout,
			},
		},
	}
	c.stream = &http.Client{Transport: c.http.Transport}
	return c
}

// SplitURLs is the base URLs of a comma-separated list, without blanks
// and trailing slashes.
func SplitURLs(list string) []string {
	var out []string
	for _, u := range strings.Split(list, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// Close closes the connections the client keeps idle.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// candidates lists the control nodes to try, in order: the one that
// answered last, the configured ones, those gossip knows; nodes that
// failed lately go last.
func (c *Client) candidates() []string {
	c.mu.Lock()
	good := c.good
	c.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	add := func(b string) {
		if b != "" && !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	add(good)
	for _, b := range c.bases {
		add(b)
	}
	if c.pool != nil {
		for _, m := range c.pool.Members() {
			if m.Meta.Role == gossip.RoleControl && m.Meta.HTTPAddr != "" {
				add("https://" + m.Meta.HTTPAddr)
			}
		}
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	up, downs := out[:0:0], []string{}
	for _, b := range out {
		if now.Before(c.down[b]) {
			downs = append(downs, b)
		} else {
			up = append(up, b)
		}
	}
	return append(up, downs...)
}

// mark records how base did: one that answered is asked first from now
// on; one that failed is asked last for downFor.
func (c *Client) mark(base string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok {
		c.good = base
		delete(c.down, base)
		return
	}
	c.down[base] = time.Now().Add(downFor)
	if c.good == base {
		c.good = ""
	}
}
