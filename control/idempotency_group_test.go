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
	lead := g.leader(t, "") // control1 bootstrapped, but an election may have moved the lead
	tid := tenantThrough(t, g.on(t, lead, pkitest.Operator), "acme")
	path := "/internal/v1/tenants/" + tid + "/keys"
	body := KeyRequest{Name: "ci", Role: "producer", Namespaces: []string{"default"}}

	// An election meanwhile may answer 503 after applying it: then the
	// first answer is itself a replay, under the same key.
	first := postThrough(t, g.on(t, lead, pkitest.Gateway), path, "order-1", body, http.StatusCreated)

	require.NoError(t, g.nodes[lead].Stop())
	delete(g.nodes, lead)
	next := g.leader(t, lead)
	follower := g.followers(next)[0]
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
