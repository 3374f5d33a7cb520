package e2e

import (
	"crypto/tls"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
)

// testPKI is a deployment CA of one test, made with `jobbie certs ca`,
// and the certificates it issued with `jobbie certs issue`.
type testPKI struct{ dir string }

// issueMu keeps two tests from issuing the same files at once.
var issueMu sync.Mutex

// newTestPKI makes a fresh CA (ca.crt, ca.key) in a temporary directory.
func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command(binary, "certs", "ca", "--dir", dir).CombinedOutput()
	require.NoError(t, err, "jobbie certs ca: %s", out)
	return &testPKI{dir: dir}
}

// caFile is the CA's certificate, for --tls-ca.
func (p *testPKI) caFile() string { return filepath.Join(p.dir, "ca.crt") }

// prefix is where the certificate of role/shard/node is kept (.crt, .key).
func (p *testPKI) prefix(role, shard, node string) string {
	return filepath.Join(p.dir, role+"-"+shard+"-"+node)
}

// issue gives role/shard/node (shard "" for roles without one) a
// certificate naming 127.0.0.1 and localhost, once, and returns the flags
// a process runs with on it.
func (p *testPKI) issue(t *testing.T, role, shard, node string) []string {
	t.Helper()
	prefix := p.prefix(role, shard, node)
	issueMu.Lock()
	defer issueMu.Unlock()
	if _, err := os.Stat(prefix + ".key"); err != nil {
		args := []string{"certs", "issue", "--ca-dir", p.dir, "--role", role, "--node", node,
			"--host", "127.0.0.1", "--host", "localhost", "--out", prefix}
		if shard != "" {
			args = append(args, "--shard", shard)
		}
		out, err := exec.Command(binary, args...).CombinedOutput()
		require.NoError(t, err, "jobbie %v: %s", args, out)
	}
	return []string{"--tls-cert", prefix + ".crt", "--tls-key", prefix + ".key", "--tls-ca", p.caFile()}
}

// tlsConfig is a client presenting role/shard/node's certificate (issued
// if need be) and trusting the CA; the server's name is checked as usual,
// so address servers as 127.0.0.1 or localhost.
func (p *testPKI) tlsConfig(t *testing.T, role, shard, node string) *tls.Config {
	t.Helper()
	p.issue(t, role, shard, node)
	prefix := p.prefix(role, shard, node)
	cfg, err := devproc.ClientTLS(prefix+".crt", prefix+".key", p.caFile())
	require.NoError(t, err)
	return cfg
}

// client is an HTTP client on tlsConfig(role, shard, node).
func (p *testPKI) client(t *testing.T, role, shard, node string) *http.Client {
	t.Helper()
	return tlsClient(t, p.tlsConfig(t, role, shard, node), 20*time.Second)
}

// devPKIClient is the operator's client of a `jobbie dev` data directory:
// the operator certificate and the CA of <dataDir>/pki.
func devPKIClient(t *testing.T, dataDir string) *http.Client {
	t.Helper()
	cfg, err := devproc.OperatorTLS(dataDir)
	require.NoError(t, err)
	return tlsClient(t, cfg, 20*time.Second)
}

// tlsClient is an HTTP client on cfg whose idle connections close when
// the test ends.
func tlsClient(t *testing.T, cfg *tls.Config, timeout time.Duration) *http.Client {
	hc := &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: cfg}}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}

// writeGossipKey writes a random AES-256 gossip key (hex) to path.
func writeGossipKey(t *testing.T, path string) {
	t.Helper()
	writeRandomHex(t, path, 32)
}
