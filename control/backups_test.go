package control

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// backupWorld is a control node whose only shard is a fake backup shard,
// its backups in a real directory store, called as a gateway.
type backupWorld struct {
	*bundle
	gw    *bundle
	shard *fakeBackupShard
	store *backup.DirStore
	dir   string // the store's directory
	tid   string
}

func backupSetup(t *testing.T, opts ...func(*Config)) *backupWorld {
	t.Helper()
	ca := pkitest.New(t)
	shard := newFakeBackupShard(t, ca, pkitest.Shard("s1", "n1"))
	dir := t.TempDir()
	store, err := backup.NewDirStore(dir)
	require.NoError(t, err)
	cfg := testConfig(t, ca, append([]func(*Config){noPulls, func(c *Config) {
		c.Shards = []ShardInfo{{ID: "s1", Addr: "https://" + shard.addr}}
		c.BackupStore = store
	}}, opts...)...)
	srv := startServer(t, cfg)
	op, err := srv.IssueOperatorKey(context.Background(), "ops")
	require.NoError(t, err)
	b := &bundle{srv: srv, cfg: cfg, ca: ca, base: "https://" + srv.Addr(), op: op, client: clientWith(ca.Anonymous(t))}
	w := &backupWorld{bundle: b, gw: b.as(t, pkitest.Gateway), shard: shard, store: store, dir: dir, tid: mustTenant(t, srv, "acme")}
	return w
}

func (w *backupWorld) ns(t *testing.T, tid, name string) {
	t.Helper()
	_, err := w.srv.CreateNamespace(context.Background(), tid, name)
	require.NoError(t, err)
}

func (w *backupWorld) path(tid, rest string) string { return "/internal/v1/tenants/" + tid + rest }

// create starts a backup of ns through the API and returns its record.
func (w *backupWorld) create(t *testing.T, ns string) wire.Backup {
	t.Helper()
	r := w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups"), "", wire.CreateBackupRequest{Namespace: ns})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	b := decodeAs[wire.Backup](t, r)
	require.Equal(t, wire.BackupRunning, b.State)
	require.Equal(t, wire.BackupManual, b.Kind)
	return b
}

// await polls backup id until cond holds.
func (w *backupWorld) await(t *testing.T, id string, cond func(wire.Backup) bool) wire.Backup {
	t.Helper()
	var b wire.Backup
	require.Eventually(t, func() bool {
		r := w.gw.do(t, http.MethodGet, w.path(w.tid, "/backups/"+id), "", nil)
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		b = decodeAs[wire.Backup](t, r)
		return cond(b)
	}, 20*time.Second, 20*time.Millisecond)
	return b
}

func ended(b wire.Backup) bool { return b.State != wire.BackupRunning }

func restored(b wire.Backup) bool {
	return b.LastRestore != nil && b.LastRestore.State != wire.BackupRunning
}

// records reads a backup stream's records.
func records(t *testing.T, data []byte) []backup.Record {
	t.Helper()
	rd, err := backup.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	defer rd.Close()
	var out []backup.Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		out = append(out, backup.Record{Kind: rec.Kind, Key: bytes.Clone(rec.Key), Value: bytes.Clone(rec.Value)})
	}
}

func sampleRecords(tag string) []backup.Record {
	var out []backup.Record
	for i := range 5 {
		out = append(out, backup.Record{Kind: 'j', Key: fmt.Appendf(nil, "job/%02d", i), Value: fmt.Appendf(nil, `{"payload":"%s-%d"}`, tag, i)})
	}
	out = append(out, backup.Record{Kind: 'q', Key: []byte("queue/emails"), Value: []byte(`{"max_attempts":3}`)})
	out = append(out, backup.Record{Kind: 's', Key: []byte("schedule/nightly"), Value: []byte(`{"cron":"@daily"}`)})
	return out
}

// A backup streams from the namespace's shard into the store; its record
// goes from running to completed with the manifest's figures; the
// download is the stored stream; the catalog lists it, filtered by
// namespace; and delete removes record and stream.
func TestBackupIsTakenIntoTheStoreAndDownloaded(t *testing.T) {
	t.Parallel()
	w := backupSetup(t)
	w.ns(t, w.tid, "orders")
	w.ns(t, w.tid, "empty")
	w.shard.put(w.tid, "orders", sampleRecords("a")...)

	b := w.await(t, w.create(t, "orders").ID, ended)
	require.Equal(t, wire.BackupCompleted, b.State, "error: %s", b.Error)
	require.Equal(t, int64(5), b.Jobs)
	require.Equal(t, int64(7), b.Records)
	require.Equal(t, "s1", b.Shard)
	require.NotZero(t, b.RaftIndex)
	require.Len(t, b.Checksum, 64)
	require.NotNil(t, b.CompletedAt)
	m, err := w.store.Manifest(context.Background(), w.tid+"/"+b.ID)
	require.NoError(t, err)
	require.Equal(t, m.StoredBytes, b.Size)
	require.Equal(t, m.SHA256, b.Checksum)

	r := w.gw.do(t, http.MethodGet, w.path(w.tid, "/backups/"+b.ID+"/download"), "", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, wire.BackupContentType, r.header.Get("Content-Type"))
	require.Equal(t, b.Size, int64(len(r.body)))
	require.Equal(t, sampleRecords("a"), records(t, r.body))

	// An empty namespace makes a valid empty backup.
	e := w.await(t, w.create(t, "empty").ID, ended)
	require.Equal(t, wire.BackupCompleted, e.State, "error: %s", e.Error)
	require.Zero(t, e.Records)

	list := decodeAs[wire.BackupList](t, w.gw.do(t, http.MethodGet, w.path(w.tid, "/backups"), "", nil))
	require.Len(t, list.Backups, 2)
	require.Equal(t, e.ID, list.Backups[0].ID, "newest first")
	list = decodeAs[wire.BackupList](t, w.gw.do(t, http.MethodGet, w.path(w.tid, "/backups?namespace=orders"), "", nil))
	require.Len(t, list.Backups, 1)
	require.Equal(t, b.ID, list.Backups[0].ID)

	require.Equal(t, http.StatusNoContent, w.gw.do(t, http.MethodDelete, w.path(w.tid, "/backups/"+b.ID), "", nil).status)
	requireError(t, w.gw.do(t, http.MethodGet, w.path(w.tid, "/backups/"+b.ID), "", nil), 404, "not_found")
	_, err = w.store.Manifest(context.Background(), w.tid+"/"+b.ID)
	require.ErrorIs(t, err, backup.ErrNotFound)
}

// Another tenant's backup is not found on every route, as is a malformed
// id; a bad request changes nothing; only gateways may call.
func TestBackupsAreTenantIsolated(t *testing.T) {
	t.Parallel()
	w := backupSetup(t)
	w.ns(t, w.tid, "orders")
	b := w.await(t, w.create(t, "orders").ID, ended)
	other := mustTenant(t, w.srv, "other")
	w.ns(t, other, "orders")
	for _, id := range []string{b.ID, "bkp_nope", "../x"} {
		for _, rt := range []struct{ method, path string }{
			{http.MethodGet, "/backups/" + id},
			{http.MethodDelete, "/backups/" + id},
			{http.MethodGet, "/backups/" + id + "/download"},
		} {
			requireError(t, w.gw.do(t, rt.method, w.path(other, rt.path), "", nil), 404, "not_found")
		}
		requireError(t, w.gw.do(t, http.MethodPost, w.path(other, "/backups/"+id+"/restore"), "", wire.RestoreRequest{TargetNamespace: "x"}), 404, "not_found")
	}
	list := decodeAs[wire.BackupList](t, w.gw.do(t, http.MethodGet, w.path(other, "/backups"), "", nil))
	require.Empty(t, list.Backups)
	_, err := w.srv.Namespace(context.Background(), other, "x")
	require.Error(t, err, "a refused restore made no namespace")

	requireError(t, w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups"), "", wire.CreateBackupRequest{Namespace: "nope"}), 404, "not_found")
	requireError(t, w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups"), "", wire.CreateBackupRequest{Namespace: "Bad Name"}), 400, "bad_request", "namespace")
	requireError(t, w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups"), "", `{"namespace":"orders","x":1}`), 400, "bad_request")
	requireError(t, w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups/"+b.ID+"/restore"), "", wire.RestoreRequest{}), 400, "bad_request", "target_namespace")
	requireError(t, w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups/"+b.ID+"/restore"), "", wire.RestoreRequest{TargetNamespace: "orders"}), 409, "conflict")

	shardCaller := w.as(t, pkitest.Shard("s1", "n1"))
	requireError(t, shardCaller.do(t, http.MethodGet, w.path(w.tid, "/backups"), "", nil), 403, "forbidden")
	requireError(t, w.do(t, http.MethodGet, w.path(w.tid, "/backups"), "", nil), 401, "unauthenticated")
}

// A restore into a new namespace creates it and sends the stored stream
// to its shard; backing up the copy gives the same records. A replace
// restore first backs up what it replaces (pre_restore), which restores
// the replaced data back.
func TestRestoreIntoANewNamespaceAndReplace(t *testing.T) {
	t.Parallel()
	w := backupSetup(t)
	w.ns(t, w.tid, "orders")
	w.shard.put(w.tid, "orders", sampleRecords("a")...)
	b := w.await(t, w.create(t, "orders").ID, ended)
	require.Equal(t, wire.BackupCompleted, b.State, b.Error)

	r := w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups/"+b.ID+"/restore"), "", wire.RestoreRequest{TargetNamespace: "copy"})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	started := decodeAs[wire.Backup](t, r)
	require.Equal(t, wire.BackupRunning, started.LastRestore.State)
	require.Equal(t, wire.RestoreNew, started.LastRestore.Mode)
	done := w.await(t, b.ID, restored)
	require.Equal(t, wire.BackupCompleted, done.LastRestore.State, done.LastRestore.Error)
	require.Equal(t, &wire.RestoreResult{Records: 7, Jobs: 5, Queues: 1, Schedules: 1}, done.LastRestore.Result)
	_, err := w.srv.Namespace(context.Background(), w.tid, "copy")
	require.NoError(t, err)
	require.Equal(t, sampleRecords("a"), w.shard.get(w.tid, "copy"))

	again := w.await(t, w.create(t, "copy").ID, ended)
	require.Equal(t, wire.BackupCompleted, again.State, again.Error)
	first := w.gw.do(t, http.MethodGet, w.path(w.tid, "/backups/"+b.ID+"/download"), "", nil)
	second := w.gw.do(t, http.MethodGet, w.path(w.tid, "/backups/"+again.ID+"/download"), "", nil)
	require.Equal(t, records(t, first.body), records(t, second.body), "backup → restore → backup: same contents")

	// Replace: orders changed since; restoring b brings it back, and the
	// pre_restore backup holds the changed data.
	w.shard.put(w.tid, "orders", sampleRecords("changed")...)
	r = w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups/"+b.ID+"/restore"), "", wire.RestoreRequest{Replace: true})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	pre := decodeAs[wire.Backup](t, r).LastRestore.PreRestoreBackup
	require.NotEmpty(t, pre)
	done = w.await(t, b.ID, restored)
	require.Equal(t, wire.BackupCompleted, done.LastRestore.State, done.LastRestore.Error)
	require.Equal(t, wire.RestoreReplace, done.LastRestore.Mode)
	require.Equal(t, sampleRecords("a"), w.shard.get(w.tid, "orders"))
	preB := w.await(t, pre, ended)
	require.Equal(t, wire.BackupCompleted, preB.State, preB.Error)
	require.Equal(t, wire.BackupPreRestore, preB.Kind)
	dl := w.gw.do(t, http.MethodGet, w.path(w.tid, "/backups/"+pre+"/download"), "", nil)
	require.Equal(t, sampleRecords("changed"), records(t, dl.body))
}

// A shard that cannot take the backup fails it with its reason; a failed
// backup cannot be downloaded or restored, and can be deleted.
func TestBackupFailsWithTheShardsReason(t *testing.T) {
	t.Parallel()
	w := backupSetup(t)
	w.ns(t, w.tid, "orders")
	w.shard.mu.Lock()
	w.shard.fail = http.StatusInternalServerError
	w.shard.mu.Unlock()
	b := w.await(t, w.create(t, "orders").ID, ended)
	require.Equal(t, wire.BackupFailed, b.State)
	require.Contains(t, b.Error, "the shard could not read the namespace")
	requireError(t, w.gw.do(t, http.MethodGet, w.path(w.tid, "/backups/"+b.ID+"/download"), "", nil), 409, "conflict")
	requireError(t, w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups/"+b.ID+"/restore"), "", wire.RestoreRequest{Replace: true}), 409, "conflict")
	require.Equal(t, http.StatusNoContent, w.gw.do(t, http.MethodDelete, w.path(w.tid, "/backups/"+b.ID), "", nil).status)
}

// A stream that is not whole, or names another namespace, is no backup:
// the backup fails and the store keeps nothing.
func TestBackupRefusesABadStream(t *testing.T) {
	t.Parallel()
	w := backupSetup(t)
	w.ns(t, w.tid, "orders")
	w.shard.put(w.tid, "orders", sampleRecords("a")...)
	for _, tc := range []struct {
		name string
		set  func(*fakeBackupShard)
		want string
	}{
		{"truncated", func(fs *fakeBackupShard) { fs.cut = true }, "corrupt"},
		{"another namespace", func(fs *fakeBackupShard) { fs.cut, fs.asNS = false, "elsewhere" }, "answered with a backup of"},
	} {
		w.shard.mu.Lock()
		tc.set(w.shard)
		w.shard.mu.Unlock()
		b := w.await(t, w.create(t, "orders").ID, ended)
		require.Equal(t, wire.BackupFailed, b.State, tc.name)
		require.Contains(t, b.Error, tc.want, tc.name)
		_, err := w.store.Manifest(context.Background(), w.tid+"/"+b.ID)
		require.ErrorIs(t, err, backup.ErrNotFound, tc.name)
	}
}

// One backup of a namespace runs at a time, and a running one cannot be
// deleted. A node that stops cuts its backups short and records them
// failed; a backup an earlier leader left running with no runner (it
// crashed) is failed as interrupted by the node that leads next, after
// BackupOrphanAfter.
func TestRunningBackupIsExclusiveAndInterrupted(t *testing.T) {
	t.Parallel()
	w := backupSetup(t, func(c *Config) { c.BackupOrphanAfter = 200 * time.Millisecond })
	w.ns(t, w.tid, "orders")
	w.ns(t, w.tid, "other")
	w.shard.put(w.tid, "orders", sampleRecords("a")...)
	w.shard.mu.Lock()
	w.shard.gate = make(chan struct{})
	w.shard.mu.Unlock()
	b := w.create(t, "orders")
	<-w.shard.started
	requireError(t, w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups"), "", wire.CreateBackupRequest{Namespace: "orders"}), 409, "conflict")
	requireError(t, w.gw.do(t, http.MethodDelete, w.path(w.tid, "/backups/"+b.ID), "", nil), 409, "conflict")
	// A record as a crashed leader leaves it: running, no runner.
	orphan, err := propose(context.Background(), w.srv, state.OpStartBackup, &state.StartBackupCmd{Tenant: w.tid, ID: newID(wire.BackupIDPrefix), Namespace: "other", Kind: wire.BackupManual})
	require.NoError(t, err)

	require.NoError(t, w.srv.Stop())
	got := func(srv *Server, id string) wire.Backup {
		b, err := srv.Backup(context.Background(), w.tid, id)
		require.NoError(t, err)
		return b
	}
	srv := startServer(t, w.cfg)
	stopped := got(srv, b.ID)
	require.Equal(t, wire.BackupFailed, stopped.State)
	require.Contains(t, stopped.Error, "the control node stopped")
	_, err = w.store.Manifest(context.Background(), w.tid+"/"+b.ID)
	require.ErrorIs(t, err, backup.ErrNotFound, "a cut stream is not a backup")

	require.Eventually(t, func() bool { return got(srv, orphan.ID).State == wire.BackupFailed }, 20*time.Second, 20*time.Millisecond)
	require.Contains(t, got(srv, orphan.ID).Error, "interrupted: the control leader changed")
}

// A policy runs at its cron's times, each run once, and keeps its
// retention's count of completed scheduled backups; manual backups are
// never pruned. Bad policies are 400s naming the field.
func TestBackupPolicyRunsAndPrunes(t *testing.T) {
	t.Parallel()
	w := backupSetup(t)
	w.ns(t, w.tid, "orders")
	w.shard.put(w.tid, "orders", sampleRecords("a")...)
	pp := w.path(w.tid, "/namespaces/orders/backup-policy")
	requireError(t, w.gw.do(t, http.MethodGet, pp, "", nil), 404, "not_found")
	for _, bad := range []struct {
		body  wire.BackupPolicyRequest
		field string
	}{
		{wire.BackupPolicyRequest{Cron: "nope", Retention: 1}, "cron"},
		{wire.BackupPolicyRequest{Cron: "@daily", Timezone: "Mars/Base", Retention: 1}, "timezone"},
		{wire.BackupPolicyRequest{Cron: "@daily", Timezone: "Local", Retention: 1}, "timezone"},
		{wire.BackupPolicyRequest{Cron: "@daily", Retention: 0}, "retention"},
		{wire.BackupPolicyRequest{Cron: "@daily", Retention: 1001}, "retention"},
	} {
		requireError(t, w.gw.do(t, http.MethodPut, pp, "", bad.body), 400, "bad_request", bad.field)
	}
	requireError(t, w.gw.do(t, http.MethodPut, w.path(w.tid, "/namespaces/nope/backup-policy"), "", wire.BackupPolicyRequest{Cron: "@daily", Retention: 1}), 404, "not_found")

	manual := w.await(t, w.create(t, "orders").ID, ended)
	r := w.gw.do(t, http.MethodPut, pp, "", wire.BackupPolicyRequest{Cron: "@every 1s", Timezone: "Europe/Paris", Retention: 2})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	p := decodeAs[wire.BackupPolicy](t, r)
	require.True(t, p.Enabled)
	require.NotNil(t, p.NextRunAt)

	scheduled := func() (completed, all int) {
		list, err := w.srv.Backups(context.Background(), w.tid, []string{"orders"})
		require.NoError(t, err)
		for _, b := range list {
			if b.Kind == wire.BackupScheduled {
				all++
				if b.State == wire.BackupCompleted {
					completed++
				}
			}
		}
		return completed, all
	}
	// Runs go on and pruning keeps two: once a fourth run has been seen,
	// two completed ones are left.
	seen := map[string]bool{}
	require.Eventually(t, func() bool {
		list, err := w.srv.Backups(context.Background(), w.tid, []string{"orders"})
		require.NoError(t, err)
		for _, b := range list {
			if b.Kind == wire.BackupScheduled {
				seen[b.ID] = true
			}
		}
		c, _ := scheduled()
		return len(seen) >= 4 && c <= 2
	}, 30*time.Second, 50*time.Millisecond)
	_, err := w.srv.Backup(context.Background(), w.tid, manual.ID)
	require.NoError(t, err, "a manual backup is not pruned")
	// A run is started once: the same run time again is refused.
	pol, err := viewValue(w.srv, func(r pebble.Reader) (state.BackupPolicy, error) {
		p, _, err := state.LoadBackupPolicy(r, w.tid, "orders")
		return p, err
	})
	require.NoError(t, err)
	_, err = propose(context.Background(), w.srv, state.OpStartBackup, &state.StartBackupCmd{Tenant: w.tid, ID: newID(wire.BackupIDPrefix),
		Namespace: "orders", Kind: wire.BackupScheduled, RunAt: pol.LastRun})
	requireAPIError(t, err, 409)

	off := false
	r = w.gw.do(t, http.MethodPut, pp, "", wire.BackupPolicyRequest{Cron: "@every 1s", Retention: 2, Enabled: &off})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Nil(t, decodeAs[wire.BackupPolicy](t, r).NextRunAt)
	require.Equal(t, http.StatusNoContent, w.gw.do(t, http.MethodDelete, pp, "", nil).status)
	requireError(t, w.gw.do(t, http.MethodDelete, pp, "", nil), 404, "not_found")
}

func requireAPIError(t *testing.T, err error, status int) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, status, apierr.Status(apierr.CodeOf(err)), "%v", err)
}
