package control

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

func TestStateSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t, pkitest.New(t))
	first := startServer(t, cfg)
	op, err := first.IssueOperatorKey(ctx, "ops")
	require.NoError(t, err)
	acme, err := first.CreateTenant(ctx, "acme")
	require.NoError(t, err)
	tid := acme.Tenant.ID
	emails, err := first.CreateNamespace(ctx, tid, "emails")
	require.NoError(t, err)
	gone, err := first.CreateKey(ctx, tid, KeyRequest{Name: "gone", Role: "worker", Namespaces: []string{"emails"}})
	require.NoError(t, err)
	require.NoError(t, first.RevokeKey(ctx, tid, gone.ID))
	jwks, err := first.JWKS(ctx)
	require.NoError(t, err)
	keys, err := first.Keys(ctx, tid)
	require.NoError(t, err)
	require.NoError(t, first.Stop())

	second := startServer(t, cfg)
	got, err := second.TenantByName(ctx, "acme")
	require.NoError(t, err)
	require.Equal(t, acme.Tenant, got)
	ns, err := second.Namespace(ctx, tid, "emails")
	require.NoError(t, err)
	require.Equal(t, emails, state.Namespace{Name: ns.Name, CreatedAt: ns.CreatedAt, ShardID: ns.ShardID})
	gotKeys, err := second.Keys(ctx, tid)
	require.NoError(t, err)
	require.Equal(t, keys, gotKeys)
	rev, err := second.Revocations(ctx)
	require.NoError(t, err)
	require.Equal(t, state.Revocations{Version: 1, Revoked: []string{gone.ID}}, rev)
	gotJWKS, err := second.JWKS(ctx)
	require.NoError(t, err)
	require.Equal(t, jwks, gotJWKS, "the signing key is kept, not replaced")

	// Keys signed before the restart still verify; the revoked one does not.
	for _, tok := range []string{op, acme.OwnerKey} {
		_, err := second.VerifyKey(ctx, tok)
		require.NoError(t, err)
	}
	_, err = second.VerifyKey(ctx, gone.Key)
	require.Equal(t, apierr.Unauthenticated, apierr.CodeOf(err))

	// And it keeps working: placement continues from the stored counts.
	next, err := second.CreateNamespace(ctx, tid, "next")
	require.NoError(t, err)
	require.Equal(t, "s1", next.ShardID, "s1 has default, s2 has emails: tie, lower id")
	_, err = second.CreateTenant(ctx, "acme")
	require.Equal(t, apierr.Conflict, apierr.CodeOf(err))
}
