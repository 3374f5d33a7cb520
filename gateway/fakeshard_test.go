package gateway

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// The gateway tests' shards: real HTTP servers on loopback (mutual TLS)
// or on a Unix socket, recording what they are sent. Control is
// gateway/internal/controlfake.

// serveTLS starts srv over mutual TLS with the certificate of id,
// admitting only gateways, and closes it when the test ends. (StartTLS
// would put httptest's own certificate first.)
func serveTLS(t testing.TB, srv *httptest.Server, ca *pkitest.CA, id pki.Identity) {
	t.Helper()
	srv.Listener = tls.NewListener(srv.Listener, ca.Creds(t, id).Server(pki.Roles(pki.RoleGateway)))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are some tests' point
	srv.Start()
	srv.URL = "https://" + srv.Listener.Addr().String()
	t.Cleanup(srv.Close)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, e *apierr.Error) {
	writeJSON(w, apierr.Status(e.Code), wire.ErrorBody{Error: e.Wire()})
}

// shardRequest is what the fake shard saw of one request.
type shardRequest struct {
	Method, URI, Body string
	Header            http.Header
	Peer              pki.Identity // from the caller's certificate; zero on a Unix socket
}

// fakeShard records requests and answers them with its handler.
type fakeShard struct {
	id      pki.Identity // its certificate's; zero on a Unix socket
	srv     *httptest.Server
	mu      sync.Mutex
	seen    []shardRequest
	handler http.HandlerFunc
}

// newFakeShard serves as node of shard over mutual TLS, to gateways.
func newFakeShard(t testing.TB, ca *pkitest.CA, shard, node string) *fakeShard {
	fs := &fakeShard{id: pkitest.Shard(shard, node), handler: created}
	fs.srv = httptest.NewUnstartedServer(fs)
	serveTLS(t, fs.srv, ca, fs.id)
	return fs
}

// newUnixFakeShard serves on a Unix socket, without TLS, as a shard does
// for a gateway on its host.
func newUnixFakeShard(t testing.TB) (*fakeShard, string) {
	dir, err := os.MkdirTemp("", "gw") // short: socket paths are limited
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "shard.sock")
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	fs := &fakeShard{handler: created}
	fs.srv = httptest.NewUnstartedServer(fs)
	require.NoError(t, fs.srv.Listener.Close())
	fs.srv.Listener = ln
	fs.srv.Start()
	t.Cleanup(fs.srv.Close)
	return fs, "unix:" + path
}

// ServeHTTP records a request and answers it with the handler. Over TLS
// only the gateway's certificate gets this far; the check is the shard's.
// It serves no links (internal/shardlink's upgrade, which a real shard
// serves): it answers their upgrade as a node without them, 404, and
// the gateway sends everything on its pool.
func (fs *fakeShard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/internal/v1/link" {
		http.NotFound(w, r)
		return
	}
	peer, ok := pki.PeerIdentity(r.TLS)
	if fs.id.Role != "" && (!ok || peer.Role != pki.RoleGateway) {
		writeErr(w, apierr.New(apierr.Forbidden, "only a gateway's certificate is admitted"))
		return
	}
	b, _ := io.ReadAll(r.Body)
	fs.mu.Lock()
	fs.seen = append(fs.seen, shardRequest{Method: r.Method, URI: r.RequestURI, Body: string(b), Header: r.Header.Clone(), Peer: peer})
	h := fs.handler
	fs.mu.Unlock()
	h(w, r)
}

func (fs *fakeShard) addr() string { return fs.srv.Listener.Addr().String() }

func (fs *fakeShard) setHandler(h http.HandlerFunc) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.handler = h
}

func (fs *fakeShard) last(t testing.TB) shardRequest {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	require.NotEmpty(t, fs.seen, "the shard saw no request")
	return fs.seen[len(fs.seen)-1]
}

func (fs *fakeShard) count() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.seen)
}
