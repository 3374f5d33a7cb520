package tenancy

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNames(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"default", "emails", "a", "prod-eu-1"} {
		require.NoError(t, ValidateNamespace(ok), ok)
	}
	for _, bad := range []string{"", "Emails", "-x", "a b", "a/b", "a.b", string(make([]byte, 64))} {
		require.Error(t, ValidateNamespace(bad), bad)
	}
	for _, ok := range []string{"emails.send", "q", "a:b_c-d.e", "Reports"} {
		require.NoError(t, ValidateQueue(ok), ok)
	}
	for _, bad := range []string{"", ".q", "a b", "a/b", "q\x00"} {
		require.Error(t, ValidateQueue(bad), bad)
	}
	tid, ns, err := ParseShardNamespace(ShardNamespace("t_01hx0000000000000000000000", "emails"))
	require.NoError(t, err)
	require.Equal(t, "t_01hx0000000000000000000000", tid)
	require.Equal(t, "emails", ns)
	for _, bad := range []string{"", "x/emails", "t_01hx0000000000000000000000", "t_01hx0000000000000000000000/Bad"} {
		_, _, err := ParseShardNamespace(bad)
		require.Error(t, err, bad)
	}
}

func TestRoleDelegation(t *testing.T) {
	t.Parallel()
	require.True(t, CanGrant(RoleOwner, RoleOwner))
	require.True(t, CanGrant(RoleAdmin, RoleDeveloper))
	require.False(t, CanGrant(RoleAdmin, RoleOwner))
	require.False(t, CanGrant(RoleDeveloper, RoleViewer), "developers do not mint keys")
	require.False(t, CanGrant(RoleProducer, RoleProducer))
	_, err := ParseRole("operator")
	require.Error(t, err, "operator is not a tenant role")
}

// The built-in roles grant exactly what the design says.
func TestBuiltinRolePermissions(t *testing.T) {
	t.Parallel()
	e, err := NewEnforcer()
	require.NoError(t, err)
	actions := []Action{ActJobEnqueue, ActJobWork, ActJobRead, ActJobManage, ActQueueRead, ActQueueManage,
		ActScheduleRead, ActScheduleManage, ActNamespaceRead, ActNamespaceManage, ActKeyRead, ActKeyManage, ActUsageRead,
		ActBackupRead, ActBackupManage, ActWebhookRead, ActWebhookManage}
	allowed := map[Role][]Action{
		RoleOwner:     actions,
		RoleAdmin:     actions,
		RoleDeveloper: {ActJobEnqueue, ActJobWork, ActJobRead, ActJobManage, ActQueueRead, ActQueueManage, ActScheduleRead, ActScheduleManage, ActNamespaceRead, ActBackupRead, ActWebhookRead, ActWebhookManage},
		RoleProducer:  {ActJobEnqueue, ActJobRead, ActQueueRead},
		RoleWorker:    {ActJobWork, ActJobRead, ActQueueRead},
		RoleViewer:    {ActJobRead, ActQueueRead, ActScheduleRead, ActNamespaceRead, ActBackupRead, ActWebhookRead},
		RoleBilling:   {ActUsageRead}, // usage and invoices and nothing else
	}
	for role, ok := range allowed {
		want := map[Action]bool{}
		for _, a := range ok {
			want[a] = true
		}
		for _, a := range actions {
			got, err := e.Enforce(string(role), "t_x", NamespaceObject("default"), string(a))
			require.NoError(t, err)
			require.Equal(t, want[a], got, "%s %s", role, a)
		}
	}
	got, err := e.Enforce("operator", "t_x", NamespaceObject("default"), string(ActJobRead))
	require.NoError(t, err)
	require.False(t, got, "the operator role has no tenant permissions")
}

func TestClaimsCheck(t *testing.T) {
	t.Parallel()
	c := KeyClaims{TenantID: "t_01hx0000000000000000000000", Role: RoleProducer, Namespaces: []string{"emails"}, DefaultNamespace: "emails"}
	c.Issuer, c.Subject = Issuer, "key_1"
	require.NoError(t, c.Check())
	require.True(t, c.AllowsNamespace("emails"))
	require.False(t, c.AllowsNamespace("default"))
	c.Namespaces = []string{AllNamespaces}
	require.True(t, c.AllowsNamespace("anything"))
	bad := c
	bad.Issuer = "someone"
	require.Error(t, bad.Check())
	bad = c
	bad.Role = "root"
	require.Error(t, bad.Check())
	bad = c
	bad.TenantID = "acme"
	require.Error(t, bad.Check())
}

func TestJWKRoundTrip(t *testing.T) {
	t.Parallel()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	k := NewJWK("sk_1", pub)
	require.True(t, k.IsEdDSASigning())
	got, err := k.PublicKey()
	require.NoError(t, err)
	require.Equal(t, pub, got)
	k.X = "not base64!"
	_, err = k.PublicKey()
	require.Error(t, err)
	require.False(t, JWK{Kty: "RSA", Kid: "r"}.IsEdDSASigning())
	require.False(t, JWK{Kty: "OKP", Crv: "Ed25519", Kid: "e", Use: "enc"}.IsEdDSASigning())
}

func TestTenantIDShape(t *testing.T) {
	t.Parallel()
	require.NoError(t, ValidateTenantID("t_01hx0000000000000000000000"))
	for _, bad := range []string{"", "t_01HX0000000000000000000000", "t_01hx000000000000000000000", "x_01hx0000000000000000000000", "t_01hx00000000000000000000000", "t-01hx0000000000000000000000"} {
		require.Error(t, ValidateTenantID(bad), bad)
	}
	require.NoError(t, ValidateNamespace(strings.Repeat("a", 63)))
	require.Error(t, ValidateNamespace(strings.Repeat("a", 64)))
}
