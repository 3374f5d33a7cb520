package control

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// completedBackup records a completed backup of namespace ns, as the
// backup runner would, so a restore can start from it.
func completedBackup(t *testing.T, srv *Server, tid, ns string) string {
	t.Helper()
	ctx := context.Background()
	id := newID(wire.BackupIDPrefix)
	_, err := propose(ctx, srv, state.OpStartBackup, &state.StartBackupCmd{Tenant: tid, ID: id, Namespace: ns, Kind: wire.BackupManual})
	require.NoError(t, err)
	// Its stream is in the store, as a completed backup's always is: a
	// restore checks it against the catalog before anything else.
	var buf bytes.Buffer
	bw, err := backup.NewWriter(&buf, backup.Header{Tenant: tid, Namespace: ns, ShardID: "s0", CreatedAt: time.Now().UTC(), Kinds: fakeKinds})
	require.NoError(t, err)
	m, err := bw.Close(nil)
	require.NoError(t, err)
	store, err := backup.NewDirStore(filepath.Join(srv.cfg.DataDir, "backups"))
	require.NoError(t, err)
	size, err := store.Put(ctx, tid+"/"+id, backup.Manifest{}, &buf)
	require.NoError(t, err)
	_, err = propose(ctx, srv, state.OpFinishBackup, &state.FinishBackupCmd{Tenant: tid, ID: id, State: wire.BackupCompleted,
		Size: size, Checksum: m.SHA256})
	require.NoError(t, err)
	return id
}

// The move routes refuse bad input (400), what does not exist (404) and
// what conflicts (409), changing nothing; they take operator keys only.
func TestMoveRoutesRefuse(t *testing.T) {
	t.Parallel()
	w := moveSetup(t)
	path := func(tid, ns string) string { return "/control/v1/namespaces/" + tid + "/" + ns + "/move" }
	to := func(s string) wire.NamespaceMoveRequest { return wire.NamespaceMoveRequest{ToShard: s} }

	// Authentication: no key, a tenant's key, a gateway's certificate.
	requireError(t, w.do(t, http.MethodPost, path(w.tid, "orders"), "", to("s1")), 401, "unauthenticated")
	tenant := w.newTenant(t, "bravo")
	requireError(t, w.do(t, http.MethodPost, path(w.tid, "orders"), tenant.OwnerKey, to("s1")), 403, "forbidden")
	requireError(t, w.do(t, http.MethodGet, "/control/v1/moves", tenant.OwnerKey, nil), 403, "forbidden")
	gw := w.as(t, pkitest.Gateway)
	requireError(t, gw.do(t, http.MethodPost, path(w.tid, "orders"), "", to("s1")), 401, "unauthenticated")
	requireError(t, gw.do(t, http.MethodGet, "/control/v1/moves", "", nil), 401, "unauthenticated")
	requireError(t, gw.do(t, http.MethodPost, "/control/v1/moves/mov_x/cancel", tenant.OwnerKey, nil), 403, "forbidden")

	// 400
	requireError(t, w.do(t, http.MethodPost, path(w.tid, "orders"), w.op, wire.NamespaceMoveRequest{}), 400, "bad_request", "to_shard")
	requireError(t, w.do(t, http.MethodPost, path(w.tid, "orders"), w.op, to("s2")), 400, "bad_request", "to_shard")
	requireError(t, w.do(t, http.MethodPost, path(w.tid, "orders"), w.op, to("no way")), 400, "bad_request", "to_shard")
	requireError(t, w.do(t, http.MethodPost, path(w.tid, "orders"), w.op, `{"to_shard":"s1","extra":1}`), 400, "bad_request")
	requireError(t, w.do(t, http.MethodPost, path(w.tid, "orders"), w.op, `{`), 400, "invalid_json")
	requireError(t, w.do(t, http.MethodGet, "/control/v1/moves?state=nope", w.op, nil), 400, "bad_request", "state")
	requireError(t, w.do(t, http.MethodGet, "/control/v1/moves?tenant=Bad!", w.op, nil), 400, "bad_request", "tenant")
	requireError(t, w.do(t, http.MethodGet, "/control/v1/moves?namespace=Bad!", w.op, nil), 400, "bad_request", "namespace")

	// 404
	requireError(t, w.do(t, http.MethodPost, path("t_nope", "orders"), w.op, to("s1")), 404, "not_found")
	requireError(t, w.do(t, http.MethodPost, path(w.tid, "nope"), w.op, to("s1")), 404, "not_found")
	requireError(t, w.do(t, http.MethodPost, path(tenant.Tenant.ID, "orders"), w.op, to("s1")), 404, "not_found")
	requireError(t, w.do(t, http.MethodPost, path(w.tid, "orders"), w.op, to("s9")), 404, "not_found")
	requireError(t, w.do(t, http.MethodGet, "/control/v1/moves/mov_01jd0000000000000000000000", w.op, nil), 404, "not_found")
	requireError(t, w.do(t, http.MethodGet, "/control/v1/moves/nope", w.op, nil), 404, "not_found")
	requireError(t, w.do(t, http.MethodPost, "/control/v1/moves/nope/cancel", w.op, nil), 404, "not_found")

	// 409: a self-hosted shard either way.
	ctx := context.Background()
	own, err := w.srv.CreateJoinToken(ctx, w.tid, wire.CreateJoinTokenRequest{Name: "rack"})
	require.NoError(t, err)
	r := w.do(t, http.MethodPost, path(w.tid, "orders"), w.op, to(own.ShardID))
	requireError(t, r, 409, "conflict")
	require.Contains(t, string(r.body), "control cannot reach self-hosted shards")
	_, err = w.srv.CreateNamespaceOn(ctx, w.tid, service.NamespaceRequest{Name: "onprem"}, own.ShardID)
	require.NoError(t, err)
	r = w.do(t, http.MethodPost, path(w.tid, "onprem"), w.op, to("s1"))
	requireError(t, r, 409, "conflict")
	require.Contains(t, string(r.body), "self-hosted")

	// 409: a restore running into the namespace.
	bid := completedBackup(t, w.srv, w.tid, "orders")
	_, err = propose(ctx, w.srv, state.OpStartRestore, &state.StartRestoreCmd{Tenant: w.tid, BackupID: bid,
		Restore: wire.BackupRestore{ID: newID(wire.RestoreIDPrefix), Mode: wire.RestoreReplace, TargetNamespace: "orders"}})
	require.NoError(t, err)
	r = w.do(t, http.MethodPost, path(w.tid, "orders"), w.op, to("s1"))
	requireError(t, r, 409, "conflict")
	require.Contains(t, string(r.body), "restore")

	list := decodeAs[wire.MoveList](t, w.do(t, http.MethodGet, "/control/v1/moves", w.op, nil))
	require.Empty(t, list.Moves, "nothing refused was recorded")
	require.Empty(t, w.src.steps())
	require.Empty(t, w.dst.steps())
}

// While a move runs, its namespace refuses another move, a delete and a
// restore (409); a backup may start. The list filters by tenant,
// namespace and state, newest first.
func TestMoveHoldsItsNamespace(t *testing.T) {
	t.Parallel()
	w := moveSetup(t)
	ctx := context.Background()
	bid := completedBackup(t, w.srv, w.tid, "orders")
	open := w.src.gate("snapshot")
	m := w.start(t)
	awaitStep(t, w.src, "snapshot")

	r := w.do(t, http.MethodPost, "/control/v1/namespaces/"+w.tid+"/orders/move", w.op, wire.NamespaceMoveRequest{ToShard: "s1"})
	requireError(t, r, 409, "conflict")
	require.Contains(t, string(r.body), m.ID)
	gw := w.as(t, pkitest.Gateway)
	requireError(t, gw.do(t, http.MethodDelete, "/internal/v1/tenants/"+w.tid+"/namespaces/orders", "", nil), 409, "conflict")
	requireError(t, gw.do(t, http.MethodPost, "/internal/v1/tenants/"+w.tid+"/backups/"+bid+"/restore", "", wire.RestoreRequest{Replace: true}), 409, "conflict")
	b := gw.do(t, http.MethodPost, "/internal/v1/tenants/"+w.tid+"/backups", "", wire.CreateBackupRequest{Namespace: "orders"})
	require.Equal(t, http.StatusAccepted, b.status, "a backup may run during a move: %s", b.body)
	// The refused restore left no pre_restore backup behind.
	backups, err := w.srv.Backups(ctx, w.tid, nil)
	require.NoError(t, err)
	require.Len(t, backups, 2)

	// Another namespace moves meanwhile.
	ns, err := w.srv.CreateNamespace(ctx, w.tid, "other")
	require.NoError(t, err)
	other, err := w.srv.StartMove(ctx, w.tid, "other", map[string]string{"s1": "s2", "s2": "s1"}[ns.ShardID])
	require.NoError(t, err)

	list := decodeAs[wire.MoveList](t, w.do(t, http.MethodGet, "/control/v1/moves", w.op, nil))
	require.Len(t, list.Moves, 2)
	require.Equal(t, other.ID, list.Moves[0].ID, "newest first")
	list = decodeAs[wire.MoveList](t, w.do(t, http.MethodGet, "/control/v1/moves?tenant="+w.tid+"&namespace=orders", w.op, nil))
	require.Len(t, list.Moves, 1)
	require.Equal(t, m.ID, list.Moves[0].ID)
	list = decodeAs[wire.MoveList](t, w.do(t, http.MethodGet, "/control/v1/moves?state=copying&namespace=orders", w.op, nil))
	require.Len(t, list.Moves, 1, "orders' move is held at its snapshot")
	require.Equal(t, m.ID, list.Moves[0].ID)
	list = decodeAs[wire.MoveList](t, w.do(t, http.MethodGet, "/control/v1/moves?tenant=t_other", w.op, nil))
	require.Empty(t, list.Moves)

	open()
	done := w.await(t, m.ID, moveEnded)
	require.Equal(t, wire.MoveCompleted, done.State, "error: %s", done.Error)
	list = decodeAs[wire.MoveList](t, w.do(t, http.MethodGet, "/control/v1/moves?state=completed&namespace=orders", w.op, nil))
	require.Len(t, list.Moves, 1)
	// Ended, the namespace may be deleted.
	r = gw.do(t, http.MethodDelete, "/internal/v1/tenants/"+w.tid+"/namespaces/orders", "", nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
}
