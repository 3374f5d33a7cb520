package roles

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/selfhosted"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// A self-hosted node's own credentials run the shard member commands
// (from --data-dir, or --tls-* naming its files): only at a node of that
// shard and owner, refused before asking anything elsewhere. Control's
// member commands still take an operator certificate only.
func TestShardAdminWithANodesOwnCredentials(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	const tA, tB = "t_01hx7y2k3m0000000000000000", "t_01hx7y2k3m0000000000000001"
	me := pkitest.TenantShard("sh_1", "n1", tA)
	dataDir := t.TempDir()
	certPEM, keyPEM, err := ca.Issue(me, nil, time.Hour)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dataDir, "selfhosted"), 0o700))
	for name, b := range map[string][]byte{selfhosted.CertFile: certPEM, selfhosted.KeyFile: keyPEM, selfhosted.TrustFile: ca.CertPEM()} {
		require.NoError(t, os.WriteFile(selfhosted.File(dataDir, name), b, 0o600))
	}

	var mu sync.Mutex
	var seen []string
	node := func(id pki.Identity) string {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			peer, _ := pki.PeerIdentity(r.TLS)
			mu.Lock()
			seen = append(seen, peer.Node+" "+r.Method+" "+r.URL.Path)
			mu.Unlock()
			if r.Method == http.MethodDelete {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			_, _ = w.Write([]byte(`{"shard_id":"sh_1","leader_id":"n2","members":[{"node_id":"n2","raft_addr":"r2","http_addr":"h2","voter":true,"leader":true}]}`))
		}))
		srv.Listener = tls.NewListener(srv.Listener, ca.Creds(t, id).Server(nil))
		srv.Start()
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	peer := node(pkitest.TenantShard("sh_1", "n2", tA))
	byDir := []string{"--url", peer, "--data-dir", dataDir}
	byFiles := []string{"--url", peer, "--tls-cert", selfhosted.File(dataDir, selfhosted.CertFile), "--tls-key", selfhosted.File(dataDir, selfhosted.KeyFile),
		"--tls-ca", selfhosted.File(dataDir, selfhosted.TrustFile)}

	out, _, err := runJobbie(t, "", append([]string{"shard", "members"}, byDir...)...)
	require.NoError(t, err)
	require.Contains(t, out, "n2    leader")
	out, _, err = runJobbie(t, "", append([]string{"shard", "remove", "n3"}, byFiles...)...)
	require.NoError(t, err)
	require.Equal(t, "removed n3\n", out)
	mu.Lock()
	require.Equal(t, []string{"n1 GET /internal/v1/members", "n1 DELETE /internal/v1/members/n3"}, seen, "asked with the node's own identity")
	seen = nil
	mu.Unlock()

	// Not a node of its shard and owner: refused before anything is asked.
	for _, other := range []pki.Identity{pkitest.TenantShard("sh_2", "n1", tA), pkitest.TenantShard("sh_1", "n2", tB), pkitest.Shard("sh_1", "n2")} {
		_, _, err := runJobbie(t, "", "shard", "remove", "n3", "--url", node(other), "--data-dir", dataDir)
		require.Error(t, err, "%s", other)
	}
	_, _, err = runJobbie(t, "", "shard", "remove", "n3", "--url", node(pkitest.TenantShard("sh_2", "n1", tA)), "--data-dir", dataDir)
	require.ErrorContains(t, err, "is not a member of shard sh_1")
	mu.Lock()
	require.Empty(t, seen)
	mu.Unlock()

	_, _, err = runJobbie(t, "", append(append([]string{"shard", "members"}, byFiles...), "--data-dir", dataDir)...)
	require.ErrorContains(t, err, "not both")
	_, _, err = runJobbie(t, "", "shard", "members", "--url", peer, "--data-dir", t.TempDir())
	require.ErrorContains(t, err, "not the data directory of a self-hosted node that joined")
	_, _, err = runJobbie(t, "", "shard", "remove", "n 3", "--url", peer, "--data-dir", dataDir)
	require.ErrorContains(t, err, "blanks")
	_, _, err = runJobbie(t, "", append([]string{"control", "members"}, byFiles...)...)
	require.ErrorContains(t, err, "needs a certificate of role operator")
	mu.Lock()
	require.Empty(t, seen)
	mu.Unlock()
}
