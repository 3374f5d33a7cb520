package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// GetEncryption and SetEncryption speak GET and PUT /api/v1/encryption on
// the client's namespace, sending only the fields the spec sets; a 400's
// field and a revoked key's 409 come back as the client's Error.
// (Against a real jobbie dev: cmd/jobbie/encryption_sdk_dev_test.go.)
func TestEncryptionCalls(t *testing.T) {
	t.Parallel()
	const answer = `{"enabled":true,"search_decrypt":false,"key_source":"tenant","tenant_key_id":"3c1cc9efc79e1164",` +
		`"generation":1,"revoked_keys":[],"updated_at":"2026-11-29T08:00:00Z"}`
	rec := newRecorder(t, http.StatusOK, answer)
	c := rec.client(t, client.WithNamespace("payments"))
	ctx := context.Background()

	got, err := c.GetEncryption(ctx)
	require.NoError(t, err)
	require.Equal(t, client.KeySourceTenant, got.KeySource)
	require.Equal(t, "3c1cc9efc79e1164", *got.TenantKeyID)
	rec.requireRequest(t, "GET", "/api/v1/encryption", "")
	require.Equal(t, "payments", rec.requestHeader(client.NamespaceHeader))

	_, err = c.SetEncryption(ctx, client.EncryptionSpec{Enabled: new(true)})
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/encryption", `{"enabled":true}`)
	_, err = c.SetEncryption(ctx, client.EncryptionSpec{SearchDecrypt: new(false), TenantKey: "k"})
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/encryption", `{"search_decrypt":false,"tenant_key":"k"}`)
	_, err = c.SetEncryption(ctx, client.EncryptionSpec{RevokeTenantKey: true})
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/encryption", `{"revoke_tenant_key":true}`)

	rec.respond(http.StatusBadRequest, `{"error":{"code":"bad_request","message":"tenant_key: a key is 32 random bytes in base64 or hex","field":"tenant_key"}}`)
	_, err = c.SetEncryption(ctx, client.EncryptionSpec{TenantKey: "short"})
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "tenant_key", e.Field)
	require.False(t, client.IsEncryptionKeyRevoked(err))

	rec.respond(http.StatusConflict, `{"error":{"code":"encryption_key_revoked","message":"sealed under tenant key 3c1cc9efc79e1164, revoked"}}`)
	_, err = c.GetJob(ctx, "01JOB")
	require.True(t, client.IsEncryptionKeyRevoked(err), "%v", err)
	require.True(t, client.IsConflict(err))
	require.Equal(t, client.CodeEncryptionKeyRevoked, client.ErrorCode(err))
}

// TenantKeyID names a key as the API does (the vector is the shard's
// envelope.Key.ID of bytes 0..31), whichever way the key is written, and
// refuses what the API refuses.
func TestTenantKeyID(t *testing.T) {
	t.Parallel()
	for _, key := range []string{
		"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", // standard base64
		"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",  // without padding
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		" AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n", // as a file holds it
	} {
		id, err := client.TenantKeyID(key)
		require.NoError(t, err, key)
		require.Equal(t, "3c1cc9efc79e1164", id, key)
	}
	for _, bad := range []string{"", "c2hvcnQ=", "zz" + "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="} { // 32 zero bytes
		_, err := client.TenantKeyID(bad)
		require.True(t, errors.Is(err, client.ErrMalformedTenantKey), "%q: %v", bad, err)
	}
}
