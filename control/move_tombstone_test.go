package control

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// callLog is every "step shard-namespace" fs was asked, in order.
func (fs *fakeMoveShard) callLog() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return slices.Clone(fs.calls)
}

// moveAway moves orders from s2 to s1, waits for it to complete and
// deletes orders: s2 is left with the moved tombstone, and is the
// least loaded shard again (s1 holds the tenant's default namespace).
func (w *moveWorld) moveAway(t *testing.T) {
	t.Helper()
	w.src.set(w.sns, keys(10, "v"))
	m := w.start(t)
	require.Equal(t, wire.MoveCompleted, w.await(t, m.ID, moveEnded).State)
	_, _, moved, _ := w.src.state(w.sns)
	require.Equal(t, "s1", moved, "the source keeps a moved tombstone")
	r := w.as(t, pkitest.Gateway).do(t, http.MethodDelete, "/internal/v1/tenants/"+w.tid+"/namespaces/orders", "", nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
}

// createAsGateway creates namespace name of w's tenant as a gateway does.
func (w *moveWorld) createAsGateway(t *testing.T, name string) response {
	t.Helper()
	return w.as(t, pkitest.Gateway).do(t, http.MethodPost, "/internal/v1/tenants/"+w.tid+"/namespaces", "", wire.CreateNamespaceRequest{Name: name})
}

// A namespace created again, after its namesake moved away from a shard
// and was deleted, and placed on that shard: control clears the moved
// tombstone there (a begin and an abort of one token, on that shard only)
// before it answers 201, so the shard serves it. A create on a shard no
// move of the namespace left sends no shard anything.
func TestCreateClearsMovedTombstone(t *testing.T) {
	t.Parallel()
	w := moveSetup(t)
	w.moveAway(t)
	srcBefore, dstBefore := len(w.src.callLog()), len(w.dst.callLog())

	r := w.createAsGateway(t, "orders")
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.Equal(t, "s2", decodeAs[wire.NamespacePlacement](t, r).ShardID, "placed on the least loaded shard: the one it moved away from")
	require.Equal(t, []string{"begin " + w.sns, "abort " + w.sns}, w.src.callLog()[srcBefore:])
	require.Len(t, w.dst.callLog(), dstBefore, "the shard it moved to is not asked")
	_, mark, moved, _ := w.src.state(w.sns)
	require.Empty(t, moved, "the tombstone is cleared")
	require.Empty(t, mark, "and the begin's restore mark removed")

	// The tenant's other namespaces never moved: nothing is sent.
	srcBefore, dstBefore = len(w.src.callLog()), len(w.dst.callLog())
	for _, name := range []string{"billing", "emails"} {
		r := w.createAsGateway(t, name)
		require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	}
	require.Len(t, w.src.callLog(), srcBefore)
	require.Len(t, w.dst.callLog(), dstBefore)

	// Another tenant's namespace of the same name shares no tombstone.
	other := mustTenant(t, w.srv, "globex")
	_, err := w.srv.CreateNamespace(context.Background(), other, "orders")
	require.NoError(t, err)
	require.Len(t, w.src.callLog(), srcBefore)
	require.Len(t, w.dst.callLog(), dstBefore)
}

// When the shard cannot clear the tombstone, the create is a 503 with
// Retry-After and creates nothing; once the shard answers, the same
// create succeeds. Bad input sends the shard nothing.
func TestCreateOnUnreachableTombstoneShardCreatesNothing(t *testing.T) {
	t.Parallel()
	w := moveSetup(t)
	w.moveAway(t)

	before := len(w.src.callLog())
	r := w.as(t, pkitest.Gateway).do(t, http.MethodPost, "/internal/v1/tenants/"+w.tid+"/namespaces", "",
		map[string]any{"name": "orders", "retention": "not a duration"})
	require.Equal(t, http.StatusBadRequest, r.status, "body: %s", r.body)
	require.Len(t, w.src.callLog(), before, "a bad create sends the shard nothing")

	w.src.failStep("begin", http.StatusServiceUnavailable)
	r = w.createAsGateway(t, "orders")
	require.Equal(t, http.StatusServiceUnavailable, r.status, "body: %s", r.body)
	require.NotEmpty(t, r.header.Get("Retry-After"))
	require.Contains(t, string(r.body), "nothing was created")
	require.NotContains(t, string(r.body), "s2", "a tenant never learns shard ids")
	g := w.as(t, pkitest.Gateway).do(t, http.MethodGet, "/internal/v1/tenants/"+w.tid+"/namespaces/orders", "", nil)
	require.Equal(t, http.StatusNotFound, g.status, "body: %s", g.body)
	_, _, moved, _ := w.src.state(w.sns)
	require.Equal(t, "s1", moved)

	w.src.failStep("begin", 0)
	r = w.createAsGateway(t, "orders")
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	_, mark, moved, _ := w.src.state(w.sns)
	require.Empty(t, moved)
	require.Empty(t, mark)
}

// A create whose placement lands on a shard a move of the namespace left,
// other than the one its proposer cleared (the placement changed
// meanwhile), is refused with a 503 to retry and creates nothing. A
// command proposed without the check (before it existed) places as it
// did.
func TestCreateApplyRefusesUnclearedTombstoneShard(t *testing.T) {
	t.Parallel()
	w := moveSetup(t)
	w.moveAway(t)
	ctx := context.Background()

	_, err := propose(ctx, w.srv, state.OpCreateNamespace, &state.CreateNamespaceCmd{TenantID: w.tid, Name: "orders",
		Placement: w.srv.Placement(), Tombstones: true, Cleared: "s1"})
	require.Equal(t, apierr.Unavailable, apierr.CodeOf(err), "err: %v", err)
	require.Positive(t, apierr.From(err).RetryAfter)
	_, err = w.srv.Namespace(ctx, w.tid, "orders")
	require.Equal(t, apierr.NotFound, apierr.CodeOf(err), "nothing was created")

	ns, err := propose(ctx, w.srv, state.OpCreateNamespace, &state.CreateNamespaceCmd{TenantID: w.tid, Name: "orders", Placement: w.srv.Placement()})
	require.NoError(t, err)
	require.Equal(t, "s2", ns.ShardID)
}
