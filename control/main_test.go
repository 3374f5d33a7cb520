package control

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/leakcheck"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

var testShards = []ShardInfo{
	{ID: "s1", Addr: "http://127.0.0.1:9001"},
	{ID: "s2", Addr: "http://127.0.0.1:9002"},
}

// testConfig is a config for one node on free ports with tight Raft
// timings, its certificate from ca.
func testConfig(t *testing.T, ca *pkitest.CA, opts ...func(*Config)) Config {
	cfg := Config{
		DataDir:     t.TempDir(),
		HTTPAddr:    "127.0.0.1:0",
		TLS:         ca.Creds(t, pkitest.Control),
		Shards:      testShards,
		Logger:      slog.New(slog.DiscardHandler),
		RaftTimeout: 50 * time.Millisecond,
	}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// startServer starts a server and stops it when the test ends.
func startServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	srv, err := New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, srv.Start(ctx))
	t.Cleanup(func() { require.NoError(t, srv.Stop()) })
	return srv
}

// bundle is a started server, its CA, an operator key and an HTTP client
// for it. The client presents no certificate, as an operator's tools and
// JWKS readers do; as gives one that calls as another identity.
type bundle struct {
	srv    *Server
	cfg    Config
	ca     *pkitest.CA
	base   string
	op     string
	client *http.Client
}

func setup(t *testing.T, opts ...func(*Config)) *bundle {
	t.Helper()
	ca := pkitest.New(t)
	cfg := testConfig(t, ca, opts...)
	srv := startServer(t, cfg)
	op, err := srv.IssueOperatorKey(context.Background(), "ops")
	require.NoError(t, err)
	return &bundle{srv: srv, cfg: cfg, ca: ca, base: "https://" + srv.Addr(), op: op, client: clientWith(ca.Anonymous(t))}
}

// as is the bundle calling with id's certificate.
func (b *bundle) as(t *testing.T, id pki.Identity) *bundle {
	t.Helper()
	c := *b
	c.client = clientWith(b.ca.Creds(t, id).Client(pki.Roles(pki.RoleControl)))
	return &c
}

// clientWith is an HTTP client over TLS with cfg, one connection a
// request, so nothing outlives the test.
func clientWith(cfg *tls.Config) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
}

// response is an HTTP response with its body read.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with an optional bearer token and JSON body (a string
// or []byte is sent as is, anything else as JSON), and the headers given
// as name, value pairs.
func (b *bundle) do(t *testing.T, method, path, token string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(v)
	case []byte:
		rd = bytes.NewReader(v)
	default:
		buf, err := json.Marshal(v)
		require.NoError(t, err)
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: out}
}

// json decodes the response body into a value of type T.
func decodeAs[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(r.body, &v), "body: %s", r.body)
	return v
}

// requireError checks a response is an API error with status and code, and
// for 400s the field.
func requireError(t *testing.T, r response, status int, code string, field ...string) {
	t.Helper()
	require.Equal(t, status, r.status, "body: %s", r.body)
	e := decodeAs[wire.ErrorBody](t, r)
	require.NotNil(t, e.Error, "body: %s", r.body)
	require.Equal(t, code, string(e.Error.Code), "body: %s", r.body)
	require.NotEmpty(t, e.Error.RequestID)
	if len(field) > 0 {
		require.Equal(t, field[0], e.Error.Field, "body: %s", r.body)
	}
}

// newTenant creates a tenant through the Go API.
func (b *bundle) newTenant(t *testing.T, name string) state.CreateTenantResult {
	t.Helper()
	res, err := b.srv.CreateTenant(context.Background(), name)
	require.NoError(t, err)
	return res
}
