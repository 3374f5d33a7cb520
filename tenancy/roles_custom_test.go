package tenancy

import (
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
)

func TestCustomRoleKeys(t *testing.T) {
	require.True(t, IsCustomRole(Role("support")))
	require.False(t, IsCustomRole(Role("admin")), "a built-in role")
	require.False(t, IsCustomRole(Role("operator")))
	require.False(t, IsCustomRole(Role("Bad_Name")))

	c := KeyClaims{TenantID: "t_01hx7y2k3m0000000000000000", Role: "support", Namespaces: []string{"emails"},
		DefaultNamespace: "emails", RegisteredClaims: jwt.RegisteredClaims{Issuer: Issuer, Subject: "key_1"}}
	require.Error(t, c.Check(), "Check knows built-in roles only")
	require.NoError(t, c.CheckAnyRole())
	require.Equal(t, Role("support"), c.Role, "the claims are left as they were")
	c.Role = "Bad_Name"
	require.Error(t, c.CheckAnyRole())
	c.Role, c.Namespaces = "support", nil
	require.Error(t, c.CheckAnyRole(), "the other claims are checked too")
	c.Role, c.Namespaces = "producer", []string{"emails"}
	require.NoError(t, c.CheckAnyRole())
}
