package gateway

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func perm(actions, nss, queues []string) wire.Permission {
	return wire.Permission{Actions: actions, Namespaces: nss, Queues: queues}
}

var emailsSupport = []wire.Permission{perm([]string{"job.enqueue", "job.work", "job.read"}, []string{"emails"}, []string{"emails.*"})}

func roleBody(name string, ps ...wire.Permission) wire.RoleRequest {
	return wire.RoleRequest{Name: name, Description: "d", Permissions: ps}
}

func TestRolesThroughTheGateway(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")

	r := b.do(t, http.MethodPost, "/api/v1/roles", owner, roleBody("support", emailsSupport...))
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"name":"support","description":"d","builtin":false,"created_at":"2026-01-04T00:00:00Z","updated_at":"2026-01-04T00:00:00Z",
		"permissions":[{"actions":["job.enqueue","job.work","job.read"],"namespaces":["emails"],"queues":["emails.*"]}]}`, string(r.body))
	require.JSONEq(t, string(r.body), string(b.do(t, http.MethodGet, "/api/v1/roles/support", owner, nil).body))

	// The list: the built-in roles, read-only, then the tenant's own.
	var list wire.RoleList
	b.do(t, http.MethodGet, "/api/v1/roles", owner, nil).decode(t, &list)
	require.Len(t, list.Roles, len(tenancy.TenantRoles)+1)
	for i, role := range tenancy.TenantRoles {
		require.Equal(t, string(role), list.Roles[i].Name)
		require.True(t, list.Roles[i].Builtin)
		require.NotEmpty(t, list.Roles[i].Description)
		require.Nil(t, list.Roles[i].CreatedAt)
	}
	require.Equal(t, []wire.Permission{perm([]string{"*"}, []string{"*"}, []string{"*"})}, list.Roles[0].Permissions, "owner")
	require.Equal(t, []wire.Permission{perm([]string{"job.enqueue"}, []string{"*"}, []string{"*"}), perm([]string{"job.read"}, []string{"*"}, []string{"*"}),
		perm([]string{"queue.read"}, []string{"*"}, []string{"*"})}, list.Roles[3].Permissions, "producer")
	require.Equal(t, "support", list.Roles[len(list.Roles)-1].Name)
	var producer wire.Role
	b.do(t, http.MethodGet, "/api/v1/roles/producer", owner, nil).decode(t, &producer)
	require.Equal(t, list.Roles[3], producer)

	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		e := b.do(t, method, "/api/v1/roles/admin", owner, roleBody("", emailsSupport...)).requireError(t, http.StatusConflict, apierr.Conflict)
		require.Contains(t, e.Message, `"admin" is built in`)
	}

	// PUT replaces it; DELETE removes it.
	r = b.do(t, http.MethodPut, "/api/v1/roles/support", owner, wire.RoleRequest{Permissions: emailsSupport[:1]})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodDelete, "/api/v1/roles/support", owner, nil).status)
	b.do(t, http.MethodGet, "/api/v1/roles/support", owner, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodPut, "/api/v1/roles/support", owner, roleBody("", emailsSupport...)).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodDelete, "/api/v1/roles/support", owner, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
}

func TestRoleFieldsAndRights(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")
	all := []string{"*"}
	for _, bad := range []struct {
		body  any
		field string
	}{
		{roleBody("Bad_Name", perm(all, all, all)), "name"},
		{roleBody("viewer", perm(all, all, all)), "name"},
		{roleBody("a"), "permissions"},
		{roleBody("a", perm([]string{"job.fly"}, all, all)), "permissions[0].actions[0]"},
		{roleBody("a", perm(all, all, all), perm(all, []string{"a*b"}, all)), "permissions[1].namespaces[0]"},
		{roleBody("a", perm(all, all, []string{"emails send"})), "permissions[0].queues[0]"},
		{map[string]any{"name": "a", "permissions": emailsSupport, "builtin": true}, "builtin"},
	} {
		e := b.do(t, http.MethodPost, "/api/v1/roles", owner, bad.body).requireError(t, http.StatusBadRequest, apierr.BadRequest)
		require.Equal(t, bad.field, e.Field, "%+v", bad.body)
	}
	e := b.do(t, http.MethodGet, "/api/v1/roles/Bad_Name", owner, nil).requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "name", e.Field)
	b.control.SetRole(tenantA, "support", emailsSupport...)
	e = b.do(t, http.MethodPut, "/api/v1/roles/support", owner, roleBody("other", emailsSupport...)).requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "name", e.Field)

	// Roles are the key actions': a developer or a producer may not even
	// read them, a viewer-like custom role neither.
	for _, role := range []tenancy.Role{tenancy.RoleProducer, tenancy.RoleDeveloper, tenancy.RoleViewer} {
		k := b.key(t, role, "*")
		b.do(t, http.MethodGet, "/api/v1/roles", k, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
		b.do(t, http.MethodPost, "/api/v1/roles", k, roleBody("mine", emailsSupport...)).requireError(t, http.StatusForbidden, apierr.Forbidden)
		b.do(t, http.MethodDelete, "/api/v1/roles/support", k, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	}
	custom := b.customKey(t, "support", "emails")
	b.do(t, http.MethodGet, "/api/v1/roles", custom, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)

	// Another tenant's roles are not there at all.
	b.control.SetRole(tenantB, "secret", emailsSupport...)
	bOwner := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		b.do(t, method, "/api/v1/roles/secret", owner, roleBody("", emailsSupport...)).requireError(t, http.StatusNotFound, apierr.NotFound)
	}
	r := b.do(t, http.MethodGet, "/api/v1/roles", owner, nil)
	require.NotContains(t, string(r.body), "secret")
	require.Contains(t, string(b.do(t, http.MethodGet, "/api/v1/roles", bOwner, nil).body), "secret")
	b.do(t, http.MethodGet, "/api/v1/roles/support", bOwner, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodPost, "/api/v1/keys", bOwner, map[string]any{"name": "k", "role": "support", "namespaces": []string{"default"}}).
		requireError(t, http.StatusBadRequest, apierr.BadRequest)
}

// customKey signs a key of tenant A with custom role over namespaces.
func (b *bundle) customKey(t testing.TB, role string, nss ...string) string {
	return b.signer.Sign(claimsFor(tenantA, "key_"+role, tenancy.Role(role), nss...))
}

func TestCustomRoleCannotExceedItsGrant(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// A key manager for emails' mail queues.
	b.control.SetRole(tenantA, "mail-admin",
		perm([]string{"key.*"}, []string{"emails"}, []string{"*"}),
		perm([]string{"job.*"}, []string{"emails"}, []string{"emails.*"}))
	b.control.SetRole(tenantA, "reader", perm([]string{"job.read"}, []string{"emails"}, []string{"emails.send"}))
	b.control.SetRole(tenantA, "wide", perm([]string{"job.read"}, []string{"*"}, []string{"*"}))
	k := b.customKey(t, "mail-admin", "emails")

	// It defines roles within what it holds, and no further.
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/roles", k,
		roleBody("sender", perm([]string{"job.enqueue"}, []string{"emails"}, []string{"emails.send"}))).status)
	for _, ps := range [][]wire.Permission{
		{perm([]string{"job.enqueue"}, []string{"emails"}, []string{"*"})},         // every queue
		{perm([]string{"job.enqueue"}, []string{"*"}, []string{"emails.*"})},       // every namespace
		{perm([]string{"queue.manage"}, []string{"emails"}, []string{"emails.*"})}, // an action it lacks
		{perm([]string{"job.*"}, []string{"emails"}, []string{"billing.*"})},       // other queues
		{perm([]string{"*"}, []string{"emails"}, []string{"emails.send"})},         // every action
		{perm([]string{"job.read"}, []string{"default"}, []string{"emails.send"})}, // a namespace beyond its key
	} {
		e := b.do(t, http.MethodPost, "/api/v1/roles", k, roleBody("more", ps...)).requireError(t, http.StatusForbidden, apierr.Forbidden)
		require.Contains(t, e.Message, "which the key does not hold")
	}
	b.do(t, http.MethodPut, "/api/v1/roles/wide", k, roleBody("", emailsSupport...)).requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodDelete, "/api/v1/roles/wide", k, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodPut, "/api/v1/roles/mail-admin", k, roleBody("", perm([]string{"*"}, []string{"*"}, []string{"*"}))).
		requireError(t, http.StatusForbidden, apierr.Forbidden)

	// It mints keys within what it holds, and no further.
	mint := func(role string, nss ...string) reply {
		return b.do(t, http.MethodPost, "/api/v1/keys", k, map[string]any{"name": "k", "role": role, "namespaces": nss})
	}
	require.Equal(t, http.StatusCreated, mint("reader", "emails").status)
	require.Equal(t, http.StatusCreated, mint("sender", "emails").status)
	require.Equal(t, "reader", b.control.TenantKeys(tenantA)[0].Role)
	for _, role := range []string{"wide", "producer", "worker", "owner", "admin", "mail-admin-x"} {
		r := mint(role, "emails")
		require.Contains(t, []int{http.StatusForbidden, http.StatusBadRequest}, r.status, "%s: %s", role, r.body)
	}
	mint("mail-admin-x", "emails").requireError(t, http.StatusBadRequest, apierr.BadRequest)
	mint("reader", "default").requireError(t, http.StatusForbidden, apierr.Forbidden)
	mint("reader", "*").requireError(t, http.StatusForbidden, apierr.Forbidden)

	// An admin of emails alone cannot define a role beyond emails either.
	admin := b.key(t, tenancy.RoleAdmin, "emails")
	b.do(t, http.MethodPost, "/api/v1/roles", admin, roleBody("everywhere", perm([]string{"job.read"}, []string{"*"}, []string{"*"}))).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/roles", admin,
		roleBody("emails-reader", perm([]string{"job.read"}, []string{"emails"}, []string{"*"}))).status)
	// An owner's key mints any custom role's keys.
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/keys", b.key(t, tenancy.RoleOwner, "*"),
		map[string]any{"name": "w", "role": "wide", "namespaces": []string{"*"}}).status)
}

func TestCustomRoleEnforcedOnEveryRoute(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.control.SetRole(tenantA, "support",
		perm([]string{"job.enqueue", "job.work", "job.read", "queue.*"}, []string{"emails"}, []string{"emails.*"}),
		perm([]string{"namespace.read"}, []string{"emails"}, []string{"*"}))
	k := b.customKey(t, "support", "emails", "default")
	in := func(ns string) []string { return []string{wire.NamespaceHeader, ns} }

	// Routes about queues reach the shard with the role's queues.
	for _, rt := range []struct{ method, path string }{
		{http.MethodPost, "/api/v1/enqueue"}, {http.MethodPost, "/api/v1/fetch"}, {http.MethodGet, "/api/v1/jobs/job_1"},
		{http.MethodPost, "/api/v1/ack/job_1"}, {http.MethodPost, "/api/v1/jobs/search"}, {http.MethodGet, "/api/v1/queues"},
		{http.MethodPut, "/api/v1/queues/emails.send"}, {http.MethodGet, "/api/v1/events"},
	} {
		r := b.do(t, rt.method, rt.path, k, enqueueBody, in("emails")...)
		require.Less(t, r.status, 300, "%s %s: %s", rt.method, rt.path, r.body)
		require.Equal(t, "emails.*", b.shard.last(t).Header.Get(wire.QueueScopeHeader), "%s %s", rt.method, rt.path)
	}
	seen := b.shard.count()
	// A queue the path names outside the role, an action it lacks, a
	// namespace it has no queue of: refused here.
	e := b.do(t, http.MethodPut, "/api/v1/queues/billing.charge", k, map[string]any{}, in("emails")...).requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Contains(t, e.Message, `queue "billing.charge"`)
	b.do(t, http.MethodPost, "/api/v1/queues/billing.charge/pause", k, nil, in("emails")...).requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodPost, "/api/v1/jobs/job_1/cancel", k, nil, in("emails")...).requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodGet, "/api/v1/schedules", k, nil, in("emails")...).requireError(t, http.StatusForbidden, apierr.Forbidden)
	e = b.do(t, http.MethodPost, "/api/v1/enqueue", k, enqueueBody, in("default")...).requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Contains(t, e.Message, "any queue")
	// Namespaces, keys, roles: about a namespace as a whole.
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/api/v1/namespaces/emails", k, nil).status)
	b.do(t, http.MethodGet, "/api/v1/namespaces/default", k, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	var nss wire.NamespaceList
	b.do(t, http.MethodGet, "/api/v1/namespaces", k, nil, in("emails")...).decode(t, &nss)
	require.Len(t, nss.Namespaces, 1)
	require.Equal(t, "emails", nss.Namespaces[0].Name)
	b.do(t, http.MethodGet, "/api/v1/keys", k, nil, in("emails")...).requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Equal(t, seen, b.shard.count(), "nothing refused reached the shard")

	// A role granting every queue sends no scope; nor does a built-in role.
	b.control.SetRole(tenantA, "ops", perm([]string{"job.*"}, []string{"*"}, []string{"*"}))
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", b.customKey(t, "ops", "*"), enqueueBody).status)
	require.NotContains(t, b.shard.last(t).Header, wire.QueueScopeHeader)
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", b.key(t, tenancy.RoleProducer, "*"), enqueueBody).status)
	require.NotContains(t, b.shard.last(t).Header, wire.QueueScopeHeader)
	// A client's own scope header never reaches the shard.
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", b.key(t, tenancy.RoleProducer, "*"), enqueueBody,
		wire.QueueScopeHeader, "nothing").status)
	require.NotContains(t, b.shard.last(t).Header, wire.QueueScopeHeader)
}

func TestRoleChangesReachTheGateway(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")
	b.control.SetRole(tenantA, "support", emailsSupport...)
	k := b.customKey(t, "support", "emails")
	enqueue := func() reply { return b.do(t, http.MethodPost, "/api/v1/enqueue", k, enqueueBody) }
	require.Equal(t, http.StatusCreated, enqueue().status)
	fetches := b.control.RoleFetches.Load()
	for range 5 {
		require.Equal(t, http.StatusCreated, enqueue().status)
	}
	require.Equal(t, fetches, b.control.RoleFetches.Load(), "the roles are kept while they do not change")

	// A change through this gateway holds for its very next request.
	r := b.do(t, http.MethodPut, "/api/v1/roles/support", owner,
		roleBody("", perm([]string{"job.read"}, []string{"emails"}, []string{"emails.*"})))
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	enqueue().requireError(t, http.StatusForbidden, apierr.Forbidden)
	r = b.do(t, http.MethodPut, "/api/v1/roles/support", owner, roleBody("", perm([]string{"job.enqueue"}, []string{"emails"}, []string{"emails.send"})))
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, http.StatusCreated, enqueue().status)
	require.Equal(t, "emails.send", b.shard.last(t).Header.Get(wire.QueueScopeHeader))

	// One made elsewhere holds within a revocation poll.
	b.control.SetRole(tenantA, "support", perm([]string{"job.enqueue"}, []string{"emails"}, []string{"emails.bounce"}))
	require.Eventually(t, func() bool {
		return enqueue().status == http.StatusCreated &&
			b.shard.last(t).Header.Get(wire.QueueScopeHeader) == "emails.bounce"
	}, 5*time.Second, 10*time.Millisecond)
	b.control.DropRole(tenantA, "support")
	require.Eventually(t, func() bool { return enqueue().status == http.StatusForbidden }, 5*time.Second, 10*time.Millisecond)
	require.Contains(t, enqueue().apiError(t).Message, "no longer defines")
}

func TestKeysOfCustomRoles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")
	b.control.SetRole(tenantA, "support", emailsSupport...)
	b.control.SetRole(tenantA, "wide", perm([]string{"job.read"}, []string{"*"}, []string{"*"}))
	b.control.SetRole(tenantA, "key-admin", perm([]string{"key.*"}, []string{"emails"}, []string{"*"}),
		perm([]string{"job.*"}, []string{"emails"}, []string{"emails.*"}))
	var support, wide wire.CreatedKey
	r := b.do(t, http.MethodPost, "/api/v1/keys", owner, map[string]any{"name": "s", "role": "support", "namespaces": []string{"emails"}})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	r.decode(t, &support)
	require.Equal(t, "support", b.control.LastKeyRequest().Role)
	b.do(t, http.MethodPost, "/api/v1/keys", owner, map[string]any{"name": "w", "role": "wide", "namespaces": []string{"emails"}}).decode(t, &wide)
	// The minted key works with its role.
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", support.Token, enqueueBody).status)
	require.Equal(t, "emails.*", b.shard.last(t).Header.Get(wire.QueueScopeHeader))

	// A custom key manager rotates and revokes only keys within its hold.
	km := b.customKey(t, "key-admin", "emails")
	b.do(t, http.MethodPost, "/api/v1/keys/"+wide.ID+"/rotate", km, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodDelete, "/api/v1/keys/"+wide.ID, km, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	r = b.do(t, http.MethodPost, "/api/v1/keys/"+support.ID+"/rotate", km, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var rotated wire.RotatedKey
	r.decode(t, &rotated)
	require.Equal(t, "support", rotated.Role, "a rotation keeps the role")

	// A role that live keys carry is not deleted: control's 409 comes through.
	e := b.do(t, http.MethodDelete, "/api/v1/roles/support", owner, nil).requireError(t, http.StatusConflict, apierr.RoleInUse)
	require.Contains(t, e.Message, "1 live API keys")
	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodDelete, "/api/v1/keys/"+support.ID, km, nil).status)
	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodDelete, "/api/v1/roles/support", owner, nil).status)
}
