package roles

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/rolelog"
)

// A multi-process dev cluster hands the push switches to every shard
// node, which is where the dispatcher runs, and to no other process.
func TestDevClusterPlanPush(t *testing.T) {
	dir := t.TempDir()
	ca, err := openDevPKI(dir)
	require.NoError(t, err)
	caFile := filepath.Join(dir, "receiver.crt")
	c := &devCluster{o: devOptions{dataDir: dir, shards: 1, replicas: 3, addr: "127.0.0.1:0",
		push: pushFlags{allowPrivate: true, caFile: caFile}},
		files: filesIn(dir), path: filepath.Join(dir, "cluster.json"), ca: ca, gossipKey: filepath.Join(dir, "gossip.key"), ports: newDevPorts()}
	require.NoError(t, c.plan())
	c.ports.releaseAll()
	shards := 0
	for _, p := range c.cf.Processes {
		i := slices.Index(p.args, "--push-ca-file")
		if p.Role != "shard" {
			require.NotContains(t, p.args, "--push-allow-private", p.name())
			require.Negative(t, i, p.name())
			continue
		}
		shards++
		require.Contains(t, p.args, "--push-allow-private", p.name())
		require.GreaterOrEqual(t, i, 0, p.name())
		require.Equal(t, caFile, p.args[i+1])
	}
	require.Equal(t, 3, shards)
}

// A cluster's processes log in dev's format, and at dev's level only
// when it was given one (else at their own default, info).
func TestDevClusterPlanLog(t *testing.T) {
	for _, levelSet := range []bool{false, true} {
		dir := t.TempDir()
		ca, err := openDevPKI(dir)
		require.NoError(t, err)
		c := &devCluster{o: devOptions{dataDir: dir, shards: 1, replicas: 3, addr: "127.0.0.1:0",
			log: rolelog.Options{Format: rolelog.FormatJSON, Level: "debug"}, logLevelSet: levelSet},
			files: filesIn(dir), path: filepath.Join(dir, "cluster.json"), ca: ca, gossipKey: filepath.Join(dir, "gossip.key"), ports: newDevPorts()}
		require.NoError(t, c.plan())
		c.ports.releaseAll()
		require.NotEmpty(t, c.cf.Processes)
		for _, p := range c.cf.Processes {
			i := slices.Index(p.args, "--log-format")
			require.GreaterOrEqual(t, i, 0, p.name())
			require.Equal(t, "json", p.args[i+1], p.name())
			i = slices.Index(p.args, "--log-level")
			if !levelSet {
				require.Negative(t, i, p.name())
				continue
			}
			require.GreaterOrEqual(t, i, 0, p.name())
			require.Equal(t, "debug", p.args[i+1], p.name())
		}
	}
}

// --push-ca-file adds its certificates to the system's roots; a file
// without one, or none, is refused by the flag's name.
func TestPushCAFile(t *testing.T) {
	var none pushFlags
	pool, err := none.rootCAs()
	require.NoError(t, err)
	require.Nil(t, pool, "without the flag: the system's roots")

	srv := httptest.NewTLSServer(nil)
	defer srv.Close()
	dir := t.TempDir()
	good := filepath.Join(dir, "receiver.crt")
	require.NoError(t, os.WriteFile(good, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))
	p := pushFlags{caFile: good}
	pool, err = p.rootCAs()
	require.NoError(t, err)
	conn, err := tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{RootCAs: pool})
	require.NoError(t, err, "the receiver's certificate verifies against the pool")
	require.NoError(t, conn.Close())
	_, err = tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{RootCAs: x509.NewCertPool()})
	require.Error(t, err)

	bad := filepath.Join(dir, "bad.crt")
	require.NoError(t, os.WriteFile(bad, []byte("not a certificate"), 0o600))
	for _, f := range []string{bad, filepath.Join(dir, "missing.crt")} {
		p := pushFlags{caFile: f}
		_, err := p.rootCAs()
		require.ErrorContains(t, err, "--push-ca-file")
	}
}
