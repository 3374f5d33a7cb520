package selfhosted

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

const joinTenant = "t_0123456789abcdefghijklmnop"

// joinControl is control's join endpoint over TLS: it signs the node's
// request with a self-hosted CA of its own for shard sh_1 of joinTenant,
// after the answers of before, one a request (a status and a body).
type joinControl struct {
	url, caFile string
	url2        string // a second node of the same control (the same state)
	mu          sync.Mutex
	before      []string // "status body", answered first, in turn
	joins       []wire.JoinRequest
}

func newJoinControl(t *testing.T, before ...string) *joinControl {
	t.Helper()
	shCA, err := pki.NewCA("self-hosted")
	require.NoError(t, err)
	c := &joinControl{before: before}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req wire.JoinRequest
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		c.mu.Lock()
		c.joins = append(c.joins, req)
		var canned string
		if len(c.before) > 0 {
			canned, c.before = c.before[0], c.before[1:]
		}
		c.mu.Unlock()
		if canned != "" {
			status, body, _ := strings.Cut(canned, " ")
			w.WriteHeader(map[string]int{"403": 403, "503": 503}[status])
			_, _ = w.Write([]byte(body))
			return
		}
		id := pki.Identity{Role: pki.RoleShard, Shard: "sh_1", Node: req.NodeID, Tenant: joinTenant}
		cert, err := shCA.IssueCSR([]byte(req.CSR), id, nil, time.Hour)
		require.NoError(t, err)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(wire.JoinResponse{Certificate: string(cert), CA: string(shCA.CertPEM()), ShardID: "sh_1",
			NodeID: req.NodeID, TenantID: joinTenant, TunnelURLs: []string{"gw1:8443", "gw2:8443"}})
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	srv2 := httptest.NewTLSServer(srv.Config.Handler) // httptest's TLS servers share one certificate
	t.Cleanup(srv2.Close)
	c.url2 = srv2.URL
	c.caFile = filepath.Join(t.TempDir(), "hosted-ca.crt")
	require.NoError(t, os.WriteFile(c.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))
	return c
}

// A join that cannot succeed is refused before anything is asked.
func TestJoinRefusesBadInput(t *testing.T) {
	t.Parallel()
	notPEM := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	for _, tc := range []struct {
		j    Joining
		want string
	}{
		{Joining{ControlURLs: []string{"https://c"}, CAFile: notPEM}, "joining needs --join-token"},
		{Joining{Token: "jst", CAFile: notPEM}, "joining needs --join-token, --control-url"},
		{Joining{Token: "jst", ControlURLs: []string{"https://c"}}, "--ca-file (the hosted service's CA)"},
		{Joining{Token: "jst", ControlURLs: []string{"http://c"}, CAFile: notPEM}, `--control-url "http://c": control is reached over TLS`},
		{Joining{Token: "jst", ControlURLs: []string{"https://c"}, CAFile: notPEM}, "holds no certificate"},
	} {
		dir := t.TempDir()
		require.ErrorContains(t, Join(context.Background(), dir, "n1", tc.j), tc.want)
		require.False(t, Joined(dir))
	}
}

// A node joins through control URLs of which the first refuses
// connections and the second answers 503: it keeps their list, the
// tunnels given instead of control's, and its files owner-only; a second
// start loads them without asking, and says the token is not used again.
func TestJoinThenOpenAgain(t *testing.T) {
	t.Parallel()
	ctl := newJoinControl(t, "503 no leader")
	dir := t.TempDir()
	urls := []string{"https://127.0.0.1:1", ctl.url, ctl.url2}
	j := Joining{Token: "jst_1", ControlURLs: urls, CAFile: ctl.caFile, Tunnels: []string{"gw9:8443"}}
	var warn strings.Builder
	creds, rec, err := Open(context.Background(), dir, "n1", j, &warn)
	require.NoError(t, err)
	require.Empty(t, warn.String())
	require.Equal(t, pki.Identity{Role: pki.RoleShard, Shard: "sh_1", Node: "n1", Tenant: joinTenant}, creds.Identity())
	require.Equal(t, "sh_1", rec.ShardID)
	require.Equal(t, urls, rec.ControlURLs)
	require.Equal(t, []string{"gw9:8443"}, rec.TunnelURLs, "--tunnel replaces control's")
	require.Len(t, ctl.joins, 2, "the 503 tried the next URL")
	require.Equal(t, "jst_1", ctl.joins[1].Token)
	for _, f := range []string{RecordFile, CertFile, KeyFile, TrustFile} {
		st, err := os.Stat(File(dir, f))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
	}

	creds, _, err = Open(context.Background(), dir, "n1", j, &warn)
	require.NoError(t, err)
	require.Equal(t, "sh_1", creds.Identity().Shard)
	require.Equal(t, "jobbie shard: this node joined before; --join-token is not used again\n", warn.String())
	require.Len(t, ctl.joins, 2, "not asked again")
	_, _, err = Open(context.Background(), dir, "n2", Joining{}, &warn)
	require.EqualError(t, err, "this data directory is node n1 of shard sh_1, not node n2")
}

// Control's refusal (a 4xx) is final: the next URL is not asked, and
// nothing is stored.
func TestJoinRefusedByControl(t *testing.T) {
	t.Parallel()
	ctl := newJoinControl(t, `403 {"error":{"code":"forbidden","message":"the token was used"}}`)
	dir := t.TempDir()
	err := Join(context.Background(), dir, "n1", Joining{Token: "jst_1", ControlURLs: []string{ctl.url, ctl.url2}, CAFile: ctl.caFile})
	require.ErrorContains(t, err, "join: control "+ctl.url+" answered 403 Forbidden: ")
	require.ErrorContains(t, err, "the token was used")
	require.Len(t, ctl.joins, 1)
	require.False(t, Joined(dir))
}

// The record's tunnels and control URLs give way to those the command
// line names.
func TestRecordGivenOrStored(t *testing.T) {
	t.Parallel()
	r := &Record{JoinResponse: wire.JoinResponse{TunnelURLs: []string{"gw1:8443"}}, ControlURLs: []string{"https://c1"}}
	require.Equal(t, []string{"gw1:8443"}, r.Tunnels(nil))
	require.Equal(t, []string{"gw2:8443"}, r.Tunnels([]string{"gw2:8443"}))
	require.Equal(t, []string{"https://c1"}, r.Controls(nil))
	require.Equal(t, []string{"https://c2"}, r.Controls([]string{"https://c2"}))
}
