package roles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
)

func TestCertsCAAndIssue(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	caDir := filepath.Join(dir, "pki")
	out, _, err := runJobbie(t, "", "certs", "ca", "--dir", caDir)
	require.NoError(t, err)
	require.Contains(t, out, "ca.key (keep the key offline)")
	_, _, err = runJobbie(t, "", "certs", "ca", "--dir", caDir)
	require.ErrorContains(t, err, "would invalidate every certificate", "an existing CA is never replaced")

	prefix := filepath.Join(dir, "n1")
	out, _, err = runJobbie(t, "", "certs", "issue", "--ca-dir", caDir, "--role", "shard", "--shard", "s1", "--node", "n1",
		"--host", "10.0.0.5", "--out", prefix)
	require.NoError(t, err)
	require.Contains(t, out, "jobbie://shard/s1/n1")
	creds, err := pki.LoadCredentials(prefix+".crt", prefix+".key", filepath.Join(caDir, "ca.crt"))
	require.NoError(t, err)
	require.Equal(t, pki.Identity{Role: pki.RoleShard, Shard: "s1", Node: "n1"}, creds.Identity())
	st, err := os.Stat(prefix + ".key")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	for _, bad := range [][]string{
		{"--role", "shard", "--node", "n1"},                    // a shard node names its shard
		{"--role", "gateway", "--shard", "s1", "--node", "g1"}, // a gateway names none
		{"--role", "admin", "--node", "x"},
		{"--role", "gateway", "--node", "bad name"},
	} {
		_, _, err := runJobbie(t, "", append([]string{"certs", "issue", "--ca-dir", caDir, "--out", filepath.Join(dir, "bad")}, bad...)...)
		require.Error(t, err, "%v", bad)
	}
	_, err = os.Stat(filepath.Join(dir, "bad.crt"))
	require.True(t, os.IsNotExist(err), "a refused issue writes nothing")
}

const certsTenant = "t_0123456789abcdefghijklmnop"

func TestCertsTenantShard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	caDir := filepath.Join(dir, "pki")
	_, _, err := runJobbie(t, "", "certs", "ca", "--dir", caDir)
	require.NoError(t, err)
	want := pki.Identity{Role: pki.RoleShard, Shard: "acme-1", Node: "n1", Tenant: certsTenant}

	prefix := filepath.Join(dir, "n1")
	out, _, err := runJobbie(t, "", "certs", "issue", "--ca-dir", caDir, "--role", "shard", "--shard", "acme-1", "--node", "n1",
		"--tenant", certsTenant, "--out", prefix)
	require.NoError(t, err)
	require.Contains(t, out, "jobbie://shard/acme-1/n1?tenant="+certsTenant)
	creds, err := pki.LoadCredentials(prefix+".crt", prefix+".key", filepath.Join(caDir, "ca.crt"))
	require.NoError(t, err)
	require.Equal(t, want, creds.Identity())

	for _, bad := range [][]string{
		{"--role", "gateway", "--node", "g1", "--tenant", certsTenant}, // only a shard has an owner
		{"--role", "operator", "--node", "ops", "--tenant", certsTenant},
		{"--role", "shard", "--shard", "acme-1", "--node", "n1", "--tenant", "acme"}, // not a tenant id
	} {
		_, _, err := runJobbie(t, "", append([]string{"certs", "issue", "--ca-dir", caDir, "--out", filepath.Join(dir, "bad")}, bad...)...)
		require.Error(t, err, "%v", bad)
	}
	_, err = os.Stat(filepath.Join(dir, "bad.crt"))
	require.True(t, os.IsNotExist(err), "a refused issue writes nothing")
}

// The node keeps its key: it makes a request, the CA's holder signs it for
// the identity they decide, and a request for another is refused.
func TestCertsRequestAndSign(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	caDir := filepath.Join(dir, "pki")
	_, _, err := runJobbie(t, "", "certs", "ca", "--dir", caDir)
	require.NoError(t, err)
	node := filepath.Join(dir, "node", "n2")
	require.NoError(t, os.MkdirAll(filepath.Dir(node), 0o700))
	shardFlags := []string{"--role", "shard", "--shard", "acme-1", "--node", "n2", "--tenant", certsTenant}

	out, _, err := runJobbie(t, "", append([]string{"certs", "request", "--out", node, "--host", "10.0.0.7"}, shardFlags...)...)
	require.NoError(t, err)
	require.Contains(t, out, "n2.csr")
	st, err := os.Stat(node + ".key")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	_, _, err = runJobbie(t, "", append([]string{"certs", "request", "--out", node}, shardFlags...)...)
	require.ErrorContains(t, err, "exists", "a key is never replaced")

	// The issuer decides another owner (or none): refused, nothing written.
	signed := filepath.Join(dir, "signed")
	for _, other := range [][]string{
		{"--role", "shard", "--shard", "acme-1", "--node", "n2"},
		{"--role", "shard", "--shard", "acme-1", "--node", "n2", "--tenant", "t_zzzzzzzzzzzzzzzzzzzzzzzzzz"},
		{"--role", "shard", "--shard", "acme-1", "--node", "n3", "--tenant", certsTenant},
	} {
		_, _, err = runJobbie(t, "", append([]string{"certs", "sign", "--ca-dir", caDir, "--csr", node + ".csr", "--host", "10.0.0.7", "--out", signed}, other...)...)
		require.ErrorContains(t, err, "asks for jobbie://shard/acme-1/n2?tenant="+certsTenant, "%v", other)
	}
	// A host the signer does not grant.
	_, _, err = runJobbie(t, "", append([]string{"certs", "sign", "--ca-dir", caDir, "--csr", node + ".csr", "--out", signed}, shardFlags...)...)
	require.ErrorContains(t, err, "host 10.0.0.7")
	_, err = os.Stat(signed + ".crt")
	require.True(t, os.IsNotExist(err), "a refused request writes nothing")

	out, _, err = runJobbie(t, "", append([]string{"certs", "sign", "--ca-dir", caDir, "--csr", node + ".csr", "--host", "10.0.0.7", "--out", node}, shardFlags...)...)
	require.NoError(t, err)
	require.Contains(t, out, "n2.crt")
	creds, err := pki.LoadCredentials(node+".crt", node+".key", filepath.Join(caDir, "ca.crt"))
	require.NoError(t, err, "the signed certificate matches the key that stayed on the node")
	require.Equal(t, pki.Identity{Role: pki.RoleShard, Shard: "acme-1", Node: "n2", Tenant: certsTenant}, creds.Identity())
}
