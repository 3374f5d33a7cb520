package control

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

func supportRole() map[string]any {
	return map[string]any{"name": "support", "description": "reads and retries mail",
		"permissions": []map[string]any{{"actions": []string{"job.read", "job.manage"}, "namespaces": []string{"emails"}, "queues": []string{"emails.*"}}}}
}

func TestHTTPRoles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	tid := b.newTenant(t, "acme").Tenant.ID
	base := "/internal/v1/tenants/" + tid + "/roles"

	list := decodeAs[wire.TenantRoles](t, gw.do(t, http.MethodGet, base, "", nil))
	require.Equal(t, wire.TenantRoles{Roles: []wire.Role{}}, list, "no custom role yet, version 0")

	r := gw.do(t, http.MethodPost, base, "", supportRole())
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	created := decodeAs[wire.RoleChanged](t, r)
	require.Equal(t, uint64(1), created.RolesVersion)
	require.Equal(t, "support", created.Name)
	require.False(t, created.Builtin)
	require.Equal(t, []wire.Permission{{Actions: []string{"job.read", "job.manage"}, Namespaces: []string{"emails"}, Queues: []string{"emails.*"}}},
		created.Permissions)
	require.NotNil(t, created.CreatedAt)
	require.Equal(t, *created.CreatedAt, *created.UpdatedAt)
	requireError(t, gw.do(t, http.MethodPost, base, "", supportRole()), 409, "conflict")

	got := decodeAs[wire.Role](t, gw.do(t, http.MethodGet, base+"/support", "", nil))
	require.Equal(t, created.Role, got)

	// PUT replaces the whole role; the name cannot change.
	time.Sleep(2 * time.Millisecond)
	r = gw.do(t, http.MethodPut, base+"/support", "", map[string]any{"description": "",
		"permissions": []map[string]any{{"actions": []string{"job.*"}, "namespaces": []string{"*"}, "queues": []string{"emails.*", "sms.*"}}}})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	updated := decodeAs[wire.RoleChanged](t, r)
	require.Equal(t, uint64(2), updated.RolesVersion)
	require.Equal(t, "", updated.Description)
	require.Equal(t, *created.CreatedAt, *updated.CreatedAt)
	require.True(t, updated.UpdatedAt.After(*updated.CreatedAt))
	requireError(t, gw.do(t, http.MethodPut, base+"/support", "", map[string]any{"name": "other",
		"permissions": supportRole()["permissions"]}), 400, "bad_request", "name")

	list = decodeAs[wire.TenantRoles](t, gw.do(t, http.MethodGet, base, "", nil))
	require.Equal(t, uint64(2), list.Version)
	require.Len(t, list.Roles, 1)
	rev := decodeAs[wire.Revocations](t, gw.do(t, http.MethodGet, "/internal/v1/revocations", "", nil))
	require.Equal(t, []wire.RolesVersion{{TenantID: tid, Version: 2}}, rev.Roles, "gateways learn the version with the revocations")
	require.Equal(t, uint64(2), rev.Version, "the list's version moves with it")

	// Unknown, malformed and built-in names.
	requireError(t, gw.do(t, http.MethodGet, base+"/nope", "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodPut, base+"/nope", "", map[string]any{"permissions": supportRole()["permissions"]}), 404, "not_found")
	requireError(t, gw.do(t, http.MethodDelete, base+"/nope", "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodGet, base+"/Bad_Name", "", nil), 404, "not_found")
	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		requireError(t, gw.do(t, method, base+"/admin", "", supportRole()), 409, "conflict")
	}
	// Built-in roles are the gateway's to show.
	requireError(t, gw.do(t, http.MethodGet, base+"/admin", "", nil), 404, "not_found")

	r = gw.do(t, http.MethodDelete, base+"/support", "", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, uint64(3), decodeAs[wire.RolesVersion](t, r).Version)
	requireError(t, gw.do(t, http.MethodGet, base+"/support", "", nil), 404, "not_found")
}

func TestHTTPRoleFieldsAreChecked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	tid := b.newTenant(t, "acme").Tenant.ID
	base := "/internal/v1/tenants/" + tid + "/roles"
	perm := func(actions, nss, queues []string) []map[string]any {
		return []map[string]any{{"actions": actions, "namespaces": nss, "queues": queues}}
	}
	all := []string{"*"}
	many := make([]string, 0, 64)
	for i := range 64 {
		many = append(many, fmt.Sprintf("q%03d.%s", i, strings.Repeat("x", 123)))
	}
	for _, bad := range []struct {
		body  any
		field string
	}{
		{map[string]any{"name": "Bad_Name", "permissions": perm(all, all, all)}, "name"},
		{map[string]any{"name": "owner", "permissions": perm(all, all, all)}, "name"},
		{map[string]any{"name": "", "permissions": perm(all, all, all)}, "name"},
		{map[string]any{"name": "a", "permissions": []any{}}, "permissions"},
		{map[string]any{"name": "a"}, "permissions"},
		{map[string]any{"name": "a", "permissions": perm([]string{"job.fly"}, all, all)}, "permissions[0].actions[0]"},
		{map[string]any{"name": "a", "permissions": perm(all, []string{"Emails"}, all)}, "permissions[0].namespaces[0]"},
		{map[string]any{"name": "a", "permissions": perm(all, all, []string{"emails.*.x*"})}, "permissions[0].queues[0]"},
		{map[string]any{"name": "a", "permissions": perm(all, all, []string{})}, "permissions[0].queues"},
		{map[string]any{"name": "a", "permissions": perm(all, all, many)}, "permissions"},
		{map[string]any{"name": "a", "description": strings.Repeat("x", wire.MaxDescription+1), "permissions": perm(all, all, all)}, "description"},
		{map[string]any{"name": "a", "permissions": perm(all, all, all), "builtin": true}, "builtin"},
	} {
		r := gw.do(t, http.MethodPost, base, "", bad.body)
		requireError(t, r, 400, "bad_request", bad.field)
	}
	requireError(t, gw.do(t, http.MethodPost, base, "", `{"name":"a","permissions":"all"}`), 400, "invalid_json", "permissions")
	require.Empty(t, decodeAs[wire.TenantRoles](t, gw.do(t, http.MethodGet, base, "", nil)).Roles, "nothing was made")
}

func TestHTTPRoleKeysAndIsolation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	ctx := context.Background()
	acme, bravo := b.newTenant(t, "acme").Tenant.ID, b.newTenant(t, "bravo").Tenant.ID
	_, err := b.srv.CreateNamespace(ctx, acme, "emails")
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, gw.do(t, http.MethodPost, "/internal/v1/tenants/"+acme+"/roles", "", supportRole()).status)

	// Another tenant's role does not exist for this one, in any way.
	bbase := "/internal/v1/tenants/" + bravo + "/roles"
	requireError(t, gw.do(t, http.MethodGet, bbase+"/support", "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodPut, bbase+"/support", "", supportRole()), 404, "not_found")
	requireError(t, gw.do(t, http.MethodDelete, bbase+"/support", "", nil), 404, "not_found")
	require.Empty(t, decodeAs[wire.TenantRoles](t, gw.do(t, http.MethodGet, bbase, "", nil)).Roles)
	requireError(t, gw.do(t, http.MethodPost, "/internal/v1/tenants/"+bravo+"/keys", "",
		KeyRequest{Name: "k", Role: "support", Namespaces: []string{"default"}}), 400, "bad_request", "role")
	// The same name in another tenant is another role.
	require.Equal(t, http.StatusCreated, gw.do(t, http.MethodPost, bbase, "", supportRole()).status)

	// A key carries a custom role; its token says so and verifies.
	k, err := b.srv.CreateKey(ctx, acme, KeyRequest{Name: "ci", Role: "support", Namespaces: []string{"emails"}})
	require.NoError(t, err)
	require.Equal(t, "support", string(k.Role))
	claims, err := b.srv.VerifyKey(ctx, k.Key)
	require.NoError(t, err)
	require.Equal(t, "support", string(claims.Role))
	_, err = b.srv.CreateKey(ctx, acme, KeyRequest{Name: "x", Role: "Not_A_Role", Namespaces: []string{"emails"}})
	requireAPIField(t, err, "role")
	_, err = b.srv.CreateKey(ctx, acme, KeyRequest{Name: "x", Role: "ghost", Namespaces: []string{"emails"}})
	requireAPIField(t, err, "role")

	// A rotation keeps the role.
	rot := decodeAs[wire.RotatedKey](t, gw.do(t, http.MethodPost, "/internal/v1/tenants/"+acme+"/keys/"+k.ID+"/rotate", "", map[string]any{}))
	require.Equal(t, "support", rot.Role)

	// A role live keys carry is not deleted; the count is in the message.
	base := "/internal/v1/tenants/" + acme + "/roles"
	r := gw.do(t, http.MethodDelete, base+"/support", "", nil)
	requireError(t, r, 409, "role_in_use")
	require.Contains(t, decodeAs[wire.ErrorBody](t, r).Error.Message, "1 live API keys")
	require.NoError(t, b.srv.RevokeKey(ctx, acme, k.ID))
	require.Equal(t, http.StatusOK, gw.do(t, http.MethodDelete, base+"/support", "", nil).status)
	_, err = b.srv.CreateKey(ctx, acme, KeyRequest{Name: "late", Role: "support", Namespaces: []string{"emails"}})
	requireAPIField(t, err, "role")
	require.NotNil(t, decodeAs[wire.Role](t, gw.do(t, http.MethodGet, bbase+"/support", "", nil)).CreatedAt, "bravo's is untouched")
}

// requireAPIField checks err is a 400 naming field.
func requireAPIField(t *testing.T, err error, field string) {
	t.Helper()
	e := apierr.From(err)
	require.Equal(t, apierr.BadRequest, e.Code, "%v", err)
	require.Equal(t, field, e.Field, "%v", err)
}
