package controlclient

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// node is a control node as the client meets it: a real HTTPS server over
// mutual TLS with a certificate of the test's CA, admitting gateways, that
// records what it was sent and answers with its handler.
type node struct {
	srv *httptest.Server

	mu      sync.Mutex
	seen    []seenRequest
	handler http.HandlerFunc
}

// seenRequest is what a node saw of one request.
type seenRequest struct {
	Method, Path, RequestID, Body string
	Peer                          pki.Identity
	Authorization                 string
	IdempotencyKey                string
}

// newNode serves as a node with the certificate of id.
func newNode(t *testing.T, ca *pkitest.CA, id pki.Identity, h http.HandlerFunc) *node {
	t.Helper()
	n := &node{handler: h}
	n.srv = httptest.NewUnstartedServer(http.HandlerFunc(n.serve))
	n.srv.Listener = tls.NewListener(n.srv.Listener, ca.Creds(t, id).Server(pki.Roles(pki.RoleGateway)))
	n.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are some tests' point
	n.srv.Start()
	n.srv.URL = "https://" + n.srv.Listener.Addr().String()
	t.Cleanup(n.srv.Close)
	return n
}

func (n *node) serve(w http.ResponseWriter, r *http.Request) {
	peer, _ := pki.PeerIdentity(r.TLS)
	b, _ := io.ReadAll(r.Body)
	n.mu.Lock()
	n.seen = append(n.seen, seenRequest{Method: r.Method, Path: r.URL.RequestURI(), RequestID: r.Header.Get(apierr.RequestIDHeader),
		Body: string(b), Peer: peer, Authorization: r.Header.Get("Authorization"), IdempotencyKey: r.Header.Get(wire.IdempotencyKeyHeader)})
	h := n.handler
	n.mu.Unlock()
	h(w, r)
}

func (n *node) setHandler(h http.HandlerFunc) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.handler = h
}

func (n *node) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.seen)
}

func (n *node) last(t *testing.T) seenRequest {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	require.NotEmpty(t, n.seen, "the node saw no request")
	return n.seen[len(n.seen)-1]
}

// answer answers status with v as JSON.
func answer(status int, v any) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
}

// refuse answers e as control does.
func refuse(e *apierr.Error, retryAfter string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		answer(apierr.Status(e.Code), wire.ErrorBody{Error: e.Wire()})(w, r)
	}
}

// hangUp takes the request and closes the connection without a word: a
// node lost after it was sent the request.
func hangUp(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// newSlowNode is a node that answers nothing until the test ends, even
// to a caller that gave up: a handler that returned once its request
// ended would answer 200, which that caller may still read.
func newSlowNode(t *testing.T, ca *pkitest.CA) *node {
	t.Helper()
	release := make(chan struct{})
	n := newNode(t, ca, pkitest.Control, func(http.ResponseWriter, *http.Request) { <-release })
	t.Cleanup(func() { close(release) }) // before the node closes: cleanups run last first
	return n
}

// warm has c hold a connection to the node at base, as a client in use
// would, through its transport without a timeout. A test giving a slow
// node a short Timeout warms the node that should answer after it: its
// start is then an answer, not a TLS handshake, which on a loaded machine
// under the race detector can take longer than such a Timeout.
func warm(t *testing.T, c *Client, base string) {
	t.Helper()
	resp, err := c.stream.Get(base + "/warm")
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
}

// readNode is which node answered a GET of c.
func readNode(t *testing.T, c *Client) string {
	t.Helper()
	var got pong
	require.NoError(t, c.JSON(t.Context(), http.MethodGet, "/x", "", nil, http.StatusOK, &got))
	return got.Node
}

// deadURL is an https URL where nothing listens.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "https://" + addr
}

// newClient is a gateway's client of the nodes at urls (comma-separated).
func newClient(t *testing.T, ca *pkitest.CA, urls string, timeout time.Duration) *Client {
	t.Helper()
	c := New(Config{URL: urls, TLS: ca.Creds(t, pkitest.Gateway).Client(pki.Roles(pki.RoleControl)), Timeout: timeout})
	t.Cleanup(c.Close)
	return c
}
