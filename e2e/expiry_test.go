package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
)

func TestKeyExpiryIsValidated(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	bad := []string{
		time.Now().Add(-time.Minute).Format(time.RFC3339),
		time.Now().AddDate(10, 0, 1).Format(time.RFC3339),
		"in two seconds",
	}
	for _, exp := range bad {
		r := call(t, "POST", shared.gateway+"/api/v1/keys", ct.OwnerKey, map[string]any{"name": "bad", "role": "producer", "expires_at": exp})
		require.Equal(t, 400, r.Status, "%s: %s", exp, r.Raw)
		require.Equal(t, "bad_request", r.code(), exp)
		require.Equal(t, "expires_at", r.field(), exp)
	}
	keys, err := owner.ListKeys(ctx(t))
	require.NoError(t, err)
	require.Len(t, keys, 1, "only the owner key: refused requests created nothing")
	require.Nil(t, keys[0].ExpiresAt, "the owner key never expires")
}

func TestExpiredKeyIs401(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	exp := time.Now().Truncate(time.Second).Add(3 * time.Second) // 2–3 s ahead, a whole second
	req := clientKey("two-seconds", tenancy.RoleProducer)
	req.ExpiresAt = &exp
	k, err := owner.CreateKey(ctx(t), req)
	require.NoError(t, err)
	require.NotNil(t, k.ExpiresAt)
	require.True(t, exp.Equal(*k.ExpiresAt), "expires_at %s, want %s", k.ExpiresAt, exp)

	keys, err := owner.ListKeys(ctx(t))
	require.NoError(t, err)
	require.Len(t, keys, 2)
	require.Equal(t, k.ID, keys[1].ID)
	require.True(t, exp.Equal(*keys[1].ExpiresAt), "the listing shows the expiry")

	enqueue := func() reply {
		return call(t, "POST", shared.gateway+"/api/v1/enqueue", k.Token, map[string]string{"queue": "q"})
	}
	require.Equal(t, 201, enqueue().Status, "the key works (and is now cached) before it expires")

	var r reply
	deadline := exp.Add(5 * time.Second)
	for r = enqueue(); r.Status != 401; r = enqueue() {
		require.Equal(t, 201, r.Status, "until it expires the key works: %s", r.Raw)
		require.True(t, time.Now().Before(deadline), "the key still works %s after it expired", time.Since(exp))
		time.Sleep(50 * time.Millisecond)
	}
	refused := time.Now()
	require.False(t, refused.Before(exp), "refused at %s, before its expiry %s", refused, exp)
	require.Equal(t, "unauthenticated", r.code(), string(r.Raw))
	require.Contains(t, r.Body["error"].(map[string]any)["message"], "expired")
	t.Logf("expiry took effect %s after expires_at", refused.Sub(exp).Round(time.Millisecond))
}
