package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/internal/controlfake"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

const (
	tenantA = "t_01hx7y2k3m0000000000000000"
	tenantB = "t_01hx7y2k3m0000000000000001"
)

// bundle is what a gateway test works with: a started gateway in front of
// the fake control plane and one fake shard, node n1 of shard s1, that
// holds tenant A's "default" and "emails" namespaces and tenant B's
// "default". The shard has a certificate from the test's CA, and the
// gateway reaches it over mutual TLS.
type bundle struct {
	gw      *Server
	ca      *pkitest.CA
	control *controlfake.Control
	shard   *fakeShard
	signer  controlfake.Signer
	http    *http.Client // to the gateway's public port
	base    string
}

// The fake control's way of naming keys and times.
var (
	claimsFor = controlfake.Claims
	jan       = controlfake.Jan
)

// newSigner makes a signing key named kid.
func newSigner(_ testing.TB, kid string) controlfake.Signer { return controlfake.NewSigner(kid) }

// controlURL is a gateway's ControlURL in tests, where the fake control
// answers instead (Config.control).
const controlURL = "https://control.invalid"

// setup starts a gateway and waits until it is ready; opts adjust its config.
func setup(t testing.TB, opts ...func(*Config)) *bundle {
	b := newBundle(t)
	b.start(t, opts...)
	b.waitReady(t)
	return b
}

// newBundle builds the fakes without starting the gateway.
func newBundle(t testing.TB) *bundle {
	ca := pkitest.New(t)
	s := newSigner(t, "sig-1")
	b := &bundle{ca: ca, signer: s, control: controlfake.New(s), shard: newFakeShard(t, ca, "s1", "n1")}
	for _, ns := range []string{"default", "emails"} {
		b.control.AddNamespace(tenantA, ns, "s1", b.shard.addr())
	}
	b.control.AddNamespace(tenantB, "default", "s1", "https://"+b.shard.addr()) // control's usual form: a base URL
	tr := &http.Transport{}
	b.http = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	t.Cleanup(tr.CloseIdleConnections)
	return b
}

func (b *bundle) start(t testing.TB, opts ...func(*Config)) {
	cfg := Config{
		Addr:               "127.0.0.1:0",
		ControlURL:         controlURL,
		control:            b.control,
		TLS:                b.ca.Creds(t, pkitest.Gateway),
		RevocationInterval: 20 * time.Millisecond,
		JWKSMinRefresh:     10 * time.Millisecond,
		ShutdownTimeout:    5 * time.Second,
		Logger:             slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(&cfg)
	}
	gw, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, gw.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, gw.Stop()) })
	b.gw, b.base = gw, "http://"+gw.Addr()
}

// waitReady returns once the gateway serves. On a fake clock it also
// waits for the first round of every refresh loop: readiness needs only
// the revocation list and the signing keys, and the key usage loop's
// first report, still to come, would otherwise take the uses of a test's
// first requests.
func (b *bundle) waitReady(t testing.TB) {
	select {
	case <-b.gw.Ready():
	case <-time.After(5 * time.Second):
		t.Fatal("gateway not ready after 5s")
	}
	if clk, ok := b.gw.cfg.Clock.(*clockwork.FakeClock); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, clk.BlockUntilContext(ctx, refreshLoops), "the refresh loops' first round did not end")
	}
}

// refreshLoops is how many timers a gateway keeps on its clock between
// refreshes: the revocation list's, the signing keys' and the key usage
// report's.
const refreshLoops = 3

// tick advances a gateway's fake clock by d and returns once both refresh
// loops wait on it again, so every refresh d made due has run.
func tick(t testing.TB, clk *clockwork.FakeClock, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, clk.BlockUntilContext(ctx, refreshLoops), "the refresh loops are not waiting on the clock")
	clk.Advance(d)
	require.NoError(t, clk.BlockUntilContext(ctx, refreshLoops), "the refresh loops did not finish")
}

// key signs a key of tenant A with role over namespaces (first is default).
func (b *bundle) key(t testing.TB, role tenancy.Role, nss ...string) string {
	return b.signer.Sign(claimsFor(tenantA, "key_"+string(role), role, nss...))
}

// reply is a gateway answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// apiError decodes an error answer.
func (r reply) apiError(t testing.TB) *apierr.Error {
	var body wire.ErrorBody
	require.NoError(t, json.Unmarshal(r.body, &body), "body: %s", r.body)
	require.NotNil(t, body.Error, "body: %s", r.body)
	return apierr.FromWire(body.Error)
}

func (r reply) decode(t testing.TB, out any) {
	require.NoError(t, json.Unmarshal(r.body, out), "body: %s", r.body)
}

// requireError asserts an error answer's status and code.
func (r reply) requireError(t testing.TB, status int, code apierr.Code) *apierr.Error {
	t.Helper()
	require.Equal(t, status, r.status, "body: %s", r.body)
	e := r.apiError(t)
	require.Equal(t, code, e.Code, "body: %s", r.body)
	require.NotEmpty(t, e.RequestID)
	return e
}

// do sends a request; body may be nil, a []byte or a value to encode.
// headers are name, value pairs.
func (b *bundle) do(t testing.TB, method, path, key string, body any, headers ...string) reply {
	t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(v)
	default:
		enc, err := json.Marshal(v)
		require.NoError(t, err)
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.http.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{status: resp.StatusCode, header: resp.Header, body: out}
}

var enqueueBody = map[string]any{"queue": "emails.send", "payload": map[string]any{"to": "a@example.com"}}
