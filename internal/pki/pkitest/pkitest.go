// Package pkitest issues certificates for tests: a CA per test and
// credentials for any identity, held in memory.
package pkitest

import (
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/pki"
)

// CA is a test's certificate authority.
type CA struct{ *pki.CA }

// New makes a fresh CA.
func New(t testing.TB) *CA {
	t.Helper()
	ca, err := pki.NewCA("test ca")
	if err != nil {
		t.Fatal(err)
	}
	return &CA{ca}
}

// Creds issues id a certificate valid for an hour, for 127.0.0.1.
func (ca *CA) Creds(t testing.TB, id pki.Identity) *pki.Credentials {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(id, []string{"127.0.0.1", "localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pki.NewCredentials(certPEM, keyPEM, ca.CertPEM())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// HTTPClient is an HTTP client presenting id's certificate that admits a
// server expect accepts (nil: any from the CA).
func (ca *CA) HTTPClient(t testing.TB, id pki.Identity, expect pki.Policy) *http.Client {
	t.Helper()
	return ClientOf(ca.Creds(t, id), expect)
}

// ClientOf is an HTTP client presenting creds.
func ClientOf(creds *pki.Credentials, expect pki.Policy) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: creds.Client(expect), MaxIdleConnsPerHost: 64}}
}

// Anonymous is a client config that trusts the CA and presents no
// certificate.
func (ca *CA) Anonymous(t testing.TB) *tls.Config {
	t.Helper()
	cfg := ca.Creds(t, pki.Identity{Role: pki.RoleOperator, Node: "anonymous"}).Client(nil)
	cfg.GetClientCertificate = nil
	return cfg
}

// Operator, Gateway, Control and Shard are the identities tests use most.
var (
	Operator = pki.Identity{Role: pki.RoleOperator, Node: "ops"}
	Gateway  = pki.Identity{Role: pki.RoleGateway, Node: "g1"}
	Control  = pki.Identity{Role: pki.RoleControl, Node: "control1"}
	Metrics  = pki.Identity{Role: pki.RoleMetrics, Node: "prometheus"}
)

// Shard is the identity of node of shard.
func Shard(shard, node string) pki.Identity {
	return pki.Identity{Role: pki.RoleShard, Shard: shard, Node: node}
}

// Tenant is a well-formed tenant id for tenant-owned shard identities.
const Tenant = "t_0123456789abcdefghijklmnop"

// TenantShard is the identity of node of shard, a self-hosted shard
// owned by tenant.
func TenantShard(shard, node, tenant string) pki.Identity {
	return pki.Identity{Role: pki.RoleShard, Shard: shard, Node: node, Tenant: tenant}
}

// GossipKey is a 32-byte gossip key for tests.
var GossipKey = []byte("0123456789abcdef0123456789abcdef")
