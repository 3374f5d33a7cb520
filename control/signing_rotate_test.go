package control

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func TestSigningKeyRotation(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	b := setup(t, func(c *Config) { c.Clock = clk })
	ctx := context.Background()
	acme := b.newTenant(t, "acme")
	tid := acme.Tenant.ID
	old, err := b.srv.CreateKey(ctx, tid, KeyRequest{Name: "old", Role: "worker", Namespaces: []string{"default"}})
	require.NoError(t, err)

	r := b.do(t, http.MethodGet, "/control/v1/signing-keys", b.op, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	before := decodeAs[wire.SigningKeyList](t, r).SigningKeys
	require.Len(t, before, 1)
	require.True(t, before[0].Current)
	require.Nil(t, before[0].RetiresAt)
	require.NotContains(t, string(r.body), "seed", "never the private half")

	for _, bad := range []any{map[string]any{"retire_after": "-1h"}, map[string]any{"retire_after": "8761h"},
		map[string]any{"retire_after": "later"}} {
		requireError(t, b.do(t, http.MethodPost, "/control/v1/signing-keys/rotate", b.op, bad), 400, "bad_request", "retire_after")
	}
	requireError(t, b.do(t, http.MethodPost, "/control/v1/signing-keys/rotate", b.op, map[string]any{"retire": "1h"}), 400, "bad_request", "retire")
	requireError(t, b.do(t, http.MethodPost, "/control/v1/signing-keys/rotate", acme.OwnerKey, nil), 403, "forbidden")
	requireError(t, b.do(t, http.MethodPost, "/control/v1/signing-keys/rotate", "", nil), 401, "unauthenticated")
	requireError(t, b.as(t, pkitest.Gateway).do(t, http.MethodGet, "/control/v1/signing-keys", "", nil), 401, "unauthenticated")
	require.Len(t, decodeAs[wire.SigningKeyList](t, b.do(t, http.MethodGet, "/control/v1/signing-keys", b.op, nil)).SigningKeys, 1,
		"refused rotations rotated nothing")

	r = b.do(t, http.MethodPost, "/control/v1/signing-keys/rotate", b.op, map[string]any{"retire_after": "24h"})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	rot := decodeAs[wire.RotatedSigningKeys](t, r)
	require.Len(t, rot.SigningKeys, 2)
	oldKid, newKid := rot.SigningKeys[0], rot.SigningKeys[1]
	require.Equal(t, before[0].Kid, oldKid.Kid)
	require.False(t, oldKid.Current)
	require.False(t, oldKid.Retired)
	require.Equal(t, clk.Now().Add(24*time.Hour), *oldKid.RetiresAt)
	require.True(t, newKid.Current)
	require.Nil(t, newKid.RetiresAt)
	rev := decodeAs[wire.Revocations](t, b.as(t, pkitest.Gateway).do(t, http.MethodGet, "/internal/v1/revocations", "", nil))
	require.Equal(t, uint64(1), rev.Version, "gateways learn of a rotation with the revocation list")
	require.Equal(t, []wire.RetiringSigningKey{{Kid: oldKid.Kid, RetiresAt: *oldKid.RetiresAt}}, rev.SigningKeys)

	// Both keys verify; new keys are signed by the new one.
	set, err := b.srv.JWKS(ctx)
	require.NoError(t, err)
	require.Len(t, set.Keys, 2)
	fresh, err := b.srv.CreateKey(ctx, tid, KeyRequest{Name: "fresh", Role: "worker", Namespaces: []string{"default"}})
	require.NoError(t, err)
	_, tok := parseWithJWKS(t, set, fresh.Key)
	require.Equal(t, newKid.Kid, tok.Header["kid"])
	_, tok = parseWithJWKS(t, set, rot.OperatorKey)
	require.Equal(t, newKid.Kid, tok.Header["kid"], "the operator key comes back signed by the new key")
	opClaims, err := b.srv.VerifyKey(ctx, rot.OperatorKey)
	require.NoError(t, err)
	oldOp, err := b.srv.VerifyKey(ctx, b.op)
	require.NoError(t, err)
	require.Equal(t, oldOp.Subject, opClaims.Subject, "the same operator key")
	for _, k := range []string{old.Key, acme.OwnerKey, fresh.Key} {
		_, err := b.srv.VerifyKey(ctx, k)
		require.NoError(t, err)
	}
	// A rotated API key is signed again with the current key.
	rotated, err := b.srv.RotateKey(ctx, tid, old.ID, wire.RotateKeyRequest{})
	require.NoError(t, err)
	_, tok = parseWithJWKS(t, set, rotated.Key)
	require.Equal(t, newKid.Kid, tok.Header["kid"])

	// Once the old key retires, it leaves the JWKS and verifies nothing.
	clk.Advance(24 * time.Hour)
	set, err = b.srv.JWKS(ctx)
	require.NoError(t, err)
	require.Len(t, set.Keys, 1)
	require.Equal(t, newKid.Kid, set.Keys[0].Kid)
	for _, k := range []string{acme.OwnerKey, b.op} {
		_, err := b.srv.VerifyKey(ctx, k)
		require.Equal(t, apierr.Unauthenticated, apierr.CodeOf(err), "%v", err)
	}
	requireError(t, b.do(t, http.MethodGet, "/control/v1/signing-keys", b.op, nil), 401, "unauthenticated")
	for _, k := range []string{fresh.Key, rotated.Key, rot.OperatorKey} {
		_, err := b.srv.VerifyKey(ctx, k)
		require.NoError(t, err)
	}
	list := decodeAs[wire.SigningKeyList](t, b.do(t, http.MethodGet, "/control/v1/signing-keys", rot.OperatorKey, nil)).SigningKeys
	require.True(t, list[0].Retired)
	require.True(t, list[1].Current)

	// retire_after 0 retires the current key at once; a later rotation erases retired seeds.
	r = b.do(t, http.MethodPost, "/control/v1/signing-keys/rotate", rot.OperatorKey, map[string]any{"retire_after": 0})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	third := decodeAs[wire.RotatedSigningKeys](t, r)
	_, err = b.srv.VerifyKey(ctx, fresh.Key)
	require.Equal(t, apierr.Unauthenticated, apierr.CodeOf(err))
	_, err = b.srv.VerifyKey(ctx, third.OperatorKey)
	require.NoError(t, err)
	r = b.do(t, http.MethodPost, "/control/v1/signing-keys/rotate", third.OperatorKey, nil)
	require.Equal(t, http.StatusOK, r.status, "no body: retire after a day; body: %s", r.body)
	keys, err := viewValue(b.srv, state.ListSigningKeys)
	require.NoError(t, err)
	require.Empty(t, keys[0].Seed)
	require.Empty(t, keys[1].Seed)
	require.Len(t, keys[2].Seed, 32, "retiring, not retired")
	require.Equal(t, clk.Now().Add(wire.DefaultRetireAfter), *keys[2].RetiresAt)
	k, err := b.srv.Key(ctx, tid, fresh.ID)
	require.NoError(t, err)
	require.Equal(t, tenancy.RoleWorker, k.Role)
}
