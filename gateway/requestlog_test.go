package gateway

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// An API request's log line, at debug, carries its request id, tenant,
// namespace and the trace id of its traceparent, and never the key.
func TestRequestLogLine(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	b := setup(t, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	owner := b.key(t, tenancy.RoleOwner, "*")
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", owner, enqueueBody, wire.TraceParentHeader, parent,
		wire.NamespaceHeader, "emails", apierr.RequestIDHeader, "req_logged")
	require.Less(t, r.status, 300, "%s", r.body)
	// A request refused before admission still has its line, without a tenant.
	r = b.do(t, http.MethodGet, "/api/v1/queues", "not-a-key", nil)
	require.Equal(t, http.StatusUnauthorized, r.status)

	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var l map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
		if l["msg"] == "gateway: request" {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 2, logs.String())
	ok := lines[0]
	require.Equal(t, "req_logged", ok["request_id"])
	require.Equal(t, tenantA, ok["tenant"])
	require.Equal(t, "emails", ok["namespace"])
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", ok["trace_id"])
	require.Equal(t, "/api/v1/enqueue", ok["route"])
	refused := lines[1]
	require.EqualValues(t, http.StatusUnauthorized, refused["status"])
	require.NotEmpty(t, refused["request_id"])
	require.NotContains(t, refused, "tenant")
	require.NotContains(t, logs.String(), owner, "a key in the log")
}
