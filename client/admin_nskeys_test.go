package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

const emailsNS = `{"name":"emails","description":"mail","retention":"168h","deletion_protection":true,"created_at":"2026-11-01T12:00:00Z"}`

func TestNamespaceObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	want := &client.Namespace{Name: "emails", Description: "mail", Retention: "168h", DeletionProtection: true, CreatedAt: created}
	rec := newRecorder(t, http.StatusCreated, emailsNS)
	c := rec.client(t)

	ns, err := c.CreateNamespaceWith(ctx, client.CreateNamespaceRequest{Name: "emails", Description: "mail",
		Retention: 7 * 24 * time.Hour, DeletionProtection: true})
	require.NoError(t, err)
	require.Equal(t, want, ns)
	rec.requireRequest(t, "POST", "/api/v1/namespaces", `{"name":"emails","description":"mail","retention":"168h","deletion_protection":true}`)

	rec.respond(http.StatusOK, emailsNS)
	ns, err = c.GetNamespace(ctx, "emails")
	require.NoError(t, err)
	require.Equal(t, want, ns)
	rec.requireRequest(t, "GET", "/api/v1/namespaces/emails", "")
	d, err := time.ParseDuration(ns.Retention)
	require.NoError(t, err)
	require.Equal(t, 7*24*time.Hour, d)

	desc, off, none, keep := "", false, time.Duration(0), 90*time.Minute
	_, err = c.UpdateNamespace(ctx, "emails", client.UpdateNamespaceRequest{Description: &desc, DeletionProtection: &off, Retention: &none})
	require.NoError(t, err)
	rec.requireRequest(t, "PATCH", "/api/v1/namespaces/emails", `{"description":"","retention":null,"deletion_protection":false}`)
	_, err = c.UpdateNamespace(ctx, "emails", client.UpdateNamespaceRequest{Retention: &keep})
	require.NoError(t, err)
	rec.requireRequest(t, "PATCH", "/api/v1/namespaces/emails", `{"retention":"1h30m"}`)

	rec.respond(http.StatusConflict, `{"error":{"code":"deletion_protected","message":"protected"}}`)
	err = c.DeleteNamespace(ctx, "emails", false)
	require.Equal(t, client.CodeDeletionProtected, client.ErrorCode(err))
	rec.requireRequest(t, "DELETE", "/api/v1/namespaces/emails", "")
	rec.respond(http.StatusConflict, `{"error":{"code":"namespace_not_empty","message":"holds 3 jobs"}}`)
	require.Equal(t, client.CodeNamespaceNotEmpty, client.ErrorCode(c.DeleteNamespace(ctx, "emails", false)))
}

func TestDeleteNamespaceForce(t *testing.T) {
	t.Parallel()
	queries := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries <- r.Method + " " + r.URL.Path + "?" + r.URL.RawQuery
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, "k3y")
	t.Cleanup(c.CloseIdleConnections)
	require.NoError(t, c.DeleteNamespace(context.Background(), "emails", true))
	require.Equal(t, "DELETE /api/v1/namespaces/emails?force=true", <-queries)
	require.NoError(t, c.DeleteNamespace(context.Background(), "emails", false))
	require.Equal(t, "DELETE /api/v1/namespaces/emails?", <-queries)
}

func TestGetAndRotateKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := newRecorder(t, http.StatusOK, `{"id":"key_1","name":"ci","description":"CI","role":"producer","namespaces":["emails"],
		"created_at":"2026-11-01T12:00:00Z","last_used_at":"2026-11-01T13:00:00Z"}`)
	c := rec.client(t)
	k, err := c.GetKey(ctx, "key_1")
	require.NoError(t, err)
	require.Equal(t, "CI", k.Description)
	require.Equal(t, created.Add(time.Hour), *k.LastUsedAt)
	require.Nil(t, k.RotatedAt)
	rec.requireRequest(t, "GET", "/api/v1/keys/key_1", "")

	rec.respond(http.StatusOK, `{"id":"key_1","key":"jwt2","name":"ci","description":"CI","role":"producer","namespaces":["emails"],
		"created_at":"2026-11-01T12:00:00Z","rotated_at":"2026-11-01T14:00:00Z","previous_key_valid_until":"2026-11-01T15:00:00Z"}`)
	r, err := c.RotateKey(ctx, "key_1", time.Hour)
	require.NoError(t, err)
	require.Equal(t, "jwt2", r.Token)
	require.Equal(t, created.Add(3*time.Hour), r.PreviousKeyValidUntil)
	require.Equal(t, created.Add(2*time.Hour), *r.RotatedAt)
	rec.requireRequest(t, "POST", "/api/v1/keys/key_1/rotate", `{"grace_period":"1h"}`)
	_, err = c.RotateKey(ctx, "key_1", 0)
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/keys/key_1/rotate", `{}`)

	rec.respond(http.StatusCreated, `{"id":"key_2","key":"jwt","name":"ci","description":"deploys","role":"producer","namespaces":["emails"],
		"created_at":"2026-11-01T12:00:00Z"}`)
	created, err := c.CreateKey(ctx, client.CreateKeyRequest{Name: "ci", Role: "producer", Namespaces: []string{"emails"}, Description: "deploys"})
	require.NoError(t, err)
	require.Equal(t, "deploys", created.Description)
	rec.requireRequest(t, "POST", "/api/v1/keys", `{"name":"ci","role":"producer","namespaces":["emails"],"description":"deploys"}`)
}
