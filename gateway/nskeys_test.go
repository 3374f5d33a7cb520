package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func TestNamespaceObject(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.control.AddNamespace(tenantB, "secret", "s1", b.shard.addr())
	owner := b.key(t, tenancy.RoleOwner, "*")
	b.shard.setHandler(settingsShard(http.StatusOK))
	b.control.PlaceNewOn(b.shard.addr())

	r := b.do(t, http.MethodPost, "/api/v1/namespaces", owner, map[string]any{"name": "sms", "description": "texts",
		"retention": "72h", "deletion_protection": true})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"name":"sms","description":"texts","retention":"72h","deletion_protection":true,"created_at":"2026-01-02T00:00:00Z"}`,
		string(r.body))
	put := b.shard.last(t)
	require.Equal(t, "PUT /api/v1/namespace", put.Method+" "+put.URI, "the shard applies the retention")
	require.Equal(t, tenantA+"/sms", put.Header.Get(wire.ShardNamespaceHeader))
	require.JSONEq(t, `{"retention":"72h"}`, put.Body)
	seen := b.shard.count()
	r = b.do(t, http.MethodGet, "/api/v1/namespaces/sms", owner, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"name":"sms","description":"texts","retention":"72h","deletion_protection":true,"created_at":"2026-01-02T00:00:00Z"}`,
		string(r.body), "no shard details for tenants")

	// A key sees only its namespaces; another tenant's is not found.
	viewer := b.key(t, tenancy.RoleViewer, "emails")
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/api/v1/namespaces/emails", viewer, nil).status)
	b.do(t, http.MethodGet, "/api/v1/namespaces/default", viewer, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	for _, method := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
		b.do(t, method, "/api/v1/namespaces/secret", owner, map[string]any{}).requireError(t, http.StatusNotFound, apierr.NotFound)
		b.do(t, method, "/api/v1/namespaces/nope", owner, map[string]any{}).requireError(t, http.StatusNotFound, apierr.NotFound)
		e := b.do(t, method, "/api/v1/namespaces/Bad_Name", owner, map[string]any{}).requireError(t, http.StatusBadRequest, apierr.BadRequest)
		require.Equal(t, "name", e.Field)
		// Roles: a producer may not even read them; a developer may read only.
		b.do(t, method, "/api/v1/namespaces/default", b.key(t, tenancy.RoleProducer, "*"), map[string]any{}).
			requireError(t, http.StatusForbidden, apierr.Forbidden)
		if method != http.MethodGet {
			b.do(t, method, "/api/v1/namespaces/default", b.key(t, tenancy.RoleDeveloper, "*"), map[string]any{}).
				requireError(t, http.StatusForbidden, apierr.Forbidden)
		}
	}
	require.Equal(t, seen, b.shard.count(), "nothing else reached the shard")
}

func TestNamespacePatchPassesFieldsAsSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.key(t, tenancy.RoleAdmin, "*")
	b.shard.setHandler(settingsShard(http.StatusOK))

	r := b.do(t, http.MethodPatch, "/api/v1/namespaces/emails", admin, []byte(`{"description":"mail","retention":null}`))
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	sent := b.control.LastPatchRequest()
	require.JSONEq(t, `"mail"`, string(sent.Description))
	require.Equal(t, "null", string(sent.Retention), "null reaches control: it removes the field")
	require.Empty(t, sent.DeletionProtection, "absent stays absent: it changes nothing")
	var ns wire.Namespace
	r.decode(t, &ns)
	require.Equal(t, "mail", ns.Description)

	e := b.do(t, http.MethodPatch, "/api/v1/namespaces/emails", admin, map[string]any{"region": "eu"}).
		requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "region", e.Field)
	e = b.do(t, http.MethodPatch, "/api/v1/namespaces/emails", admin, map[string]any{"description": 5}).
		requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "description", e.Field, "control's verdict comes back with its field")
	b.do(t, http.MethodPatch, "/api/v1/namespaces/emails", admin, nil).requireError(t, http.StatusBadRequest, apierr.InvalidJSON)
}

// settingsShard answers PUT /api/v1/namespace with status (the usage when
// 200), and anything else as created does.
func settingsShard(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method+" "+r.URL.Path != "PUT /api/v1/namespace" {
			created(w, r)
			return
		}
		if status != http.StatusOK {
			w.WriteHeader(status)
			return
		}
		var in wire.NamespaceSettings
		_ = json.NewDecoder(r.Body).Decode(&in)
		writeJSON(w, http.StatusOK, wire.NamespaceUsage{Retention: in.Retention})
	}
}

// A namespace's retention reaches its shard before control: PATCH sends
// it first, and when the shard cannot take it control is left as it was;
// a create whose shard fails leaves the namespace without one anywhere.
func TestNamespaceRetentionReachesTheShard(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.key(t, tenancy.RoleAdmin, "*")
	b.shard.setHandler(settingsShard(http.StatusOK))
	b.control.PlaceNewOn(b.shard.addr())

	r := b.do(t, http.MethodPatch, "/api/v1/namespaces/emails", admin, map[string]any{"retention": "24h"})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	put := b.shard.last(t)
	require.Equal(t, "PUT /api/v1/namespace", put.Method+" "+put.URI)
	require.Equal(t, tenantA+"/emails", put.Header.Get(wire.ShardNamespaceHeader))
	require.JSONEq(t, `{"retention":"24h"}`, put.Body)
	require.Equal(t, "24h", b.control.NamespaceSettings(tenantA, "emails").Retention)

	// Not sent, not asked; a bad one is refused before anything changes.
	seen := b.shard.count()
	require.Equal(t, http.StatusOK, b.do(t, http.MethodPatch, "/api/v1/namespaces/emails", admin, map[string]any{"description": "d"}).status)
	e := b.do(t, http.MethodPatch, "/api/v1/namespaces/emails", admin, map[string]any{"retention": "5s"}).
		requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "retention", e.Field)
	require.Equal(t, seen, b.shard.count())

	// The shard fails: 503 with Retry-After, control unchanged.
	b.shard.setHandler(settingsShard(http.StatusInternalServerError))
	r = b.do(t, http.MethodPatch, "/api/v1/namespaces/emails", admin, []byte(`{"retention":null,"description":"x"}`))
	r.requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.NotEmpty(t, r.header.Get("Retry-After"))
	require.Equal(t, "24h", b.control.NamespaceSettings(tenantA, "emails").Retention)
	require.Equal(t, "d", b.control.NamespaceSettings(tenantA, "emails").Description)

	// Control refuses the update: the shard gets control's retention back.
	b.shard.setHandler(settingsShard(http.StatusOK))
	b.do(t, http.MethodPatch, "/api/v1/namespaces/emails", admin, map[string]any{"retention": "1h", "description": 5}).
		requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.JSONEq(t, `{"retention":"24h"}`, b.shard.last(t).Body)

	// Reset to null: the shard is told null.
	r = b.do(t, http.MethodPatch, "/api/v1/namespaces/emails", admin, []byte(`{"retention":null}`))
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"retention":null}`, b.shard.last(t).Body)
	require.Empty(t, b.control.NamespaceSettings(tenantA, "emails").Retention)

	// A create whose shard fails: 503, the namespace kept without retention.
	b.shard.setHandler(settingsShard(http.StatusInternalServerError))
	r = b.do(t, http.MethodPost, "/api/v1/namespaces", admin, map[string]any{"name": "sms", "retention": "72h"})
	e = r.requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.Contains(t, e.Message, "PATCH")
	require.True(t, b.control.HasNamespace(tenantA, "sms"))
	require.Empty(t, b.control.NamespaceSettings(tenantA, "sms").Retention)
	// A create without retention does not ask the shard.
	seen = b.shard.count()
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/namespaces", admin, map[string]any{"name": "push"}).status)
	require.Equal(t, seen, b.shard.count())
}

// namespaceShard answers the gateway's questions about a namespace as a
// whole with held, and counts the deletes.
func namespaceShard(held wire.NamespaceUsage, deleteStatus int, deletes *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /api/v1/namespace":
			writeJSON(w, http.StatusOK, held)
		case "DELETE /api/v1/namespace":
			deletes.Add(1)
			w.WriteHeader(deleteStatus)
		default:
			created(w, r)
		}
	}
}

func TestDeleteNamespace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.key(t, tenancy.RoleAdmin, "*")
	var deletes atomic.Int64
	b.shard.setHandler(namespaceShard(wire.NamespaceUsage{Jobs: 12, Queues: 2, Schedules: 1}, http.StatusNoContent, &deletes))

	b.control.Protect(tenantA, "emails", true)
	b.do(t, http.MethodDelete, "/api/v1/namespaces/emails?force=true", admin, nil).
		requireError(t, http.StatusConflict, apierr.DeletionProtected)
	require.Zero(t, b.shard.count(), "a protected namespace's shard is not asked")
	b.control.Protect(tenantA, "emails", false)
	b.control.Move(tenantA, "emails", true)
	e := b.do(t, http.MethodDelete, "/api/v1/namespaces/emails?force=true", admin, nil).requireError(t, http.StatusConflict, apierr.Conflict)
	require.Contains(t, e.Message, "being moved")
	require.Zero(t, b.shard.count(), "a moving namespace's shard is not asked")
	b.control.Move(tenantA, "emails", false)

	e = b.do(t, http.MethodDelete, "/api/v1/namespaces/emails", admin, nil).requireError(t, http.StatusConflict, apierr.NamespaceNotEmpty)
	require.Contains(t, e.Message, "12 jobs, 2 queues and 1 schedules")
	require.Contains(t, e.Message, "force=true")
	e = b.do(t, http.MethodDelete, "/api/v1/namespaces/emails?force=maybe", admin, nil).requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "force", e.Field)
	require.Zero(t, deletes.Load())
	require.True(t, b.control.HasNamespace(tenantA, "emails"))
	asked := b.shard.last(t)
	require.Equal(t, "GET", asked.Method)
	require.Equal(t, tenantA+"/emails", asked.Header.Get(wire.ShardNamespaceHeader))

	// The shard's delete fails: control keeps the namespace, the client may retry.
	b.shard.setHandler(namespaceShard(wire.NamespaceUsage{Jobs: 12}, http.StatusInternalServerError, &deletes))
	b.do(t, http.MethodDelete, "/api/v1/namespaces/emails?force=true", admin, nil).
		requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.True(t, b.control.HasNamespace(tenantA, "emails"))

	b.shard.setHandler(namespaceShard(wire.NamespaceUsage{Jobs: 12}, http.StatusNoContent, &deletes))
	r := b.do(t, http.MethodDelete, "/api/v1/namespaces/emails?force=true", admin, nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	gone := b.shard.last(t)
	require.Equal(t, "DELETE /api/v1/namespace", gone.Method+" "+gone.URI)
	require.Equal(t, tenantA+"/emails", gone.Header.Get(wire.ShardNamespaceHeader))
	require.False(t, b.control.HasNamespace(tenantA, "emails"))
	b.do(t, http.MethodPost, "/api/v1/enqueue", admin, enqueueBody, wire.NamespaceHeader, "emails").
		requireError(t, http.StatusNotFound, apierr.NotFound)

	// An empty namespace needs no force, and is emptied all the same.
	b.shard.setHandler(namespaceShard(wire.NamespaceUsage{}, http.StatusNoContent, &deletes))
	before := deletes.Load()
	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodDelete, "/api/v1/namespaces/default", admin, nil).status)
	require.Equal(t, before+1, deletes.Load())
	require.True(t, b.control.HasNamespace(tenantB, "default"), "another tenant's namesake stays")
}

// A namespace on a self-hosted shard no node joined holds nothing: its
// delete asks no shard and removes control's record; its namesake of
// another tenant stays, and deletion protection still holds.
func TestDeleteNamespaceOnUnjoinedShard(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.key(t, tenancy.RoleAdmin, "*")
	var deletes atomic.Int64
	b.shard.setHandler(namespaceShard(wire.NamespaceUsage{}, http.StatusInternalServerError, &deletes))
	b.control.Unjoin(tenantA, "emails")
	b.control.Protect(tenantA, "emails", true)
	b.do(t, http.MethodDelete, "/api/v1/namespaces/emails", admin, nil).
		requireError(t, http.StatusConflict, apierr.DeletionProtected)
	b.control.Protect(tenantA, "emails", false)
	r := b.do(t, http.MethodDelete, "/api/v1/namespaces/emails", admin, nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	require.Zero(t, b.shard.count(), "no shard is asked")
	require.False(t, b.control.HasNamespace(tenantA, "emails"))
	// Joined (as default is): the shard is asked, and here fails.
	b.do(t, http.MethodDelete, "/api/v1/namespaces/default", admin, nil).
		requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.True(t, b.control.HasNamespace(tenantA, "default"))
	require.True(t, b.control.HasNamespace(tenantB, "default"))
}

// A retention for a namespace on a self-hosted shard no node joined is
// refused (409 on retention) before the shard or control is asked; null
// (none, as it has) asks no shard either, and other fields still change.
func TestNamespaceRetentionOnUnjoinedShard(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.key(t, tenancy.RoleAdmin, "*")
	b.shard.setHandler(settingsShard(http.StatusOK))
	b.control.Unjoin(tenantA, "emails")

	e := b.do(t, http.MethodPatch, "/api/v1/namespaces/emails", admin, map[string]any{"retention": "24h", "description": "d"}).
		requireError(t, http.StatusConflict, apierr.Conflict)
	require.Equal(t, "retention", e.Field)
	require.Contains(t, e.Message, "joined")
	require.Zero(t, b.shard.count(), "no shard is asked")
	require.Empty(t, b.control.NamespaceSettings(tenantA, "emails").Retention)
	require.Empty(t, b.control.NamespaceSettings(tenantA, "emails").Description, "nothing changed")

	r := b.do(t, http.MethodPatch, "/api/v1/namespaces/emails", admin, []byte(`{"retention":null,"description":"d"}`))
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Zero(t, b.shard.count(), "no shard is asked")
	require.Equal(t, "d", b.control.NamespaceSettings(tenantA, "emails").Description)

	// A namespace on a joined shard still takes its retention there.
	r = b.do(t, http.MethodPatch, "/api/v1/namespaces/default", admin, map[string]any{"retention": "24h"})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, 1, b.shard.count())
	require.Equal(t, "24h", b.control.NamespaceSettings(tenantA, "default").Retention)
}

func TestGetAndRotateKey(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, func(c *Config) { c.Clock = clk })
	b.control.AddKey(tenantA, wire.Key{ID: "key_owner1", Name: "root", Role: "owner", Namespaces: []string{"*"}, CreatedAt: jan(1)})
	b.control.AddKey(tenantA, wire.Key{ID: "key_dflt", Name: "dflt", Role: "producer", Namespaces: []string{"default"}, CreatedAt: jan(1)})
	b.control.AddKey(tenantB, wire.Key{ID: "key_b", Name: "b", Role: "worker", Namespaces: []string{"default"}, CreatedAt: jan(1)})
	dfltToken := b.signer.Sign(claimsFor(tenantA, "key_dflt", tenancy.RoleProducer, "default"))
	admin := b.key(t, tenancy.RoleAdmin, "*")
	adminEmails := b.key(t, tenancy.RoleAdmin, "emails")

	r := b.do(t, http.MethodGet, "/api/v1/keys/key_dflt", admin, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"id":"key_dflt","name":"dflt","description":"","role":"producer","namespaces":["default"],"created_at":"2026-01-01T00:00:00Z"}`,
		string(r.body))
	b.do(t, http.MethodGet, "/api/v1/keys/key_dflt", adminEmails, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodGet, "/api/v1/keys/key_b", admin, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodGet, "/api/v1/keys/key_dflt", b.key(t, tenancy.RoleProducer, "*"), nil).requireError(t, http.StatusForbidden, apierr.Forbidden)

	// Never more than the caller holds.
	b.do(t, http.MethodPost, "/api/v1/keys/key_owner1/rotate", admin, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodPost, "/api/v1/keys/key_dflt/rotate", adminEmails, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodPost, "/api/v1/keys/key_b/rotate", admin, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodPost, "/api/v1/keys/key_dflt/rotate", b.key(t, tenancy.RoleDeveloper, "*"), nil).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	short := claimsFor(tenantA, "key_short", tenancy.RoleAdmin, "*")
	short.ExpiresAt = jwt.NewNumericDate(clk.Now().Add(time.Hour))
	e := b.do(t, http.MethodPost, "/api/v1/keys/key_dflt/rotate", b.signer.Sign(short), nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Contains(t, e.Message, "expire no later")
	e = b.do(t, http.MethodPost, "/api/v1/keys/key_dflt/rotate", admin, map[string]any{"grace": "1h"}).requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "grace", e.Field)

	r = b.do(t, http.MethodPost, "/api/v1/keys/key_dflt/rotate", admin, map[string]any{"grace_period": "2s"})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var rotated wire.RotatedKey
	r.decode(t, &rotated)
	require.Equal(t, "key_dflt", rotated.ID)
	require.NotEmpty(t, rotated.Token)

	// Both secrets work during the grace period, only the new one after.
	enqueue := func(key string) reply { return b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody) }
	tick(t, clk, time.Second) // the gateway fetches the list with the rotation
	require.Equal(t, http.StatusCreated, enqueue(rotated.Token).status)
	require.Equal(t, http.StatusCreated, enqueue(dfltToken).status)
	for clk.Now().Before(rotated.PreviousKeyValidUntil) {
		tick(t, clk, 500*time.Millisecond)
		if clk.Now().Before(rotated.PreviousKeyValidUntil) {
			require.Equal(t, http.StatusCreated, enqueue(dfltToken).status, "in its grace period")
		}
	}
	e = enqueue(dfltToken).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Contains(t, e.Message, "rotated")
	require.Contains(t, e.Message, "grace period ended")
	require.Equal(t, http.StatusCreated, enqueue(rotated.Token).status)

	// A token of a generation the list has no grace for is refused; one
	// with a malformed generation too.
	again := claimsFor(tenantA, "key_dflt", tenancy.RoleProducer, "default")
	for _, jti := range []string{"01", "x", "-1"} {
		again.ID = jti
		e := enqueue(b.signer.Sign(again)).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
		require.Contains(t, e.Message, "invalid", jti)
	}
	again.ID = "7"
	require.Equal(t, http.StatusCreated, enqueue(b.signer.Sign(again)).status, "a rotation the list does not show yet")
}

func TestKeyUsageIsReported(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClock()
	b := setup(t, func(c *Config) { c.Clock = clk })
	producer := b.key(t, tenancy.RoleProducer, "default")
	worker := b.key(t, tenancy.RoleWorker, "default")
	fetch := map[string]any{"queues": []string{"q"}, "timeout": 0}

	first := clk.Now()
	for range 3 {
		require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", producer, enqueueBody).status)
		clk.Advance(time.Second)
	}
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/fetch", worker, fetch).status)
	tick(t, clk, 30*time.Second)
	uses := b.control.KeyUses()
	require.ElementsMatch(t, []wire.KeyUse{
		{TenantID: tenantA, KeyID: "key_producer", At: first.UTC()},
		{TenantID: tenantA, KeyID: "key_worker", At: first.Add(3 * time.Second).UTC()},
	}, uses, "each key once a report, at its first use since the last")

	tick(t, clk, 30*time.Second)
	require.Len(t, b.control.KeyUses(), 2, "nothing used, nothing reported")
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", producer, enqueueBody).status)
	tick(t, clk, 30*time.Second)
	uses = b.control.KeyUses()
	require.Len(t, uses, 3)
	require.Equal(t, "key_producer", uses[2].KeyID)

	// Refused keys are not used keys; what is left goes when the gateway stops.
	b.control.Revoke("key_worker")
	tick(t, clk, time.Second)
	b.do(t, http.MethodPost, "/api/v1/fetch", worker, fetch).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", b.key(t, tenancy.RoleOwner, "*"), enqueueBody).status)
	require.NoError(t, b.gw.Stop())
	uses = b.control.KeyUses()
	require.Len(t, uses, 4)
	require.Equal(t, "key_owner", uses[3].KeyID)
}

// A signing key that retires stops vouching for the keys it signed at its
// time, cached or not, before the gateway fetches the JWKS without it.
func TestRetiredSigningKeyRefusesItsKeys(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, func(c *Config) { c.Clock = clk })
	next := newSigner(t, "sig-2")
	b.control.SetJWKS([]tenancy.JWK{b.signer.JWK(), next.JWK()}, false)
	old := b.key(t, tenancy.RoleProducer, "default")
	fresh := next.Sign(claimsFor(tenantA, "key_fresh", tenancy.RoleProducer, "default"))
	enqueue := func(key string) reply { return b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody) }
	require.Equal(t, http.StatusCreated, enqueue(old).status)
	clk.Advance(time.Second) // past JWKSMinRefresh since the first fetch
	require.Equal(t, http.StatusCreated, enqueue(fresh).status, "a new kid is fetched at once")

	b.control.Retire("sig-1", clk.Now().Add(3*time.Second))
	tick(t, clk, time.Second)
	require.Equal(t, http.StatusCreated, enqueue(old).status, "until it retires")
	tick(t, clk, 2*time.Second)
	e := enqueue(old).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Contains(t, e.Message, "retired")
	require.Equal(t, http.StatusCreated, enqueue(fresh).status)
}

// A key signed by a new signing key right after a JWKS fetch waits for
// the next fetch the rate limit allows instead of being refused; the
// requests that waited share that one fetch.
func TestNewKidWaitsForTheNextAllowedFetch(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.JWKSInterval = time.Hour; c.JWKSMinRefresh = 300 * time.Millisecond })
	require.NoError(t, b.gw.gate.RefreshKeys(t.Context()))
	before := b.control.JWKSCalls.Load()
	next := newSigner(t, "sig-2")
	b.control.SetJWKS([]tenancy.JWK{b.signer.JWK(), next.JWK()}, false)

	statuses := make(chan int, 4)
	for i := range cap(statuses) {
		key := next.Sign(claimsFor(tenantA, fmt.Sprintf("key_%d", i), tenancy.RoleProducer, "default"))
		go func() { // b.do would call require off the test's goroutine
			req, _ := http.NewRequest(http.MethodPost, b.base+"/api/v1/enqueue", strings.NewReader(`{"queue":"q","payload":1}`))
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := b.http.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	for range cap(statuses) {
		require.Equal(t, http.StatusCreated, <-statuses)
	}
	require.Equal(t, int64(1), b.control.JWKSCalls.Load()-before, "one fetch for all of them")
}
