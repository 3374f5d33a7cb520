package shard

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

const testNS = "t_01hx0000000000000000000000/default"

// The package's tests share one CA: a node's certificate is issued when
// it starts, a caller's when a test asks for one.
var (
	caOnce sync.Once
	ca     *pkitest.CA
)

func testCA(t testing.TB) *pkitest.CA {
	caOnce.Do(func() { ca = pkitest.New(t) })
	return ca
}

// nodeCreds is the certificate of node of shard "s1".
func nodeCreds(t testing.TB, node string) *pki.Credentials {
	return testCA(t).Creds(t, pkitest.Shard("s1", node))
}

type bundle struct {
	t      *testing.T
	srv    *Node
	url    string
	dir    string
	client *http.Client // presents a gateway's certificate unless as() says otherwise
	scope  *string      // the wire.QueueScopeHeader it sends, if any (withScope)
}

// newBundle is the bundle of srv, called as a gateway.
func newBundle(t *testing.T, srv *Node, dir string) *bundle {
	return &bundle{t: t, srv: srv, url: "https://" + srv.Addr(), dir: dir, client: client(t, pkitest.Gateway, pki.ShardMember("s1"))}
}

// as is b calling with id's certificate.
func (b *bundle) as(id pki.Identity) *bundle {
	c := *b
	c.client = client(b.t, id, pki.ShardMember("s1"))
	return &c
}

// withScope is b sending wire.QueueScopeHeader: scope, even "" (no queue).
func (b *bundle) withScope(scope string) *bundle {
	c := *b
	c.scope = &scope
	return &c
}

// setHeaders sets the namespace and b's queue scope on a request.
func (b *bundle) setHeaders(req *http.Request) {
	req.Header.Set(wire.ShardNamespaceHeader, testNS)
	if b.scope != nil {
		req.Header[wire.QueueScopeHeader] = []string{*b.scope}
	}
}

// client is an HTTP client with id's certificate, closed with the test.
func client(t testing.TB, id pki.Identity, expect pki.Policy) *http.Client {
	c := testCA(t).HTTPClient(t, id, expect)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func setup(t *testing.T, opts ...func(*Config)) *bundle {
	t.Helper()
	dir := t.TempDir()
	return start(t, dir, opts...)
}

func start(t *testing.T, dir string, opts ...func(*Config)) *bundle {
	t.Helper()
	cfg := Config{DataDir: dir, HTTPAddr: "127.0.0.1:0", Bootstrap: true, SweepInterval: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.TLS == nil {
		cfg.TLS = nodeCreds(t, cmp.Or(cfg.NodeID, "n1"))
	}
	srv, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.WaitLeader(ctx))
	b := newBundle(t, srv, dir)
	t.Cleanup(func() { _ = srv.Stop() })
	return b
}

type resp struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

func (b *bundle) call(method, path string, body any, hdr ...string) resp {
	b.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(v)
	case []byte:
		rd = bytes.NewReader(v)
	default:
		raw, err := json.Marshal(v)
		require.NoError(b.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.url+path, rd)
	require.NoError(b.t, err)
	req.Header.Set("Content-Type", "application/json")
	b.setHeaders(req)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := b.client.Do(req)
	require.NoError(b.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(b.t, err)
	out := resp{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(b.t, json.Unmarshal(raw, &out.Body), string(raw))
	}
	return out
}

func (b *bundle) enqueue(body map[string]any) string {
	b.t.Helper()
	r := b.call("POST", "/api/v1/enqueue", body)
	require.Equal(b.t, 201, r.Status, string(r.Raw))
	return r.Body["job_id"].(string)
}

func (b *bundle) fetch(queues []string, extra map[string]any) resp {
	b.t.Helper()
	body := map[string]any{"queues": queues, "worker_id": "w1", "hostname": "host1", "timeout": 0}
	for k, v := range extra {
		body[k] = v
	}
	return b.call("POST", "/api/v1/fetch", body)
}

func (b *bundle) job(id string) map[string]any {
	b.t.Helper()
	r := b.call("GET", "/api/v1/jobs/"+id, nil)
	require.Equal(b.t, 200, r.Status, string(r.Raw))
	return r.Body
}

// withClock runs the node on clock (a fake one tests advance by hand).
func withClock(clock clockwork.Clock) func(*Config) {
	return func(c *Config) { c.Clock = clock }
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, d time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %s", d, msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func errCode(r resp) string {
	e, _ := r.Body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func errField(r resp) string {
	e, _ := r.Body["error"].(map[string]any)
	f, _ := e["field"].(string)
	return f
}

// mustJSON marshals a value decoded from JSON.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
