package controlapi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/controlclient"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// control is a control node for HTTP's own tests: a real HTTPS server with
// control's certificate that answers every request with the status and
// body set for it, and records what it was asked.
type control struct {
	srv *httptest.Server

	mu     sync.Mutex
	status int
	body   string
	header http.Header
	asked  []string // "METHOD URI body"
}

func newControl(t *testing.T) (*control, *HTTP) {
	t.Helper()
	ca := pkitest.New(t)
	c := &control{status: http.StatusOK, body: `{}`}
	c.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.asked = append(c.asked, r.Method+" "+r.URL.RequestURI()+" "+string(b))
		status, body := c.status, c.body
		for k, v := range c.header {
			w.Header()[k] = v
		}
		c.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	c.srv.Listener = tls.NewListener(c.srv.Listener, ca.Creds(t, pkitest.Control).Server(pki.Roles(pki.RoleGateway)))
	c.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	c.srv.Start()
	t.Cleanup(c.srv.Close)
	cl := controlclient.New(controlclient.Config{URL: "https://" + c.srv.Listener.Addr().String(),
		TLS: ca.Creds(t, pkitest.Gateway).Client(pki.Roles(pki.RoleControl)), Timeout: 5 * time.Second})
	t.Cleanup(cl.Close)
	return c, NewHTTP(cl)
}

func (c *control) answer(status int, body string, header ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status, c.body, c.header = status, body, http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		c.header.Set(header[i], header[i+1])
	}
}

func (c *control) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked[len(c.asked)-1]
}

const tid = "t_01hx7y2k3m0000000000000000"

// Every call asks the path of control's internal API it stands for, with
// its body, and is content with the status that API answers.
func TestHTTPAsksControlsInternalAPI(t *testing.T) {
	t.Parallel()
	c, h := newControl(t)
	ctx := context.Background()
	tp := "/internal/v1/tenants/" + tid
	q := wire.UsageQuery{From: time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 5, 11, 0, 0, 0, time.UTC), Granularity: "hour"}
	for _, tc := range []struct {
		status int
		call   func() error
		asked  string
	}{
		{200, func() error { _, err := h.JWKS(ctx); return err }, "GET /control/v1/jwks "},
		{200, func() error { _, _, err := h.Revocations(ctx); return err }, "GET /internal/v1/revocations "},
		{200, func() error { _, err := h.TenantRoles(ctx, "r", tid); return err }, "GET " + tp + "/roles "},
		{204, func() error { return h.ReportKeyUse(ctx, wire.KeyUsage{Keys: []wire.KeyUse{}}) }, `POST /internal/v1/keys/used {"keys":[]}`},
		{200, func() error { _, err := h.Namespace(ctx, "r", tid, "a b"); return err }, "GET " + tp + "/namespaces/a%20b "},
		{200, func() error { _, err := h.TenantPlan(ctx, "r", tid); return err }, "GET " + tp + "/plan "},
		{200, func() error { _, err := h.TenantQuota(ctx, tid); return err }, "GET " + tp + "/quota "},
		{204, func() error { return h.ReportAPIRequests(ctx, wire.APIRequestsReport{Gateway: "gw_1"}) }, `POST /internal/v1/usage/api-requests {"gateway":"gw_1","counts":null}`},
		{200, func() error { _, err := h.SelfHostedShards(ctx); return err }, "GET /internal/v1/shards/self-hosted "},
		{200, func() error { _, err := h.TrustBundle(ctx, tid, "sh_a"); return err }, "GET " + tp + "/shards/sh_a/trust "},
		{200, func() error { _, err := h.ListNamespaces(ctx, "r", tid); return err }, "GET " + tp + "/namespaces "},
		{201, func() error {
			_, err := h.CreateNamespace(ctx, "r", tid, NewNamespace{CreateNamespaceRequest: wire.CreateNamespaceRequest{Name: "sms"}, Shard: "sh_a"})
			return err
		}, `POST ` + tp + `/namespaces {"name":"sms","shard":"sh_a"}`},
		{200, func() error {
			_, err := h.UpdateNamespace(ctx, "r", tid, "sms", wire.UpdateNamespaceRequest{Retention: json.RawMessage("null")})
			return err
		}, `PATCH ` + tp + `/namespaces/sms {"retention":null}`},
		{204, func() error { return h.DeleteNamespace(ctx, "r", tid, "sms") }, "DELETE " + tp + "/namespaces/sms "},
		{200, func() error { _, err := h.ListKeys(ctx, "r", tid); return err }, "GET " + tp + "/keys "},
		{201, func() error {
			_, err := h.CreateKey(ctx, "r", tid, wire.CreateKeyRequest{Name: "k", Role: "worker"})
			return err
		},
			`POST ` + tp + `/keys {"name":"k","role":"worker","namespaces":null}`},
		{200, func() error { _, err := h.Key(ctx, "r", tid, "key_1"); return err }, "GET " + tp + "/keys/key_1 "},
		{204, func() error { return h.DeleteKey(ctx, "r", tid, "key_1") }, "DELETE " + tp + "/keys/key_1 "},
		{200, func() error { _, err := h.RotateKey(ctx, "r", tid, "key_1", wire.RotateKeyRequest{}); return err }, "POST " + tp + "/keys/key_1/rotate {}"},
		{200, func() error { _, err := h.Role(ctx, "r", tid, "support"); return err }, "GET " + tp + "/roles/support "},
		{201, func() error { _, err := h.CreateRole(ctx, "r", tid, wire.RoleRequest{Name: "s"}); return err },
			`POST ` + tp + `/roles {"name":"s","description":"","permissions":null}`},
		{200, func() error { _, err := h.UpdateRole(ctx, "r", tid, "s", wire.RoleRequest{}); return err }, `PUT ` + tp + `/roles/s {"description":"","permissions":null}`},
		{200, func() error { _, err := h.DeleteRole(ctx, "r", tid, "s"); return err }, "DELETE " + tp + "/roles/s "},
		{202, func() error {
			_, err := h.CreateBackup(ctx, "r", tid, wire.CreateBackupRequest{Namespace: "emails"})
			return err
		},
			`POST ` + tp + `/backups {"namespace":"emails"}`},
		{200, func() error { _, err := h.ListBackups(ctx, "r", tid, nil); return err }, "GET " + tp + "/backups "},
		{200, func() error { _, err := h.ListBackups(ctx, "r", tid, []string{"a", "b"}); return err }, "GET " + tp + "/backups?namespace=a&namespace=b "},
		{200, func() error { _, err := h.Backup(ctx, "r", tid, "bk_1"); return err }, "GET " + tp + "/backups/bk_1 "},
		{204, func() error { return h.DeleteBackup(ctx, "r", tid, "bk_1") }, "DELETE " + tp + "/backups/bk_1 "},
		{202, func() error {
			_, err := h.RestoreBackup(ctx, "r", tid, "bk_1", wire.RestoreOrder{RestoreRequest: wire.RestoreRequest{Replace: true}})
			return err
		},
			`POST ` + tp + `/backups/bk_1/restore {"replace":true}`},
		{200, func() error {
			d, err := h.DownloadBackup(ctx, "r", tid, "bk_1")
			if err == nil {
				d.Body.Close()
			}
			return err
		}, "GET " + tp + "/backups/bk_1/download "},
		{200, func() error { _, err := h.BackupPolicy(ctx, "r", tid, "emails"); return err }, "GET " + tp + "/namespaces/emails/backup-policy "},
		{200, func() error {
			_, err := h.PutBackupPolicy(ctx, "r", tid, "emails", wire.BackupPolicyRequest{Cron: "@daily"})
			return err
		},
			`PUT ` + tp + `/namespaces/emails/backup-policy {"cron":"@daily","retention":0}`},
		{204, func() error { return h.DeleteBackupPolicy(ctx, "r", tid, "emails") }, "DELETE " + tp + "/namespaces/emails/backup-policy "},
		{200, func() error { _, err := h.Invoices(ctx, "r", tid); return err }, "GET " + tp + "/invoices "},
		{200, func() error { _, err := h.Invoice(ctx, "r", tid, "upcoming"); return err }, "GET " + tp + "/invoices/upcoming "},
		{200, func() error { _, err := h.Usage(ctx, "r", tid, q); return err },
			"GET " + tp + "/usage?from=2026-11-05T09%3A00%3A00Z&granularity=hour&to=2026-11-05T11%3A00%3A00Z "},
		{200, func() error { q := q; q.Namespace = "emails"; _, err := h.Usage(ctx, "r", tid, q); return err },
			"GET " + tp + "/usage?from=2026-11-05T09%3A00%3A00Z&granularity=hour&namespace=emails&to=2026-11-05T11%3A00%3A00Z "},
		{200, func() error { _, err := h.OwnedShards(ctx, "r", tid); return err }, "GET " + tp + "/shards "},
		{201, func() error {
			_, err := h.CreateJoinToken(ctx, "r", tid, wire.CreateJoinTokenRequest{Name: "dc"})
			return err
		},
			`POST ` + tp + `/shards/join-tokens {"name":"dc"}`},
		{204, func() error { return h.RevokeShard(ctx, "r", tid, "sh_a") }, "DELETE " + tp + "/shards/sh_a "},
		{201, func() error {
			_, err := h.AddShardNodes(ctx, "r", tid, "sh_a", wire.AddNodesRequest{Nodes: 2})
			return err
		},
			`POST ` + tp + `/shards/sh_a/join-tokens {"nodes":2}`},
		{204, func() error { return h.RemoveShardNode(ctx, "r", tid, "sh_a", "n3") }, "DELETE " + tp + "/shards/sh_a/nodes/n3 "},
	} {
		c.answer(tc.status, "{}")
		require.NoError(t, tc.call(), tc.asked)
		require.JSONEq(t, jsonPart(tc.asked), jsonPart(c.last()), tc.asked)
		require.Equal(t, headPart(tc.asked), headPart(c.last()))
		if tc.status != http.StatusOK {
			c.answer(http.StatusOK, "{}")
			var e *Error
			require.ErrorAs(t, tc.call(), &e, "%s wants %d, not 200", tc.asked, tc.status)
			require.Equal(t, http.StatusOK, e.Status)
		}
	}
}

// headPart is "METHOD URI" of an asked line; jsonPart its body, "null"
// when empty.
func headPart(s string) string {
	i := 0
	for n := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if n++; n == 2 {
				break
			}
		}
	}
	return s[:i]
}

func jsonPart(s string) string {
	if b := s[len(headPart(s)):]; len(b) > 1 {
		return b[1:]
	}
	return "null"
}

// Another status is an *Error carrying control's answer; a 200 that does
// not decode wraps ErrUndecodable; an invoice is control's bytes as
// they came; a download streams with control's size.
func TestHTTPAnswers(t *testing.T) {
	t.Parallel()
	c, h := newControl(t)
	ctx := context.Background()
	c.answer(http.StatusServiceUnavailable, `{"error":{"code":"no_leader","message":"electing"}}`, "Retry-After", "3")
	_, err := h.Backup(ctx, "r", tid, "bk_1")
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, http.StatusServiceUnavailable, e.Status)
	require.Equal(t, "3", e.RetryAfter)
	require.Equal(t, http.MethodGet, e.Method)
	require.Equal(t, "/internal/v1/tenants/"+tid+"/backups/bk_1", e.Path)
	require.Contains(t, string(e.Body), "electing")
	_, err = h.DownloadBackup(ctx, "r", tid, "bk_1")
	require.ErrorAs(t, err, &e)
	require.Equal(t, "3", e.RetryAfter)
	_, err = h.Invoice(ctx, "r", tid, "upcoming")
	require.ErrorAs(t, err, &e)

	c.answer(http.StatusNotFound, `{"error":{"code":"not_found","message":"no plan"}}`)
	_, err = h.TenantPlan(ctx, "", tid)
	require.True(t, NotFound(err))
	require.Equal(t, apierr.NotFound, apierr.From(ForTenant(nil, "r", err)).Code)

	c.answer(http.StatusOK, `not json`)
	_, err = h.Key(ctx, "r", tid, "k")
	require.ErrorIs(t, err, ErrUndecodable)

	c.answer(http.StatusOK, "{\"id\":\"inv_1\"}\n")
	raw, err := h.Invoice(ctx, "r", tid, "inv_1")
	require.NoError(t, err)
	require.Equal(t, "{\"id\":\"inv_1\"}\n", string(raw), "control's bytes, as they are")

	c.answer(http.StatusOK, "0123456789", "X-Jobbie-Backup-Size", "10")
	d, err := h.DownloadBackup(ctx, "r", tid, "bk_1")
	require.NoError(t, err)
	body, err := io.ReadAll(d.Body)
	require.NoError(t, err)
	require.NoError(t, d.Body.Close())
	require.Equal(t, "0123456789", string(body))
	require.Equal(t, int64(10), d.Length)
	require.Equal(t, "10", d.Size)
}
