package client_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// GetTracing and SetTracing speak GET and PUT /api/v1/tracing on the
// client's namespace; "" is sent as null (none), and a 400's field comes
// back named.
func TestTracingCalls(t *testing.T) {
	t.Parallel()
	const url = "https://otel.example.com/v1/traces"
	rec := newRecorder(t, http.StatusOK, `{"otlp_endpoint":"`+url+`"}`)
	c := rec.client(t, client.WithNamespace("emails"))
	ctx := context.Background()

	got, err := c.GetTracing(ctx)
	require.NoError(t, err)
	require.Equal(t, url, got)
	rec.requireRequest(t, "GET", "/api/v1/tracing", "")
	require.Equal(t, "emails", rec.requestHeader(client.NamespaceHeader))

	got, err = c.SetTracing(ctx, url)
	require.NoError(t, err)
	require.Equal(t, url, got)
	rec.requireRequest(t, "PUT", "/api/v1/tracing", `{"otlp_endpoint":"`+url+`"}`)

	rec.respond(http.StatusOK, `{"otlp_endpoint":""}`)
	got, err = c.SetTracing(ctx, "")
	require.NoError(t, err)
	require.Empty(t, got)
	rec.requireRequest(t, "PUT", "/api/v1/tracing", `{"otlp_endpoint":null}`)

	rec.respond(http.StatusBadRequest, `{"error":{"code":"bad_request","message":"otlp_endpoint: not https","field":"otlp_endpoint"}}`)
	_, err = c.SetTracing(ctx, "http://otel.example.com")
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "otlp_endpoint", e.Field)
}
