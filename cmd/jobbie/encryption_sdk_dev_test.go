package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// newTenantKey returns 32 random bytes in base64, as a tenant makes one.
func newTenantKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(b)
}

// requireNoKey fails if body holds key in any of the forms the API
// takes it in.
func requireNoKey(t *testing.T, body, key string) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(key)
	require.NoError(t, err)
	for _, form := range []string{key, base64.RawStdEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw), hex.EncodeToString(raw)} {
		require.NotContains(t, body, form, "an answer holds the tenant key")
	}
}

// The Go SDK's encryption calls against jobbie dev (its own master key):
// enable, a job's payload read back opened; a tenant key supplied and
// rotated, the job readable throughout, the key's id the one TenantKeyID
// computes and the key itself in no answer; a malformed key and a revoke
// with a key refused naming the field, nothing changed; revoked, the job
// reads as IsEncryptionKeyRevoked and an enqueue too, while another
// namespace of the tenant and another tenant go on; a new key starts the
// next generation. Another tenant finds neither the job nor the
// namespace.
func TestEncryptionSDKAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	ctx := context.Background()
	owner := d.owner
	ownerKey := readKey(t, d.ownerFile)
	payload := json.RawMessage(`{"card":"4111 1111 1111 1111"}`)
	enqueue := func(c *client.Client) (string, error) {
		res, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: "charges", Payload: payload})
		if err != nil {
			return "", err
		}
		return res.JobID, nil
	}
	requireReadable := func(c *client.Client, id string) {
		t.Helper()
		job, err := c.GetJob(ctx, id)
		require.NoError(t, err)
		require.JSONEq(t, string(payload), string(job.Payload))
	}

	got, err := owner.GetEncryption(ctx)
	require.NoError(t, err)
	require.False(t, got.Enabled)
	require.Equal(t, client.KeySourceNone, got.KeySource)
	require.Nil(t, got.TenantKeyID)

	got, err = owner.SetEncryption(ctx, client.EncryptionSpec{Enabled: new(true)})
	require.NoError(t, err)
	require.True(t, got.Enabled)
	require.False(t, got.SearchDecrypt)
	require.Equal(t, client.KeySourceOperator, got.KeySource)
	require.Equal(t, 1, got.Generation)
	first, err := enqueue(owner)
	require.NoError(t, err)
	requireReadable(owner, first)

	// The tenant's key: its id is the one TenantKeyID computes, and no
	// answer holds the key.
	k1 := newTenantKey(t)
	id1, err := client.TenantKeyID(k1)
	require.NoError(t, err)
	st, body := d.call(t, ownerKey, "PUT", "/api/v1/encryption", map[string]any{"tenant_key": k1})
	require.Equal(t, http.StatusOK, st, "%s", body)
	requireNoKey(t, string(body), k1)
	got, err = owner.GetEncryption(ctx)
	require.NoError(t, err)
	require.Equal(t, client.KeySourceTenant, got.KeySource)
	require.NotNil(t, got.TenantKeyID)
	require.Equal(t, id1, *got.TenantKeyID)
	requireNoKey(t, apiGet(t, d.gateway+"/api/v1/encryption", d.ownerFile), k1)
	requireReadable(owner, first)

	// A malformed key, and a revoke with a key: 400 naming the field,
	// nothing changed.
	_, err = owner.SetEncryption(ctx, client.EncryptionSpec{TenantKey: "c2hvcnQ=", Enabled: new(false)})
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, http.StatusBadRequest, e.Status, "%v", err)
	require.Equal(t, "tenant_key", e.Field, "%v", err)
	require.NotContains(t, e.Message, "c2hvcnQ=", "the refusal quotes no key")
	_, err = owner.SetEncryption(ctx, client.EncryptionSpec{TenantKey: newTenantKey(t), RevokeTenantKey: true})
	e, ok = client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "revoke_tenant_key", e.Field, "%v", err)
	after, err := owner.GetEncryption(ctx)
	require.NoError(t, err)
	require.Equal(t, got, after, "a refused change changed nothing")

	// Rotate: a new key id, the same generation, everything readable.
	k2 := newTenantKey(t)
	id2, err := client.TenantKeyID(k2)
	require.NoError(t, err)
	got, err = owner.SetEncryption(ctx, client.EncryptionSpec{TenantKey: k2, SearchDecrypt: new(true)})
	require.NoError(t, err)
	require.Equal(t, id2, *got.TenantKeyID)
	require.Equal(t, 1, got.Generation)
	require.True(t, got.SearchDecrypt)
	requireReadable(owner, first)
	second, err := enqueue(owner)
	require.NoError(t, err)
	requireReadable(owner, second)

	// Another namespace of the tenant, sealed under the operator's key,
	// and another tenant: neither is touched by the revoke below.
	_, err = owner.CreateNamespace(ctx, "ledger")
	require.NoError(t, err)
	ledger := owner.WithNamespace("ledger")
	_, err = ledger.SetEncryption(ctx, client.EncryptionSpec{Enabled: new(true)})
	require.NoError(t, err)
	inLedger, err := enqueue(ledger)
	require.NoError(t, err)
	var beta wire.CreatedTenant
	require.NoError(t, json.Unmarshal([]byte(d.operator(t, "", "tenants", "create", "beta", "-o", "json")), &beta))
	other := client.New(d.gateway, beta.OwnerKey)
	t.Cleanup(other.CloseIdleConnections)
	_, err = other.SetEncryption(ctx, client.EncryptionSpec{TenantKey: newTenantKey(t), Enabled: new(true)})
	require.NoError(t, err)
	inBeta, err := enqueue(other)
	require.NoError(t, err)

	_, err = other.GetJob(ctx, first)
	require.True(t, client.IsNotFound(err), "another tenant's job: %v", err)
	_, err = other.WithNamespace("ledger").GetEncryption(ctx)
	require.True(t, client.IsNotFound(err), "another tenant's namespace: %v", err)
	_, err = other.WithNamespace("ledger").SetEncryption(ctx, client.EncryptionSpec{RevokeTenantKey: true})
	require.True(t, client.IsNotFound(err), "another tenant's namespace: %v", err)

	// Revoke: what the key sealed is unreadable, and so is a new enqueue,
	// by the error's code and by IsEncryptionKeyRevoked.
	got, err = owner.SetEncryption(ctx, client.EncryptionSpec{RevokeTenantKey: true})
	require.NoError(t, err)
	require.Equal(t, client.KeySourceRevoked, got.KeySource)
	require.Nil(t, got.TenantKeyID)
	require.Len(t, got.RevokedKeys, 1)
	require.Equal(t, id2, got.RevokedKeys[0].KeyID)
	require.Equal(t, 1, got.RevokedKeys[0].Generation)
	for _, id := range []string{first, second} {
		_, err = owner.GetJob(ctx, id)
		require.True(t, client.IsEncryptionKeyRevoked(err), "%v", err)
		e, ok := client.AsError(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, http.StatusConflict, e.Status)
		require.Equal(t, client.CodeEncryptionKeyRevoked, e.Code)
		require.True(t, strings.Contains(e.Message, id2), "the refusal names the revoked key: %v", err)
	}
	_, err = enqueue(owner)
	require.True(t, client.IsEncryptionKeyRevoked(err), "%v", err)
	_, err = owner.SetEncryption(ctx, client.EncryptionSpec{RevokeTenantKey: true})
	e, ok = client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "revoke_tenant_key", e.Field, "nothing left to revoke: %v", err)
	requireReadable(ledger, inLedger)
	requireReadable(other, inBeta)

	// A new key starts the next generation; what the revoked one sealed
	// stays unreadable.
	got, err = owner.SetEncryption(ctx, client.EncryptionSpec{TenantKey: newTenantKey(t)})
	require.NoError(t, err)
	require.Equal(t, client.KeySourceTenant, got.KeySource)
	require.Equal(t, 2, got.Generation)
	third, err := enqueue(owner)
	require.NoError(t, err)
	requireReadable(owner, third)
	_, err = owner.GetJob(ctx, first)
	require.True(t, client.IsEncryptionKeyRevoked(err), "%v", err)
}
