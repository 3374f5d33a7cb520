package main

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
