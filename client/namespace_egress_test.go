package client_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// The egress allow-list calls send their route and body and read the
// answer; none reads back empty, not nil; nil clears the list (null); a
// bad entry is a 400 naming it.
func TestNamespaceEgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := newRecorder(t, http.StatusOK, `{"egress_allow":["hooks.example.com","*.example.net"]}`)
	c := rec.client(t)

	allow, err := c.GetNamespaceEgress(ctx, "emails")
	require.NoError(t, err)
	rec.requireRequest(t, "GET", "/api/v1/namespaces/emails/egress", "")
	require.Equal(t, []string{"hooks.example.com", "*.example.net"}, allow)

	allow, err = c.PutNamespaceEgress(ctx, "emails", []string{"hooks.example.com", "*.example.net"})
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/namespaces/emails/egress", `{"egress_allow":["hooks.example.com","*.example.net"]}`)
	require.Equal(t, []string{"hooks.example.com", "*.example.net"}, allow)

	rec.respond(http.StatusOK, `{"egress_allow":[]}`)
	allow, err = c.PutNamespaceEgress(ctx, "emails", nil)
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/namespaces/emails/egress", `{"egress_allow":null}`)
	require.NotNil(t, allow)
	require.Empty(t, allow)
	_, err = c.PutNamespaceEgress(ctx, "emails", []string{})
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/namespaces/emails/egress", `{"egress_allow":[]}`)

	rec.respond(http.StatusOK, `{"egress_allow":null}`)
	allow, err = c.GetNamespaceEgress(ctx, "a/b")
	require.NoError(t, err)
	rec.requireRequest(t, "GET", "/api/v1/namespaces/a%2Fb/egress", "")
	require.Equal(t, []string{}, allow)

	rec.respond(http.StatusBadRequest, `{"error":{"code":"bad_request","message":"not a host","field":"egress_allow[1]"}}`)
	_, err = c.PutNamespaceEgress(ctx, "emails", []string{"ok.example.com", "no such host"})
	require.True(t, client.IsBadRequest(err), "%v", err)
	e, ok := client.AsError(err)
	require.True(t, ok)
	require.Equal(t, "egress_allow[1]", e.Field)

	rec.respond(http.StatusNotFound, `{"error":{"code":"not_found","message":"no namespace nope"}}`)
	_, err = c.GetNamespaceEgress(ctx, "nope")
	require.True(t, client.IsNotFound(err), "%v", err)
}
