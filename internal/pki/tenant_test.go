package pki

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const tenantA = "t_0123456789abcdefghijklmnop"

func TestTenantIdentityRoundTrip(t *testing.T) {
	t.Parallel()
	id := Identity{Role: RoleShard, Shard: "acme-1", Node: "n1", Tenant: tenantA}
	require.NoError(t, id.Validate())
	require.Equal(t, "jobbie://shard/acme-1/n1?tenant="+tenantA, id.String())
	back, err := ParseIdentity(id.String())
	require.NoError(t, err)
	require.Equal(t, id, back)
	require.Equal(t, Identity{Role: RoleShard, Shard: "acme-1", Node: "n1"}, id.Hosted())

	// Through a certificate and credentials.
	ca, err := NewCA("test ca")
	require.NoError(t, err)
	c := pair(t, ca, id)
	require.Equal(t, tenantA, c.Identity().Tenant)

	for _, bad := range []string{
		"jobbie://gateway/-/g1?tenant=" + tenantA,   // only a shard node has an owner
		"jobbie://operator/-/ops?tenant=" + tenantA, // likewise
		"jobbie://shard/s1/n1?tenant=acme",          // not a tenant id
		"jobbie://shard/s1/n1?tenant=",              // empty
		"jobbie://shard/s1/n1?tenant=" + tenantA + "&tenant=" + tenantA,
		"jobbie://shard/s1/n1?owner=" + tenantA, // an unknown claim is not ignored
		"jobbie://shard/s1/n1?tenant=" + tenantA + "&x=1",
		"jobbie://shard/s1/n1#frag",
		"jobbie://shard/s1/n1?%zz",
	} {
		_, err := ParseIdentity(bad)
		require.Error(t, err, bad)
	}
	for _, role := range []Role{RoleGateway, RoleControl, RoleOperator, RoleMetrics} {
		err := Identity{Role: role, Node: "x", Tenant: tenantA}.Validate()
		require.ErrorContains(t, err, "names no tenant", role)
		_, _, err = ca.Issue(Identity{Role: role, Node: "x", Tenant: tenantA}, nil, time.Hour)
		require.Error(t, err, "the CA refuses a %s with a tenant", role)
	}

	// A tenant id has tenancy's shape.
	require.ErrorContains(t, Identity{Role: RoleShard, Shard: "s1", Node: "n1", Tenant: "t_x"}.Validate(), "malformed")
}

// Certificates issued before identities could name a tenant read exactly
// as they did: testdata holds ones made by that code.
func TestPreTenantCertificatesParseUnchanged(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/pre-tenant-certs.pem")
	require.NoError(t, err)
	var got []Identity
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		c, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		id, err := IdentityOf(c)
		require.NoError(t, err)
		require.Equal(t, id.String(), c.URIs[0].String(), "re-encoding gives the same URI")
		require.Equal(t, id.String(), c.Subject.CommonName)
		got = append(got, id)
	}
	require.Equal(t, []Identity{
		{Role: RoleShard, Shard: "s1", Node: "n1"},
		{Role: RoleGateway, Node: "gw1"},
		{Role: RoleControl, Node: "control1"},
		{Role: RoleOperator, Node: "alice"},
		{Role: RoleMetrics, Node: "prometheus"},
	}, got)
}

func TestOwnedShardMember(t *testing.T) {
	t.Parallel()
	owned := Identity{Role: RoleShard, Shard: "s1", Node: "n1", Tenant: tenantA}
	hosted := owned.Hosted()
	require.NoError(t, OwnedShardMember("s1", tenantA)(owned))
	require.NoError(t, OwnedShardMember("s1", "")(hosted))
	require.NoError(t, ShardMember("s1")(owned), "membership alone does not look at the owner")
	require.ErrorContains(t, OwnedShardMember("s1", "")(owned), "shard s1 is hosted")
	require.ErrorContains(t, OwnedShardMember("s1", tenantA)(hosted), "does not belong to tenant")
	require.ErrorContains(t, OwnedShardMember("s1", "t_zzzzzzzzzzzzzzzzzzzzzzzzzz")(owned), "does not belong to tenant")
	require.ErrorContains(t, OwnedShardMember("s2", tenantA)(owned), "not a member of shard s2")
}

// A node makes its key and a CSR; the CA signs it for the identity the
// issuer decides, and the key never left the node.
func TestIssueCSR(t *testing.T) {
	t.Parallel()
	ca, err := NewCA("test ca")
	require.NoError(t, err)
	id := Identity{Role: RoleShard, Shard: "acme-1", Node: "n1", Tenant: tenantA}

	csrPEM, keyPEM, err := NewCSR(id, []string{"10.0.0.5", "n1.acme.internal"})
	require.NoError(t, err)
	certPEM, err := ca.IssueCSR(csrPEM, id, []string{"10.0.0.5", "n1.acme.internal"}, time.Hour)
	require.NoError(t, err)
	creds, err := NewCredentials(certPEM, keyPEM, ca.CertPEM())
	require.NoError(t, err, "the certificate matches the node's own key")
	require.Equal(t, id, creds.Identity())

	// A request that names nothing gets what the issuer grants.
	bare := csrFor(t, mustKey(t), nil)
	certPEM, err = ca.IssueCSR(bare, id, nil, time.Hour)
	require.NoError(t, err)
	c, err := parseCert(certPEM)
	require.NoError(t, err)
	got, err := IdentityOf(c)
	require.NoError(t, err)
	require.Equal(t, id, got)
	// NewCSR makes such a request from the zero identity, and its key
	// goes with the certificate.
	bare, keyPEM, err = NewCSR(Identity{}, nil)
	require.NoError(t, err)
	certPEM, err = ca.IssueCSR(bare, id, nil, time.Hour)
	require.NoError(t, err)
	creds, err = NewCredentials(certPEM, keyPEM, ca.CertPEM())
	require.NoError(t, err)
	require.Equal(t, id, creds.Identity())
	_, _, err = NewCSR(Identity{Role: RoleShard, Node: "n1"}, nil)
	require.Error(t, err, "a partial identity is still checked")

	// Another identity than the issuer decides: refused, whatever differs.
	for _, asked := range []Identity{
		{Role: RoleShard, Shard: "acme-1", Node: "n1"},                                         // hosted, no owner
		{Role: RoleShard, Shard: "acme-1", Node: "n1", Tenant: "t_zzzzzzzzzzzzzzzzzzzzzzzzzz"}, // another owner
		{Role: RoleShard, Shard: "s1", Node: "n1", Tenant: tenantA},                            // another shard
		{Role: RoleGateway, Node: "n1"},                                                        // another role
	} {
		csr, _, err := NewCSR(asked, nil)
		require.NoError(t, err)
		_, err = ca.IssueCSR(csr, id, nil, time.Hour)
		require.ErrorContains(t, err, "the issuer grants "+id.String(), asked)
	}
	// A host the issuer does not grant; a URI that is no identity.
	csr, _, err := NewCSR(id, []string{"10.9.9.9"})
	require.NoError(t, err)
	_, err = ca.IssueCSR(csr, id, []string{"10.0.0.5"}, time.Hour)
	require.ErrorContains(t, err, "host 10.9.9.9")
	_, err = ca.IssueCSR(csrFor(t, mustKey(t), &url.URL{Scheme: "spiffe", Host: "x", Path: "/y"}), id, nil, time.Hour)
	require.ErrorContains(t, err, "not an identity")

	// A request whose signature is not by the key it carries.
	der := csrDER(t, mustKey(t), nil)
	der[len(der)-3] ^= 0xff // inside the signature
	_, err = ca.IssueCSR(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), id, nil, time.Hour)
	require.ErrorContains(t, err, "signature")
	_, err = ca.IssueCSR([]byte("not pem"), id, nil, time.Hour)
	require.ErrorContains(t, err, "no PEM certificate request")
	// A request from a key too weak to vouch for.
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	_, err = ca.IssueCSR(csrFor(t, weak, nil), id, nil, time.Hour)
	require.ErrorContains(t, err, "too short")
	// The issuer's identity must itself be valid.
	_, err = ca.IssueCSR(csrPEM, Identity{Role: RoleGateway, Node: "g1", Tenant: tenantA}, nil, time.Hour)
	require.ErrorContains(t, err, "names no tenant")
}

func TestIssueKey(t *testing.T) {
	t.Parallel()
	ca, err := NewCA("test ca")
	require.NoError(t, err)
	id := Identity{Role: RoleShard, Shard: "acme-1", Node: "n2", Tenant: tenantA}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	certPEM, err := ca.IssueKey(pub, id, nil, time.Hour)
	require.NoError(t, err)
	keyPEM, err := encodeKey(priv)
	require.NoError(t, err)
	creds, err := NewCredentials(certPEM, keyPEM, ca.CertPEM())
	require.NoError(t, err)
	require.Equal(t, id, creds.Identity())

	// The pair works for mutual TLS, and the gateway sees the owner.
	gw := pair(t, ca, Identity{Role: RoleGateway, Node: "g1"})
	seen, sErr, cErr := handshake(t, gw.Server(OwnedShardMember("acme-1", tenantA)), creds.Client(Roles(RoleGateway)))
	require.NoError(t, sErr)
	require.NoError(t, cErr)
	require.Equal(t, id, seen)

	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	require.NoError(t, err)
	_, err = ca.IssueKey(p224.Public(), id, nil, time.Hour)
	require.ErrorContains(t, err, "P-256")
	_, err = ca.IssueKey("a string", id, nil, time.Hour)
	require.ErrorContains(t, err, "unsupported public key")
}

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

func csrDER(t *testing.T, key any, uri *url.URL) []byte {
	t.Helper()
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: "node"}}
	if uri != nil {
		tmpl.URIs = []*url.URL{uri}
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	require.NoError(t, err)
	return der
}

func csrFor(t *testing.T, key any, uri *url.URL) []byte {
	t.Helper()
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csrDER(t, key, uri)})
}

// The owner is part of who a process is: a renewal that names another
// owner, or drops it, is refused on reload.
func TestReloadKeepsTheOwner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, err := NewCA("test ca")
	require.NoError(t, err)
	caFile := filepath.Join(dir, "ca.crt")
	require.NoError(t, os.WriteFile(caFile, ca.CertPEM(), 0o644))
	write := func(id Identity) {
		certPEM, keyPEM, err := ca.Issue(id, nil, time.Hour)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "n1.crt"), certPEM, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "n1.key"), keyPEM, 0o600))
	}
	id := Identity{Role: RoleShard, Shard: "acme-1", Node: "n1", Tenant: tenantA}
	write(id)
	creds, err := LoadCredentials(filepath.Join(dir, "n1.crt"), filepath.Join(dir, "n1.key"), caFile)
	require.NoError(t, err)
	write(id.Hosted())
	require.ErrorContains(t, creds.Reload(), "not "+id.String())
	write(Identity{Role: RoleShard, Shard: "acme-1", Node: "n1", Tenant: "t_zzzzzzzzzzzzzzzzzzzzzzzzzz"})
	require.Error(t, creds.Reload())
	write(id)
	require.NoError(t, creds.Reload())
	require.Equal(t, id, creds.Identity())
}
