package client_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

const supportRole = `{"name":"support","description":"mail","builtin":false,"created_at":"2026-11-01T12:00:00Z","updated_at":"2026-11-02T12:00:00Z",
	"permissions":[{"actions":["job.read","job.manage"],"namespaces":["emails"],"queues":["emails.*"]}]}`

func TestRoles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at, later := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	perms := []client.Permission{{Actions: []string{"job.read", "job.manage"}, Namespaces: []string{"emails"}, Queues: []string{"emails.*"}}}
	want := &client.Role{Name: "support", Description: "mail", Permissions: perms, CreatedAt: &at, UpdatedAt: &later}
	rec := newRecorder(t, http.StatusCreated, supportRole)
	c := rec.client(t)

	role, err := c.CreateRole(ctx, client.Role{Name: "support", Description: "mail", Permissions: perms, Builtin: true})
	require.NoError(t, err)
	require.Equal(t, want, role)
	rec.requireRequest(t, "POST", "/api/v1/roles",
		`{"name":"support","description":"mail","permissions":[{"actions":["job.read","job.manage"],"namespaces":["emails"],"queues":["emails.*"]}]}`)

	rec.respond(http.StatusOK, supportRole)
	role, err = c.UpdateRole(ctx, *want)
	require.NoError(t, err)
	require.Equal(t, want, role)
	rec.requireRequest(t, "PUT", "/api/v1/roles/support",
		`{"description":"mail","permissions":[{"actions":["job.read","job.manage"],"namespaces":["emails"],"queues":["emails.*"]}]}`)

	role, err = c.GetRole(ctx, "support")
	require.NoError(t, err)
	require.Equal(t, want, role)
	rec.requireRequest(t, "GET", "/api/v1/roles/support", "")

	rec.respond(http.StatusOK, `{"roles":[{"name":"viewer","description":"reads","builtin":true,
		"permissions":[{"actions":["job.read"],"namespaces":["*"],"queues":["*"]}]},`+supportRole+`]}`)
	roles, err := c.ListRoles(ctx)
	require.NoError(t, err)
	require.Len(t, roles, 2)
	require.True(t, roles[0].Builtin)
	require.Nil(t, roles[0].CreatedAt)
	require.Equal(t, *want, roles[1])
	rec.requireRequest(t, "GET", "/api/v1/roles", "")

	rec.respond(http.StatusNoContent, "")
	require.NoError(t, c.DeleteRole(ctx, "support"))
	rec.requireRequest(t, "DELETE", "/api/v1/roles/support", "")
	rec.respond(http.StatusConflict, `{"error":{"code":"role_in_use","message":"role \"support\" is carried by 2 live API keys"}}`)
	require.Equal(t, client.CodeRoleInUse, client.ErrorCode(c.DeleteRole(ctx, "support")))
	rec.respond(http.StatusNotFound, `{"error":{"code":"not_found","message":"role not found"}}`)
	_, err = c.GetRole(ctx, "gone")
	require.Equal(t, "not_found", client.ErrorCode(err))
}
