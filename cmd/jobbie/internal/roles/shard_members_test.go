package roles

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/stretchr/testify/require"
)

// A node that knows no leader yet has done nothing: the member commands
// ask again. Any other refusal is reported at once.
func TestShardAdminRetriesWhileNoLeader(t *testing.T) {
	var calls atomic.Int32
	var refuse atomic.Value
	refuse.Store("no_leader")
	ca := pkitest.New(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, ok := pki.PeerIdentity(r.TLS); !ok || id != pkitest.Operator {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if calls.Add(1) <= 2 {
			code := refuse.Load().(string)
			status := map[string]int{"no_leader": 503, "not_found": 404}[code]
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":{"code":"` + code + `","message":"refused: ` + code + `"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"shard_id":"s1","leader_id":"n1","members":[{"node_id":"n1","raft_addr":"r1","http_addr":"h1","voter":true,"leader":true}]}`))
	}))
	srv.Listener = tls.NewListener(srv.Listener, ca.Creds(t, pkitest.Shard("s1", "n1")).Server(nil))
	srv.Start()
	defer srv.Close()
	a := &memberAdmin{peer: pki.RoleShard, url: srv.Listener.Addr().String(), tls: writeCreds(t, ca, pkitest.Operator), output: cli.OutTable}

	var out strings.Builder
	require.NoError(t, a.members(context.Background(), http.MethodGet, "/internal/v1/members", nil, &out))
	require.EqualValues(t, 3, calls.Load(), "two refusals, then the answer")
	require.Contains(t, out.String(), "n1    leader")

	calls.Store(0)
	refuse.Store("not_found")
	err := a.send(context.Background(), http.MethodDelete, "/internal/v1/members/n9", nil, nil)
	require.EqualError(t, err, "DELETE /internal/v1/members/n9: refused: not_found (not_found)")
	require.EqualValues(t, 1, calls.Load(), "not retried")
}

// A member command presents an operator certificate: any other is refused
// before it asks anything, and so is a node that is not a shard's.
func TestShardAdminNeedsOperatorCertificate(t *testing.T) {
	ca := pkitest.New(t)
	a := &memberAdmin{peer: pki.RoleShard, url: "127.0.0.1:1", tls: writeCreds(t, ca, pkitest.Gateway), output: cli.OutTable}
	err := a.send(context.Background(), http.MethodGet, "/internal/v1/members", nil, nil)
	require.ErrorContains(t, err, "needs a certificate of role operator")
	a.tls = roleTLS{}
	require.ErrorContains(t, a.send(context.Background(), http.MethodGet, "/internal/v1/members", nil, nil), "--tls-cert, --tls-key and --tls-ca are required")

	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	srv.Listener = tls.NewListener(srv.Listener, ca.Creds(t, pkitest.Gateway).Server(nil))
	srv.Start()
	defer srv.Close()
	a = &memberAdmin{peer: pki.RoleShard, url: srv.Listener.Addr().String(), tls: writeCreds(t, ca, pkitest.Operator), output: cli.OutTable}
	require.ErrorContains(t, a.send(context.Background(), http.MethodGet, "/internal/v1/members", nil, nil), "gateway")
}

// writeCreds issues id a certificate into files and returns the flags' values.
func writeCreds(t *testing.T, ca *pkitest.CA, id pki.Identity) roleTLS {
	t.Helper()
	dir := t.TempDir()
	certPEM, keyPEM, err := ca.Issue(id, nil, time.Hour)
	require.NoError(t, err)
	r := roleTLS{cert: filepath.Join(dir, "c.crt"), key: filepath.Join(dir, "c.key"), ca: filepath.Join(dir, "ca.crt")}
	require.NoError(t, os.WriteFile(r.cert, certPEM, 0o600))
	require.NoError(t, os.WriteFile(r.key, keyPEM, 0o600))
	require.NoError(t, os.WriteFile(r.ca, ca.CertPEM(), 0o600))
	return r
}
