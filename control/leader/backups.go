package leader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Taking and restoring backups, on the leader. A backup streams from the
// namespace's shard (GET /internal/v1/backup, control's certificate,
// the usage puller's clients) straight into the store, which verifies it
// as it writes and keeps its trailer as the manifest; the record then
// gets the manifest's figures. A restore streams the stored backup to the
// shard (POST /internal/v1/restore), once it is checked against its
// catalog entry (backup.VerifyStored, then backup.Verified as it
// streams). The leader's loop (runLoop) starts
// Due policy runs, prunes what their retention no longer keeps, and fails
// backups and restores left running by an earlier leader: a record still
// running that no runner of this node holds, once this node has led for
// Config.BackupOrphanAfter, is failed as "interrupted".

const (
	backupPath  = "/internal/v1/backup"
	restorePath = "/internal/v1/restore"
	// backupTick is how often the leader's loop looks at policies and
	// running records.
	backupTick = time.Second
	// maxRunTime bounds one backup's stream (and one restore's), so a
	// shard that stalls cannot hold its namespace's backups forever.
	maxRunTime = time.Hour
)

type backupRunner struct {
	s     *Leader
	store backup.Store

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	inflight map[string]bool // backup and restore ids this node is running
}

func newBackupRunner(s *Leader, store backup.Store) *backupRunner {
	ctx, cancel := context.WithCancel(context.Background())
	return &backupRunner{s: s, store: store, ctx: ctx, cancel: cancel, inflight: map[string]bool{}}
}

// hold marks ids as run by this node, from before their records are
// proposed (so the orphan sweep never sees them running without a
// runner) until release.
func (b *backupRunner) hold(ids ...string) (release func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range ids {
		b.inflight[id] = true
	}
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, id := range ids {
			delete(b.inflight, id)
		}
	}
}

// launch runs fn in the background until it ends or the server stops,
// then releases what it held.
func (b *backupRunner) launch(release func(), fn func(ctx context.Context)) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer release()
		fn(b.ctx)
	}()
}

func (b *backupRunner) running(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inflight[id]
}

// stop cancels what runs and waits for it.
func (b *backupRunner) stop() {
	b.cancel()
	b.wg.Wait()
}

// take takes backup rec and records how it ended.
func (b *backupRunner) take(ctx context.Context, rec state.BackupRecord) {
	fin := state.FinishBackupCmd{Tenant: rec.Tenant, ID: rec.ID}
	tctx, cancel := context.WithTimeout(ctx, maxRunTime)
	m, err := b.takeStream(tctx, rec)
	cancel()
	fin.State = state.RunEnd(err)
	if err != nil {
		fin.Error = err.Error()
		if ctx.Err() != nil {
			fin.Error = errStopped
		}
		b.s.log.Warn("control: backup failed", "tenant", rec.Tenant, "namespace", rec.Namespace, "backup", rec.ID, "err", err)
	} else {
		fin.Size, fin.Jobs, fin.Records, fin.Checksum, fin.RaftIndex = m.StoredBytes, int64(m.Counts["jobs"]), int64(m.Records), m.SHA256, m.RaftIndex
	}
	b.finish(ctx, func(ctx context.Context) error {
		err := b.s.FinishBackup(ctx, &fin)
		return err
	})
	if rec.Kind == wire.BackupScheduled && fin.State == wire.BackupCompleted {
		b.pruneAfter(ctx, rec)
	}
}

// pruneAfter prunes rec's namespace by its policy as soon as a scheduled
// backup completed, so it never keeps more than its retention for long.
func (b *backupRunner) pruneAfter(ctx context.Context, rec state.BackupRecord) {
	var (
		p   state.BackupPolicy
		ok  bool
		all []state.BackupRecord
	)
	err := b.s.View(func(r pebble.Reader) error {
		var err error
		if p, ok, err = state.LoadBackupPolicy(r, rec.Tenant, rec.Namespace); err != nil || !ok {
			return err
		}
		all, err = state.ListBackups(r, rec.Tenant)
		return err
	})
	if err != nil || !ok {
		return
	}
	b.prune(ctx, p, all)
}

// errStopped is the error of what a stopping node cut short.
const errStopped = "interrupted: the control node stopped while it ran; take it again"

// finish proposes an outcome, retrying a while (once when the node is
// stopping): a proposal that fails (no leader for a moment) leaves the
// record running, for the next leader to fail as interrupted.
func (b *backupRunner) finish(ctx context.Context, propose func(context.Context) error) {
	var err error
	for range 10 {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err = propose(pctx)
		cancel()
		if err == nil || ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
	b.s.log.Warn("control: could not record how a backup or restore ended", "err", err)
}

// takeStream streams the backup from the shard into the store and
// returns the stored manifest.
func (b *backupRunner) takeStream(ctx context.Context, rec state.BackupRecord) (backup.Manifest, error) {
	tg, err := b.s.target(rec.Shard, rec.Namespace)
	if err != nil {
		return backup.Manifest{}, err
	}
	h := http.Header{}
	h.Set(wire.ShardNamespaceHeader, tenancy.ShardNamespace(rec.Tenant, rec.Namespace))
	resp, err := b.s.shards.send(ctx, tg, shardclient.Request{Method: http.MethodGet, Path: backupPath, Header: h})
	if err != nil {
		return backup.Manifest{}, err
	}
	defer resp.Body.Close()
	if _, err := b.store.Put(ctx, rec.StoreID(), backup.Manifest{}, resp.Body); err != nil {
		return backup.Manifest{}, fmt.Errorf("store the stream: %w", err)
	}
	m, err := b.store.Manifest(ctx, rec.StoreID())
	if err != nil {
		return backup.Manifest{}, fmt.Errorf("read the stored manifest: %w", err)
	}
	// The stream must be the namespace asked for, from its shard.
	sns := tenancy.ShardNamespace(rec.Tenant, rec.Namespace)
	if (m.Namespace != rec.Namespace && m.Namespace != sns) || m.ShardID != rec.Shard || (m.Tenant != "" && m.Tenant != rec.Tenant) {
		_ = b.store.Delete(context.WithoutCancel(ctx), rec.StoreID())
		return m, fmt.Errorf("the shard answered with a backup of %s/%s on shard %s", m.Tenant, m.Namespace, m.ShardID)
	}
	return m, nil
}

// restore runs a started restore: for a replace, the pre_restore backup
// first (its failure fails the restore, nothing replaced); then the
// stored stream to the target namespace's shard.
func (b *backupRunner) restore(ctx context.Context, st state.RestoreStarted) {
	rec, r := st.Backup, *st.Backup.LastRestore
	fin := state.FinishRestoreCmd{Tenant: rec.Tenant, BackupID: rec.ID, RestoreID: r.ID}
	rctx, cancel := context.WithTimeout(ctx, 2*maxRunTime) // a replace takes a backup first
	res, err := b.restoreStream(rctx, st)
	cancel()
	fin.State = state.RunEnd(err)
	if err != nil {
		fin.Error = err.Error()
		if ctx.Err() != nil {
			fin.Error = errStopped + "; the namespace may hold part of it: restore again"
		}
		b.s.log.Warn("control: restore failed", "tenant", rec.Tenant, "backup", rec.ID, "target", r.TargetNamespace, "err", err)
		if r.Mode == wire.RestoreNew {
			b.s.DropNamespace(rec.Tenant, r.TargetNamespace)
		}
	} else {
		fin.Result = &res
	}
	b.finish(ctx, func(ctx context.Context) error {
		err := b.s.FinishRestore(ctx, &fin)
		return err
	})
}

func (b *backupRunner) restoreStream(ctx context.Context, st state.RestoreStarted) (wire.RestoreResult, error) {
	rec, r := st.Backup, *st.Backup.LastRestore
	// The stored file must be the backup the catalog describes (a valid
	// stream of another tenant's swapped in under its id verifies by
	// itself): checked whole before anything is taken or applied, and
	// again as it streams to the shard.
	want := service.BackupExpect(rec)
	if err := backup.VerifyStored(ctx, b.store, rec.StoreID(), want); err != nil {
		if errors.Is(err, backup.ErrMismatch) || errors.Is(err, backup.ErrCorrupt) {
			b.s.log.Error("control: a stored backup does not match its catalog entry", "tenant", rec.Tenant, "backup", rec.ID, "err", err)
			err = errors.New("the stored backup does not match its catalog entry (checksum, size, tenant or namespace): nothing was restored")
		} else {
			err = fmt.Errorf("read the stored backup: %w; nothing was restored", err)
		}
		if pre := st.PreRestore; pre != nil { // never taken: ended with the restore's reason
			b.finish(ctx, func(ctx context.Context) error {
				return b.s.FinishBackup(ctx, &state.FinishBackupCmd{Tenant: pre.Tenant, ID: pre.ID, State: state.RunEnd(err), Error: err.Error()})
			})
		}
		return wire.RestoreResult{}, err
	}
	if st.PreRestore != nil {
		b.take(ctx, *st.PreRestore)
		pre, err := service.ViewValue(b.s.Service, func(rd pebble.Reader) (state.BackupRecord, error) {
			return state.LoadBackup(rd, rec.Tenant, st.PreRestore.ID)
		})
		if err != nil {
			return wire.RestoreResult{}, err
		}
		if pre.State != wire.BackupCompleted {
			return wire.RestoreResult{}, fmt.Errorf("the pre_restore backup %s of namespace %q %s (%s): nothing was replaced", pre.ID, pre.Namespace, pre.State, pre.Error)
		}
	}
	ns, err := service.ViewValue(b.s.Service, func(rd pebble.Reader) (state.Namespace, error) {
		return state.LoadNamespace(rd, rec.Tenant, r.TargetNamespace)
	})
	if err != nil {
		return wire.RestoreResult{}, err
	}
	tg, err := b.s.target(ns.ShardID, r.TargetNamespace)
	if err != nil {
		return wire.RestoreResult{}, err
	}
	h := http.Header{}
	h.Set(wire.ShardNamespaceHeader, tenancy.ShardNamespace(rec.Tenant, r.TargetNamespace))
	h.Set("Content-Type", wire.BackupContentType)
	// The stored stream is opened afresh for each try: a node that was not
	// the leader applied nothing of it.
	resp, err := b.s.shards.send(ctx, tg, shardclient.Request{Method: http.MethodPost, Path: restorePath + "?mode=" + r.Mode, Header: h,
		Body: func() (io.ReadCloser, error) {
			body, err := b.store.Get(ctx, rec.StoreID())
			if err != nil {
				return nil, fmt.Errorf("open the stored backup: %w", err)
			}
			return backup.Verified(body, want), nil
		}})
	if err != nil {
		return wire.RestoreResult{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxShardError))
	if err != nil {
		return wire.RestoreResult{}, err
	}
	var res wire.RestoreResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return wire.RestoreResult{}, fmt.Errorf("undecodable restore answer: %w", err)
	}
	return res, nil
}

// runLoop is the leader's backup duties, every backupTick, until ctx ends.
func (b *backupRunner) runLoop(ctx context.Context) {
	b.s.whileLeading(ctx, func(ledLong bool) { b.round(ctx, ledLong) })
}

// whileLeading calls tick every backupTick while this node leads, until
// ctx ends; ledLong: it has led for Config.BackupOrphanAfter, long enough
// that work no runner of this node holds is an earlier leader's.
func (s *Leader) whileLeading(ctx context.Context, tick func(ledLong bool)) {
	t := time.NewTicker(backupTick)
	defer t.Stop()
	var ledSince time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !s.IsLeader() {
			ledSince = time.Time{}
			continue
		}
		if ledSince.IsZero() {
			ledSince = time.Now()
		}
		tick(time.Since(ledSince) >= s.cfg.BackupOrphanAfter)
	}
}

// round does one pass of the leader's duties.
func (b *backupRunner) round(ctx context.Context, orphans bool) {
	var (
		policies []state.BackupPolicy
		all      []state.BackupRecord
	)
	err := b.s.View(func(r pebble.Reader) error {
		var err error
		if policies, err = state.ListBackupPolicies(r); err != nil {
			return err
		}
		all, err = state.ListAllBackups(r)
		return err
	})
	if err != nil {
		b.s.log.Warn("control: backup loop: read state", "err", err)
		return
	}
	if orphans {
		b.failOrphans(ctx, all)
	}
	now := b.s.cfg.Clock.Now()
	for _, p := range policies {
		if at, ok := p.Due(now); ok && p.Enabled {
			_, err := b.s.StartScheduledBackup(ctx, p, at)
			if err != nil && ctx.Err() == nil {
				b.s.log.Warn("control: scheduled backup not started", "tenant", p.Tenant, "namespace", p.Namespace, "err", err)
			}
		}
		b.prune(ctx, p, all)
	}
}

// failOrphans fails the backups and restores left running by an earlier
// leader.
func (b *backupRunner) failOrphans(ctx context.Context, all []state.BackupRecord) {
	const why = "interrupted: the control leader changed while it ran; take it again"
	failed := state.RunEnd(errors.New(why))
	for _, rec := range all {
		if rec.State == wire.BackupRunning && !b.running(rec.ID) {
			err := b.s.FinishBackup(ctx, &state.FinishBackupCmd{Tenant: rec.Tenant, ID: rec.ID, State: failed, Error: why})
			if err == nil {
				b.s.log.Warn("control: backup interrupted by a leader change", "tenant", rec.Tenant, "backup", rec.ID)
			}
		}
		if r := rec.LastRestore; r != nil && r.State == wire.BackupRunning && !b.running(r.ID) {
			_ = b.s.FinishRestore(ctx, &state.FinishRestoreCmd{Tenant: rec.Tenant, BackupID: rec.ID, RestoreID: r.ID,
				State: failed, Error: "interrupted: the control leader changed while it ran; the namespace may hold part of it: restore again"})
		}
	}
}

// prune deletes the oldest completed scheduled backups of p's namespace
// beyond its retention.
func (b *backupRunner) prune(ctx context.Context, p state.BackupPolicy, all []state.BackupRecord) {
	var done []state.BackupRecord // by id, so oldest first
	for _, rec := range all {
		if rec.Tenant == p.Tenant && rec.Namespace == p.Namespace && rec.Kind == wire.BackupScheduled && rec.State == wire.BackupCompleted {
			done = append(done, rec)
		}
	}
	for i := 0; i < len(done)-p.Retention; i++ {
		rec := done[i]
		if r := rec.LastRestore; r != nil && r.State == wire.BackupRunning {
			continue
		}
		if err := b.s.DeleteStored(ctx, rec); err != nil {
			b.s.log.Warn("control: prune backup", "backup", rec.ID, "err", err)
			continue
		}
		if err := b.s.ForgetBackup(ctx, rec.Tenant, rec.ID); err != nil {
			b.s.log.Warn("control: prune backup", "backup", rec.ID, "err", err)
		}
	}
}
