package control

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// The gateways' placement lookup says moving while a move of the
// namespace has not ended (switched included), and not once it has:
// failed or completed.
func TestPlacementShowsMoving(t *testing.T) {
	t.Parallel()
	w := moveSetup(t)
	lookup := func() wire.NamespacePlacement {
		r := w.as(t, pkitest.Gateway).do(t, http.MethodGet, "/internal/v1/tenants/"+w.tid+"/namespaces/orders", "", nil)
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		return decodeAs[wire.NamespacePlacement](t, r)
	}
	require.False(t, lookup().Moving)
	w.src.set(w.sns, keys(10, "v"))

	openFence := w.src.gate("fence")
	w.src.failStep("fence", http.StatusConflict) // read as the fence arrives
	m := w.start(t)
	awaitStep(t, w.src, "fence")
	p := lookup()
	require.True(t, p.Moving, "copying")
	require.Equal(t, "s2", p.ShardID)
	openFence()
	require.Equal(t, wire.MoveFailed, w.await(t, m.ID, moveEnded).State)
	require.False(t, lookup().Moving, "failed")
	w.src.failStep("fence", 0)

	openFinish := w.src.gate("finish")
	m = w.start(t)
	awaitStep(t, w.src, "finish")
	p = lookup()
	require.Equal(t, wire.MoveSwitched, w.get(t, m.ID).State)
	require.True(t, p.Moving, "switched, not yet finished")
	require.Equal(t, "s1", p.ShardID)
	openFinish()
	require.Equal(t, wire.MoveCompleted, w.await(t, m.ID, moveEnded).State)
	p = lookup()
	require.False(t, p.Moving, "completed")
	require.Equal(t, "s1", p.ShardID)

	// A list leaves it out, as it leaves out where shards are.
	r := w.as(t, pkitest.Gateway).do(t, http.MethodGet, "/internal/v1/tenants/"+w.tid+"/namespaces", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.NotContains(t, string(r.body), "moving")
}
