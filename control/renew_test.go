package control

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// joinedNode is a node that joined a self-hosted shard: its key stays
// here, as on the node.
type joinedNode struct {
	id   pki.Identity
	key  *ecdsa.PrivateKey
	cert string
}

// csr is a request signed by key, naming id when set, and hosts.
func csrOf(t *testing.T, key crypto.Signer, id pki.Identity, hosts ...string) string {
	t.Helper()
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{Organization: []string{"Jobbie"}}}
	if id != (pki.Identity{}) {
		tmpl.URIs = []*url.URL{id.URI()}
	}
	for _, h := range hosts {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(h))
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// joinNode mints nothing: it joins node with tok, with a key of its own.
func joinNode(t *testing.T, b *bundle, tok wire.JoinToken, node string) joinedNode {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	r := b.do(t, "POST", "/control/v1/join", "", wire.JoinRequest{Token: tok.Token, NodeID: node, CSR: csrOf(t, key, pki.Identity{})})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	j := decodeAs[wire.JoinResponse](t, r)
	return joinedNode{id: pki.Identity{Role: pki.RoleShard, Shard: j.ShardID, Node: node, Tenant: j.TenantID}, key: key, cert: j.Certificate}
}

func certOf(t *testing.T, s string) *x509.Certificate {
	t.Helper()
	blk, _ := pem.Decode([]byte(s))
	require.NotNil(t, blk)
	c, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	return c
}

func TestRenewSelfHostedCertificate(t *testing.T) {
	ca, err := pki.NewCA("jobbie self-hosted shards")
	require.NoError(t, err)
	b := setup(t, func(c *Config) { c.SelfHostedCA, c.SelfHostedCertValidity = ca, time.Hour })
	gw := b.as(t, pkitest.Gateway)
	a := b.newTenant(t, "acme")
	base := "/internal/v1/tenants/" + a.Tenant.ID
	tok := decodeAs[wire.JoinToken](t, gw.do(t, "POST", base+"/shards/join-tokens", "", map[string]any{"name": "dc1", "nodes": 2}))
	n1 := joinNode(t, b, tok, "n1")
	// The join's certificate lasts the configured validity too.
	first := certOf(t, n1.cert)
	require.WithinDuration(t, time.Now().Add(time.Hour), first.NotAfter, time.Minute)

	renew := func(cert, csr string) response {
		return b.do(t, "POST", "/control/v1/join/renew", "", wire.RenewRequest{Certificate: cert, CSR: csr})
	}
	// Happy path: the same identity and key, a later expiry, from the
	// self-hosted CA, with no client certificate.
	time.Sleep(1100 * time.Millisecond) // certificates count in seconds
	r := renew(n1.cert, csrOf(t, n1.key, pki.Identity{}))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	out := decodeAs[wire.RenewResponse](t, r)
	renewed := certOf(t, out.Certificate)
	require.True(t, out.NotAfter.Equal(renewed.NotAfter), "%s, %s", out.NotAfter, renewed.NotAfter)
	require.True(t, renewed.NotAfter.After(first.NotAfter), "%s after %s", renewed.NotAfter, first.NotAfter)
	require.WithinDuration(t, time.Now().Add(time.Hour), renewed.NotAfter, time.Minute)
	got, err := pki.IdentityOf(renewed)
	require.NoError(t, err)
	require.Equal(t, n1.id, got)
	require.True(t, n1.key.PublicKey.Equal(renewed.PublicKey))
	require.NoError(t, renewed.CheckSignatureFrom(ca.Cert))
	require.Equal(t, string(ca.CertPEM()), out.CA)
	// The renewed certificate renews in turn, and so does a request
	// naming the node's own identity.
	r = renew(out.Certificate, csrOf(t, n1.key, n1.id))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)

	// A request signed by another key: no proof the caller holds the
	// node's key (the certificate alone is public).
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	requireError(t, renew(n1.cert, csrOf(t, other, pki.Identity{})), 401, "unauthenticated", "csr")

	// The same identity and key, signed by the deployment's CA: not a
	// self-hosted node's certificate.
	deployment, err := b.ca.IssueKey(n1.key.Public(), n1.id, nil, time.Hour)
	require.NoError(t, err)
	requireError(t, renew(string(deployment), csrOf(t, n1.key, pki.Identity{})), 401, "unauthenticated", "certificate")

	// Expired: no grace.
	short, err := ca.IssueKey(n1.key.Public(), n1.id, nil, time.Millisecond)
	require.NoError(t, err)
	time.Sleep(1100 * time.Millisecond)
	r = renew(string(short), csrOf(t, n1.key, pki.Identity{}))
	requireError(t, r, 401, "unauthenticated", "certificate")
	require.Contains(t, string(r.body), "expired")

	// A node control does not list as joined (its certificate is
	// genuine: say, a node id the token never joined).
	ghost := n1.id
	ghost.Node = "n9"
	ghostCert, err := ca.IssueKey(n1.key.Public(), ghost, nil, time.Hour)
	require.NoError(t, err)
	r = renew(string(ghostCert), csrOf(t, n1.key, pki.Identity{}))
	requireError(t, r, 403, "forbidden")
	require.Contains(t, string(r.body), "not a joined node")
	// A self-hosted CA certificate for a hosted identity (no tenant).
	hosted, err := ca.IssueKey(n1.key.Public(), pki.Identity{Role: pki.RoleShard, Shard: "s1", Node: "n1"}, nil, time.Hour)
	require.NoError(t, err)
	requireError(t, renew(string(hosted), csrOf(t, n1.key, pki.Identity{})), 401, "unauthenticated", "certificate")

	// The request may name nothing else, as at join.
	requireError(t, renew(n1.cert, csrOf(t, n1.key, ghost)), 400, "bad_request", "csr")
	requireError(t, renew(n1.cert, csrOf(t, n1.key, pki.Identity{}, "10.0.0.1")), 400, "bad_request", "csr")

	// Malformed input: each a 4xx naming the field.
	good := csrOf(t, n1.key, pki.Identity{})
	requireError(t, renew("", good), 400, "bad_request", "certificate")
	requireError(t, renew(n1.cert, ""), 400, "bad_request", "csr")
	requireError(t, renew("not pem", good), 400, "bad_request", "certificate")
	requireError(t, renew(n1.cert+n1.cert, good), 400, "bad_request", "certificate")
	requireError(t, renew(n1.cert, "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"), 400, "bad_request", "csr")
	requireError(t, renew(n1.cert, n1.cert), 400, "bad_request", "csr")
	requireError(t, renew(strings.Repeat("A", wire.MaxRenewPEMBytes+1), good), 413, "payload_too_large", "certificate")
	requireError(t, b.do(t, "POST", "/control/v1/join/renew", "", `{"certificate":`), 400, "invalid_json")

	// Revoked: the shard's nodes are refused, nothing issued.
	tok2 := decodeAs[wire.JoinToken](t, gw.do(t, "POST", base+"/shards/join-tokens", "", map[string]any{"name": "dc2"}))
	m1 := joinNode(t, b, tok2, "n1")
	require.Equal(t, http.StatusOK, renew(m1.cert, csrOf(t, m1.key, pki.Identity{})).status)
	require.Equal(t, http.StatusNoContent, gw.do(t, "DELETE", base+"/shards/"+tok2.ShardID, "", nil).status)
	r = renew(m1.cert, csrOf(t, m1.key, pki.Identity{}))
	requireError(t, r, 403, "forbidden")
	require.Contains(t, string(r.body), "revoked")
	// The other shard's node renews on.
	require.Equal(t, http.StatusOK, renew(n1.cert, good).status)
}

func TestRenewWithoutSelfHostedCA(t *testing.T) {
	b := setup(t)
	requireError(t, b.do(t, "POST", "/control/v1/join/renew", "", wire.RenewRequest{Certificate: "x", CSR: "y"}), 503, "unavailable")
}

func TestSelfHostedCertValidityBounds(t *testing.T) {
	cfg := Config{DataDir: t.TempDir(), SelfHostedCertValidity: 5 * time.Second}.WithDefaults()
	require.ErrorContains(t, cfg.Validate(), "SelfHostedCertValidity")
	cfg = Config{DataDir: t.TempDir()}.WithDefaults()
	require.Equal(t, DefaultSelfHostedCertValidity, cfg.SelfHostedCertValidity)
}
