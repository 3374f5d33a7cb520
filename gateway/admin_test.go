package gateway

import (
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func TestAdminNamespaces(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")

	// A miss cached before creation must not hide the new namespace.
	b.do(t, http.MethodPost, "/api/v1/enqueue", owner, enqueueBody, wire.NamespaceHeader, "sms").
		requireError(t, http.StatusNotFound, apierr.NotFound)
	r := b.do(t, http.MethodPost, "/api/v1/namespaces", owner, map[string]any{"name": "sms"})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"name":"sms","description":"","deletion_protection":false,"created_at":"2026-01-02T00:00:00Z"}`, string(r.body))

	b.do(t, http.MethodPost, "/api/v1/namespaces", owner, map[string]any{"name": "sms"}).
		requireError(t, http.StatusConflict, apierr.Conflict)
	e := b.do(t, http.MethodPost, "/api/v1/namespaces", owner, map[string]any{"name": "Bad Name"}).
		requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "name", e.Field)
	b.do(t, http.MethodPost, "/api/v1/namespaces", owner, []byte(`{"name":`)).
		requireError(t, http.StatusBadRequest, apierr.InvalidJSON)
	e = b.do(t, http.MethodPost, "/api/v1/namespaces", owner, map[string]any{"name": "other", "region": "eu"}).
		requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "region", e.Field, "an unknown field is refused, as everywhere")

	var list struct {
		Namespaces []map[string]any `json:"namespaces"`
	}
	r = b.do(t, http.MethodGet, "/api/v1/namespaces", owner, nil)
	require.Equal(t, http.StatusOK, r.status)
	r.decode(t, &list)
	require.Len(t, list.Namespaces, 3)
	for _, ns := range list.Namespaces {
		require.ElementsMatch(t, []string{"name", "description", "deletion_protection", "created_at"}, keysOf(ns), "no shard details for tenants")
	}

	r = b.do(t, http.MethodGet, "/api/v1/namespaces", b.key(t, tenancy.RoleViewer, "emails"), nil)
	require.Equal(t, http.StatusOK, r.status)
	r.decode(t, &list)
	require.Len(t, list.Namespaces, 1)
	require.Equal(t, "emails", list.Namespaces[0]["name"])

	b.do(t, http.MethodPost, "/api/v1/namespaces", b.key(t, tenancy.RoleDeveloper, "*"), map[string]any{"name": "x"}).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodPost, "/api/v1/namespaces", b.key(t, tenancy.RoleAdmin, "emails"), map[string]any{"name": "x"}).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestAdminKeyDelegation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.key(t, tenancy.RoleAdmin, "*")
	adminEmails := b.key(t, tenancy.RoleAdmin, "emails")
	newKey := func(role string, nss ...string) map[string]any {
		m := map[string]any{"name": "ci", "role": role}
		if nss != nil {
			m["namespaces"] = nss
		}
		return m
	}
	cases := []struct {
		name   string
		caller string
		body   any
		status int
		code   apierr.Code
	}{
		{"admin cannot mint owner", admin, newKey("owner"), http.StatusForbidden, apierr.Forbidden},
		{"producer cannot mint keys", b.key(t, tenancy.RoleProducer, "*"), newKey("producer"), http.StatusForbidden, apierr.Forbidden},
		{"developer cannot mint keys", b.key(t, tenancy.RoleDeveloper, "*"), newKey("viewer"), http.StatusForbidden, apierr.Forbidden},
		{"namespace beyond the caller's", adminEmails, newKey("producer", "default"), http.StatusForbidden, apierr.Forbidden},
		{"all namespaces beyond the caller's", adminEmails, newKey("producer", "*"), http.StatusForbidden, apierr.Forbidden},
		{"unknown role", admin, newKey("root"), http.StatusBadRequest, apierr.BadRequest},
		{"operator role", admin, newKey("operator"), http.StatusBadRequest, apierr.BadRequest},
		{"bad name", admin, map[string]any{"name": "", "role": "viewer"}, http.StatusBadRequest, apierr.BadRequest},
		{"empty namespaces", admin, newKey("viewer", []string{}...), http.StatusBadRequest, apierr.BadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b.do(t, http.MethodPost, "/api/v1/keys", tc.caller, tc.body).requireError(t, tc.status, tc.code)
		})
	}
	require.Empty(t, b.control.TenantKeys(tenantA), "no refused request reached control")

	r := b.do(t, http.MethodPost, "/api/v1/keys", adminEmails, newKey("producer"))
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.Equal(t, []string{"emails"}, b.control.LastKeyRequest().Namespaces, "omitted namespaces mean the caller's default")
	var created struct {
		ID, Key, Role string
		Namespaces    []string
	}
	r.decode(t, &created)
	require.NotEmpty(t, created.Key)
	require.Equal(t, "producer", created.Role)

	// The new key works at once, in its namespace only.
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", created.Key, enqueueBody).status)
	require.Equal(t, tenantA+"/emails", b.shard.last(t).Header.Get(wire.ShardNamespaceHeader))

	r = b.do(t, http.MethodPost, "/api/v1/keys", admin, newKey("admin", "*"))
	require.Equal(t, http.StatusCreated, r.status, "an admin may mint its own role")
	r = b.do(t, http.MethodPost, "/api/v1/keys", b.key(t, tenancy.RoleOwner, "*"), newKey("owner", "emails", "default", "emails"))
	require.Equal(t, http.StatusCreated, r.status)
	require.Equal(t, []string{"emails", "default"}, b.control.LastKeyRequest().Namespaces)
}

func TestAdminListAndDeleteKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.control.AddKey(tenantA, wire.Key{ID: "key_owner1", Name: "root", Role: string(tenancy.RoleOwner), Namespaces: []string{"*"}, CreatedAt: jan(1)})
	b.control.AddKey(tenantA, wire.Key{ID: "key_emails", Name: "mail", Role: string(tenancy.RoleProducer), Namespaces: []string{"emails"}, CreatedAt: jan(1)})
	b.control.AddKey(tenantA, wire.Key{ID: "key_dflt", Name: "dflt", Role: string(tenancy.RoleWorker), Namespaces: []string{"default"}, CreatedAt: jan(1)})
	b.control.AddKey(tenantB, wire.Key{ID: "key_b", Name: "b", Role: string(tenancy.RoleWorker), Namespaces: []string{"default"}, CreatedAt: jan(1)})

	var list struct {
		Keys []map[string]any `json:"keys"`
	}
	r := b.do(t, http.MethodGet, "/api/v1/keys", b.key(t, tenancy.RoleOwner, "*"), nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r.decode(t, &list)
	require.Len(t, list.Keys, 3)
	for _, k := range list.Keys {
		require.NotContains(t, k, "key", "key secrets are never listed")
	}

	adminEmails := b.key(t, tenancy.RoleAdmin, "emails")
	b.do(t, http.MethodGet, "/api/v1/keys", adminEmails, nil).decode(t, &list)
	require.Len(t, list.Keys, 1, "a key sees only keys within its namespaces")
	require.Equal(t, "key_emails", list.Keys[0]["id"])

	b.do(t, http.MethodGet, "/api/v1/keys", b.key(t, tenancy.RoleProducer, "*"), nil).
		requireError(t, http.StatusForbidden, apierr.Forbidden)

	admin := b.key(t, tenancy.RoleAdmin, "*")
	b.do(t, http.MethodDelete, "/api/v1/keys/key_owner1", admin, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodDelete, "/api/v1/keys/key_b", admin, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodDelete, "/api/v1/keys/key_nope", admin, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodDelete, "/api/v1/keys/key_dflt", adminEmails, nil).requireError(t, http.StatusNotFound, apierr.NotFound)

	r = b.do(t, http.MethodDelete, "/api/v1/keys/key_emails", adminEmails, nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	require.True(t, b.control.IsRevoked("key_emails"))
}

func TestAdminKeyExpiryPassesThrough(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)

	r := b.do(t, http.MethodPost, "/api/v1/keys", owner, map[string]any{"name": "short", "role": "producer", "expires_at": exp})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.JSONEq(t, `"`+exp+`"`, string(b.control.LastKeyRequest().ExpiresAt), "expires_at reaches control as sent")
	var created map[string]any
	r.decode(t, &created)
	require.Equal(t, exp, created["expires_at"])

	r = b.do(t, http.MethodPost, "/api/v1/keys", owner, map[string]any{"name": "forever", "role": "producer"})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.Nil(t, b.control.LastKeyRequest().ExpiresAt, "no expiry asked, none sent")

	e := b.do(t, http.MethodPost, "/api/v1/keys", owner, map[string]any{"name": "bad", "role": "producer", "expires_at": "tomorrow"}).
		requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "expires_at", e.Field, "control's verdict reaches the client with its field")

	var list struct {
		Keys []map[string]any `json:"keys"`
	}
	b.do(t, http.MethodGet, "/api/v1/keys", owner, nil).decode(t, &list)
	require.Len(t, list.Keys, 2)
	require.Equal(t, exp, list.Keys[0]["expires_at"])
	require.NotContains(t, list.Keys[1], "expires_at", "a key that never expires shows no expires_at")
}

func TestAdminShortLivedKeyCannotMintLongerLivedKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := claimsFor(tenantA, "key_short_admin", tenancy.RoleAdmin, "*")
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	c.ExpiresAt = jwt.NewNumericDate(until)
	short := b.signer.Sign(c)

	b.do(t, http.MethodPost, "/api/v1/keys", short, map[string]any{"name": "forever", "role": "producer"}).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	later := until.Add(time.Minute).Format(time.RFC3339)
	b.do(t, http.MethodPost, "/api/v1/keys", short, map[string]any{"name": "later", "role": "producer", "expires_at": later}).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	within := until.Add(-time.Minute).Format(time.RFC3339)
	r := b.do(t, http.MethodPost, "/api/v1/keys", short, map[string]any{"name": "within", "role": "producer", "expires_at": within})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
}
