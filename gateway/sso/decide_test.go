package sso

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Decide admits by a verified email's domain or by a group, and maps
// the first matching group to its role, else the default role.
func TestDecide(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	cfg := wire.SSOConfig{AllowedDomains: []string{"acme.test"}, AllowedGroups: []string{"staff"},
		GroupRoles: []wire.SSOGroupRole{{Group: "ops", Role: "admin"}, {Group: "staff", Role: "developer"}}, DefaultRole: "viewer"}
	for _, tc := range []struct {
		name string
		cl   claimSet
		role string
		code apierr.Code
	}{
		{"domain, no group: default", claimSet{Email: "a@acme.test", EmailVerified: &yes}, "viewer", ""},
		{"domain, verification unsaid: refused", claimSet{Email: "a@acme.test"}, "", apierr.Forbidden},
		{"domain unverified: refused", claimSet{Email: "a@acme.test", EmailVerified: &no}, "", apierr.Forbidden},
		{"a subdomain is another domain", claimSet{Email: "a@eu.acme.test", EmailVerified: &yes}, "", apierr.Forbidden},
		{"a lookalike domain", claimSet{Email: "a@acme.test.evil", EmailVerified: &yes}, "", apierr.Forbidden},
		{"group admits an outside email", claimSet{Email: "b@else.test", Groups: []string{"staff"}}, "developer", ""},
		{"first mapping wins", claimSet{Email: "a@acme.test", EmailVerified: &yes, Groups: []string{"staff", "ops"}}, "admin", ""},
		{"a mapped group alone does not admit", claimSet{Email: "c@else.test", Groups: []string{"ops"}}, "", apierr.Forbidden},
		{"no email, no group", claimSet{}, "", apierr.Forbidden},
	} {
		role, err := Decide(cfg, tc.cl)
		if tc.code != "" {
			require.Equal(t, tc.code, apierr.From(err).Code, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.role, string(role), tc.name)
	}
	cfg.DefaultRole = ""
	_, err := Decide(cfg, claimSet{Email: "a@acme.test", EmailVerified: &yes})
	require.Equal(t, apierr.Forbidden, apierr.From(err).Code, "no mapping and no default role")
}
