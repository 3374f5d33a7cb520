package control

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// A create and its Idempotency-Key record are one entry of the log: after
// the leader that applied it stops, the same request sent to the new
// group (through a follower, which forwards it) is the first answer, and
// the tenant has one key, not two.
func TestGroupIdempotentCreateAcrossALeaderChange(t *testing.T) {
	g := startGroup(t, 3)
	require.Equal(t, "control1", g.leader(t, ""))
	r := g.on(t, "control1", pkitest.Operator).do(t, http.MethodPost, "/control/v1/tenants", g.op, map[string]string{"name": "acme"})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	tid := decodeAs[wire.CreatedTenant](t, r).Tenant.ID
	path := "/internal/v1/tenants/" + tid + "/keys"
	body := KeyRequest{Name: "ci", Role: "producer", Namespaces: []string{"default"}}

	first := g.on(t, "control1", pkitest.Gateway).do(t, http.MethodPost, path, "", body, wire.IdempotencyKeyHeader, "order-1")
	require.Equal(t, http.StatusCreated, first.status, "body: %s", first.body)

	require.NoError(t, g.nodes["control1"].Stop())
	delete(g.nodes, "control1")
	next := g.leader(t, "control1")
	follower := "control2"
	if next == follower {
		follower = "control3"
	}
	var again response
	require.Eventually(t, func() bool {
		again = g.on(t, follower, pkitest.Gateway).do(t, http.MethodPost, path, "", body, wire.IdempotencyKeyHeader, "order-1")
		return again.status != http.StatusServiceUnavailable
	}, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, http.StatusOK, again.status, "body: %s", again.body)
	require.Equal(t, "true", again.header.Get(wire.IdempotencyReplayedHeader))
	require.JSONEq(t, string(first.body), string(again.body), "the first key and its token")

	keys, err := g.nodes[next].Keys(context.Background(), tid)
	require.NoError(t, err)
	require.Len(t, keys, 2, "the owner and one ci key")
}
