package client_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

var created = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func TestNamespaces(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusCreated, `{"name":"emails","created_at":"2026-11-01T12:00:00Z"}`)
	c := rec.client(t)
	ns, err := c.CreateNamespace(context.Background(), "emails")
	require.NoError(t, err)
	require.Equal(t, &client.Namespace{Name: "emails", CreatedAt: created}, ns)
	rec.requireRequest(t, "POST", "/api/v1/namespaces", `{"name":"emails"}`)

	rec.respond(http.StatusOK, `{"namespaces":[{"name":"default","created_at":"2026-11-01T12:00:00Z"}]}`)
	list, err := c.ListNamespaces(context.Background())
	require.NoError(t, err)
	require.Equal(t, []client.Namespace{{Name: "default", CreatedAt: created}}, list)
	rec.requireRequest(t, "GET", "/api/v1/namespaces", "")
}

func TestKeys(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusCreated, `{"id":"key_1","key":"jwt","name":"ci","role":"producer",
		"namespaces":["emails"],"created_at":"2026-11-01T12:00:00Z"}`)
	c := rec.client(t)
	k, err := c.CreateKey(context.Background(), client.CreateKeyRequest{
		Name: "ci", Role: wire.RoleProducer, Namespaces: []string{"emails"},
	})
	require.NoError(t, err)
	require.Equal(t, &client.CreatedKey{Token: "jwt", Key: client.Key{
		ID: "key_1", Name: "ci", Role: string(wire.RoleProducer), Namespaces: []string{"emails"}, CreatedAt: created,
	}}, k)
	rec.requireRequest(t, "POST", "/api/v1/keys", `{"name":"ci","role":"producer","namespaces":["emails"]}`)

	rec.respond(http.StatusOK, `{"keys":[{"id":"key_1","name":"ci","role":"producer",
		"namespaces":["emails"],"created_at":"2026-11-01T12:00:00Z","revoked_at":"2026-11-01T12:00:00Z"}]}`)
	keys, err := c.ListKeys(context.Background())
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.Equal(t, &created, keys[0].RevokedAt)
	rec.requireRequest(t, "GET", "/api/v1/keys", "")

	rec.respond(http.StatusNoContent, "")
	require.NoError(t, c.DeleteKey(context.Background(), "key_1"))
	rec.requireRequest(t, "DELETE", "/api/v1/keys/key_1", "")

	rec.respond(http.StatusNotFound, `{"error":{"code":"not_found","message":"no such key"}}`)
	require.True(t, client.IsNotFound(c.DeleteKey(context.Background(), "key_2")))
}

func TestKeyExpiry(t *testing.T) {
	t.Parallel()
	exp := created.Add(time.Hour)
	rec := newRecorder(t, http.StatusCreated, `{"id":"key_1","key":"jwt","name":"ci","role":"producer",
		"namespaces":["emails"],"created_at":"2026-11-01T12:00:00Z","expires_at":"2026-11-01T13:00:00Z"}`)
	c := rec.client(t)
	k, err := c.CreateKey(context.Background(), client.CreateKeyRequest{
		Name: "ci", Role: wire.RoleProducer, Namespaces: []string{"emails"}, ExpiresAt: &exp,
	})
	require.NoError(t, err)
	require.Equal(t, &exp, k.ExpiresAt)
	rec.requireRequest(t, "POST", "/api/v1/keys",
		`{"name":"ci","role":"producer","namespaces":["emails"],"expires_at":"2026-11-01T13:00:00Z"}`)

	rec.respond(http.StatusOK, `{"keys":[{"id":"key_1","name":"ci","role":"producer","namespaces":["emails"],
		"created_at":"2026-11-01T12:00:00Z","expires_at":"2026-11-01T13:00:00Z"},
		{"id":"key_2","name":"ci","role":"producer","namespaces":["emails"],"created_at":"2026-11-01T12:00:00Z"}]}`)
	keys, err := c.ListKeys(context.Background())
	require.NoError(t, err)
	require.Len(t, keys, 2)
	require.Equal(t, &exp, keys[0].ExpiresAt)
	require.Nil(t, keys[1].ExpiresAt)

	// A zero time is refused, not left out: left out would mean "never
	// expires".
	rec.respond(http.StatusCreated, `{}`)
	_, err = c.CreateKey(context.Background(), client.CreateKeyRequest{
		Name: "bad", Role: wire.RoleProducer, Namespaces: []string{"emails"}, ExpiresAt: &time.Time{},
	})
	require.ErrorContains(t, err, "zero time")
	rec.requireRequest(t, "GET", "/api/v1/keys", "") // the list was the last request
}

func TestTenants(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusCreated, `{"tenant":{"id":"t_1","name":"acme","created_at":"2026-11-01T12:00:00Z"},
		"namespace":"default","owner_key":"jwt"}`)
	c := rec.client(t)
	tn, err := c.CreateTenant(context.Background(), "acme")
	require.NoError(t, err)
	require.Equal(t, &client.CreatedTenant{
		Tenant: client.Tenant{ID: "t_1", Name: "acme", CreatedAt: created}, Namespace: "default", OwnerKey: "jwt",
	}, tn)
	rec.requireRequest(t, "POST", "/control/v1/tenants", `{"name":"acme"}`)

	rec.respond(http.StatusOK, `{"tenants":[{"id":"t_1","name":"acme","created_at":"2026-11-01T12:00:00Z"}]}`)
	list, err := c.ListTenants(context.Background())
	require.NoError(t, err)
	require.Equal(t, []client.Tenant{{ID: "t_1", Name: "acme", CreatedAt: created}}, list)
}
