package service

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/oklog/ulid/v2"
	"github.com/robfig/cron/v3"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// The tenant's backups, as control's internal API serves them to the
// gateway (which has checked the caller's role and namespaces). Taking
// and restoring run on the leader after the answer (backup_run.go).

// checkBackupID answers 404 for anything that is not a backup id, so a
// malformed id and another tenant's look the same.
func checkBackupID(tid, id string) error {
	rest, ok := strings.CutPrefix(id, wire.BackupIDPrefix)
	if _, err := ulid.ParseStrict(strings.ToUpper(rest)); !ok || err != nil || tenancy.ValidateTenantID(tid) != nil {
		return apierr.New(apierr.NotFound, "backup %q not found", id)
	}
	return nil
}

func checkTenantNamespace(tid, ns string) error {
	if tenancy.ValidateTenantID(tid) != nil {
		return apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	if err := tenancy.ValidateNamespace(ns); err != nil {
		return apierr.Field("namespace", "%v", err)
	}
	return nil
}

// CreateBackup starts a manual backup of namespace ns: the answer is the
// running record; the leader takes it after.
func (s *Service) CreateBackup(ctx context.Context, tid, ns string) (wire.Backup, error) {
	if err := checkTenantNamespace(tid, ns); err != nil {
		return wire.Backup{}, err
	}
	return s.StartBackup(ctx, &state.StartBackupCmd{Tenant: tid, ID: NewID(wire.BackupIDPrefix), Namespace: ns, Kind: wire.BackupManual})
}

// StartBackup records a backup as running and starts taking it.
func (s *Service) StartBackup(ctx context.Context, c *state.StartBackupCmd) (wire.Backup, error) {
	release := s.runner.HoldBackups(c.ID)
	b, err := propose(ctx, s, state.OpStartBackup, c)
	if err != nil || replayed(ctx) { // a replay's backup is the first request's, taken by then or by a new leader
		release()
		return b.Backup, err
	}
	s.runner.TakeBackup(b, release)
	return b.Backup, nil
}

// Backups lists tenant tid's backups, newest first; only those of the
// namespaces named when any are.
func (s *Service) Backups(ctx context.Context, tid string, namespaces []string) ([]wire.Backup, error) {
	if tenancy.ValidateTenantID(tid) != nil {
		return nil, apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	for _, ns := range namespaces {
		if err := tenancy.ValidateNamespace(ns); err != nil {
			return nil, apierr.Field("namespace", "%v", err)
		}
	}
	list, err := ViewValue(s, func(r pebble.Reader) ([]state.BackupRecord, error) { return state.ListBackups(r, tid) })
	if err != nil {
		return nil, err
	}
	out := []wire.Backup{}
	for _, b := range slices.Backward(list) {
		if len(namespaces) == 0 || slices.Contains(namespaces, b.Namespace) {
			out = append(out, b.Backup)
		}
	}
	return out, nil
}

// Backup returns one backup of tenant tid.
func (s *Service) Backup(ctx context.Context, tid, id string) (wire.Backup, error) {
	b, err := s.backupRecord(tid, id)
	return b.Backup, err
}

func (s *Service) backupRecord(tid, id string) (state.BackupRecord, error) {
	if err := checkBackupID(tid, id); err != nil {
		return state.BackupRecord{}, err
	}
	return ViewValue(s, func(r pebble.Reader) (state.BackupRecord, error) { return state.LoadBackup(r, tid, id) })
}

// DeleteBackup deletes a backup that is not running nor being restored:
// its stream from the store, then its record.
func (s *Service) DeleteBackup(ctx context.Context, tid, id string) error {
	b, err := s.backupRecord(tid, id)
	if err != nil {
		return err
	}
	if b.State == wire.BackupRunning || (b.LastRestore != nil && b.LastRestore.State == wire.BackupRunning) {
		_, err := propose(ctx, s, state.OpDeleteBackup, &state.DeleteBackupCmd{Tenant: tid, ID: id}) // refuses, saying why
		return err
	}
	if err := s.DeleteStored(ctx, b); err != nil {
		return err
	}
	_, err = propose(ctx, s, state.OpDeleteBackup, &state.DeleteBackupCmd{Tenant: tid, ID: id})
	return err
}

// OpenBackup opens a completed backup's stream and returns its size.
func (s *Service) OpenBackup(ctx context.Context, tid, id string) (io.ReadCloser, int64, error) {
	b, err := s.backupRecord(tid, id)
	if err != nil {
		return nil, 0, err
	}
	if b.State != wire.BackupCompleted {
		return nil, 0, apierr.New(apierr.Conflict, "backup %s is %s: only a completed backup can be downloaded", id, b.State)
	}
	// The store's manifest first (cheap), then the stream as it goes: a
	// download of a stored file that is not this backup (another's
	// swapped in) is cut before its end, never received whole.
	e := BackupExpect(b)
	m, err := s.cfg.BackupStore.Manifest(ctx, b.StoreID())
	if err != nil {
		return nil, 0, s.storeErr(b, err)
	}
	if err := e.Check(m, m.StoredBytes); err != nil {
		s.log.Error("control: a stored backup does not match its catalog entry", "tenant", tid, "backup", id, "err", err)
		return nil, 0, errMismatch(id)
	}
	rc, err := s.cfg.BackupStore.Get(ctx, b.StoreID())
	if err != nil {
		return nil, 0, s.storeErr(b, err)
	}
	return backup.Verified(rc, e), b.Size, nil
}

// scheduleKind is the shards' record kind name of schedules in a backup
// stream (shard/service.BackupKinds), which a manifest counts.
const scheduleKind = "schedules"

// BackupExpect is what b's catalog entry says its stored stream is.
func BackupExpect(b state.BackupRecord) backup.Expect {
	return backup.Expect{Tenant: b.Tenant, Namespace: b.Namespace, ShardNS: tenancy.ShardNamespace(b.Tenant, b.Namespace),
		SHA256: b.Checksum, StoredBytes: b.Size}
}

// errMismatch is the API's error for a stored backup that is not the one
// its catalog entry describes: the details go to the log, not to the
// tenant (they may name another's).
func errMismatch(id string) error {
	return apierr.New(apierr.Conflict, "backup %s: the stored file does not match its catalog entry (checksum, size, tenant or namespace); it cannot be downloaded or restored", id)
}

// RestoreBackup starts restoring a completed backup: into a new namespace
// it creates (TargetNamespace; 409 if it exists), or over the backup's own
// namespace (Replace), after a pre_restore backup of it. The answer is
// the backup with its LastRestore running.
func (s *Service) RestoreBackup(ctx context.Context, tid, id string, order wire.RestoreOrder) (wire.Backup, error) {
	req := order.RestoreRequest
	b, err := s.backupRecord(tid, id)
	if err != nil {
		return wire.Backup{}, err
	}
	if b.State != wire.BackupCompleted {
		return wire.Backup{}, apierr.New(apierr.Conflict, "backup %s is %s: only a completed backup can be restored", id, b.State)
	}
	// The store's manifest now, before anything is made; the runner reads
	// the whole stream against the entry before it applies any of it.
	m, err := s.cfg.BackupStore.Manifest(ctx, b.StoreID())
	if err != nil {
		return wire.Backup{}, s.storeErr(b, err)
	}
	if err := BackupExpect(b).Check(m, m.StoredBytes); err != nil {
		s.log.Error("control: a stored backup does not match its catalog entry", "tenant", tid, "backup", id, "err", err)
		return wire.Backup{}, errMismatch(id)
	}
	// Every schedule a restore brings counts against the plan, as a
	// create's does: the gateway counted the room left on the shards.
	if room, n := order.ScheduleRoom, int64(m.Counts[scheduleKind]); room != nil && n > max(*room, 0) {
		return wire.Backup{}, apierr.Retry(apierr.QuotaExceeded, 5,
			"backup %s holds %d schedules and the plan's max_schedules leaves room for %d: delete schedules to restore it", id, n, max(*room, 0))
	}
	switch {
	case req.Replace && req.TargetNamespace != "":
		return wire.Backup{}, apierr.Field("target_namespace", "give either target_namespace (a new namespace) or replace: true, not both")
	case !req.Replace && req.TargetNamespace == "":
		return wire.Backup{}, apierr.Field("target_namespace", "target_namespace (a new namespace) or replace: true is required")
	}
	c := state.StartRestoreCmd{Tenant: tid, BackupID: id, Restore: wire.BackupRestore{ID: NewID(wire.RestoreIDPrefix)}}
	if req.Replace {
		c.Restore.Mode, c.Restore.TargetNamespace = wire.RestoreReplace, b.Namespace
		c.PreRestore = &state.StartBackupCmd{Tenant: tid, ID: NewID(wire.BackupIDPrefix), Namespace: b.Namespace, Kind: wire.BackupPreRestore}
		c.Restore.PreRestoreBackup = c.PreRestore.ID
	} else {
		if err := tenancy.ValidateNamespace(req.TargetNamespace); err != nil {
			return wire.Backup{}, apierr.Field("target_namespace", "%v", err)
		}
		c.Restore.Mode, c.Restore.TargetNamespace = wire.RestoreNew, req.TargetNamespace
		// The namespace is made as POST /namespaces makes it (placement
		// included) before the answer, so a name taken is a 409 now.
		if _, err := s.CreateNamespace(ctx, tid, req.TargetNamespace); err != nil {
			if apierr.CodeOf(err) == apierr.BadRequest {
				return wire.Backup{}, apierr.Field("target_namespace", "%v", apierr.From(err).Message)
			}
			return wire.Backup{}, err
		}
	}
	ids := []string{c.Restore.ID}
	if c.PreRestore != nil {
		ids = append(ids, c.PreRestore.ID)
	}
	release := s.runner.HoldBackups(ids...)
	started, err := propose(ctx, s, state.OpStartRestore, &c)
	if err != nil {
		release()
		if !req.Replace {
			s.DropNamespace(tid, req.TargetNamespace)
		}
		return wire.Backup{}, err
	}
	s.runner.Restore(started, release)
	return started.Backup.Backup, nil
}

// DefaultBackupTimezone is a policy's time zone when none is given.
const DefaultBackupTimezone = "UTC"

// BackupPolicy returns namespace ns's backup policy (404 if it has none).
func (s *Service) BackupPolicy(ctx context.Context, tid, ns string) (wire.BackupPolicy, error) {
	if err := checkTenantNamespace(tid, ns); err != nil {
		return wire.BackupPolicy{}, err
	}
	p, err := ViewValue(s, func(r pebble.Reader) (state.BackupPolicy, error) {
		if _, err := state.LoadNamespace(r, tid, ns); err != nil {
			return state.BackupPolicy{}, err
		}
		p, ok, err := state.LoadBackupPolicy(r, tid, ns)
		if err == nil && !ok {
			err = apierr.New(apierr.NotFound, "namespace %q has no backup policy", ns)
		}
		return p, err
	})
	if err != nil {
		return wire.BackupPolicy{}, err
	}
	return policyView(p), nil
}

// PutBackupPolicy sets namespace ns's backup policy.
func (s *Service) PutBackupPolicy(ctx context.Context, tid, ns string, req wire.BackupPolicyRequest) (wire.BackupPolicy, error) {
	if err := checkTenantNamespace(tid, ns); err != nil {
		return wire.BackupPolicy{}, err
	}
	if req.Timezone == "" {
		req.Timezone = DefaultBackupTimezone
	}
	sched, loc, err := state.ParseBackupCron(req.Cron, req.Timezone)
	if err != nil {
		return wire.BackupPolicy{}, err
	}
	// Whatever the operator's minimum (none in jobbie dev), "@every 0s"
	// is not a period: the cron library would run it every second.
	if err := wire.CheckEvery(req.Cron); err != nil {
		return wire.BackupPolicy{}, apierr.Field("cron", "%v", err)
	}
	if err := checkBackupInterval(sched, loc, s.cfg.Clock.Now(), s.cfg.BackupPolicyMinInterval); err != nil {
		return wire.BackupPolicy{}, err
	}
	if req.Retention < 1 || req.Retention > wire.MaxBackupRetention {
		return wire.BackupPolicy{}, apierr.Field("retention", "retention must be a count of backups kept, 1 to %d", wire.MaxBackupRetention)
	}
	enabled := req.Enabled == nil || *req.Enabled
	p, err := propose(ctx, s, state.OpPutBackupPolicy, &state.PutBackupPolicyCmd{BackupPolicy: state.BackupPolicy{Tenant: tid, Namespace: ns,
		Cron: strings.TrimSpace(req.Cron), Timezone: req.Timezone, Retention: req.Retention, Enabled: enabled}})
	if err != nil {
		return wire.BackupPolicy{}, err
	}
	return policyView(p), nil
}

// DeleteBackupPolicy removes namespace ns's backup policy; its backups stay.
func (s *Service) DeleteBackupPolicy(ctx context.Context, tid, ns string) error {
	if err := checkTenantNamespace(tid, ns); err != nil {
		return err
	}
	_, err := propose(ctx, s, state.OpDelBackupPolicy, &state.DeleteBackupPolicyCmd{Tenant: tid, Namespace: ns})
	return err
}

func policyView(p state.BackupPolicy) wire.BackupPolicy {
	v := wire.BackupPolicy{Namespace: p.Namespace, Cron: p.Cron, Timezone: p.Timezone, Retention: p.Retention, Enabled: p.Enabled}
	if !p.LastRun.IsZero() {
		t := p.LastRun
		v.LastRunAt = &t
	}
	if next, ok := p.Next(); ok && p.Enabled {
		v.NextRunAt = &next
	}
	return v
}

// backupIntervalRuns is how many runs after now checkBackupInterval
// looks at: enough for a cron whose short gap comes once a day or a week
// (two hours listed, or two days) to show it.
const backupIntervalRuns = 64

// checkBackupInterval refuses (400 naming cron) a schedule that fires
// more often than minGap (0: any), by the gaps between its next runs after
// now in loc.
func checkBackupInterval(sched cron.Schedule, loc *time.Location, now time.Time, minGap time.Duration) error {
	if minGap <= 0 {
		return nil
	}
	prev := sched.Next(now.In(loc))
	for range backupIntervalRuns {
		if prev.IsZero() {
			return nil
		}
		next := sched.Next(prev)
		if next.IsZero() {
			return nil
		}
		if gap := next.Sub(prev); gap < minGap {
			return apierr.Field("cron", "cron runs %s apart (at %s then %s): backup policies may run at most every %s",
				wire.FormatDuration(gap), prev.Format(time.RFC3339), next.Format(time.RFC3339), wire.FormatDuration(minGap))
		}
		prev = next
	}
	return nil
}

// errBackupStore is a store failure as the API shows it.
func errBackupStore(err error) error {
	if errors.Is(err, backup.ErrNotFound) {
		return apierr.New(apierr.NotFound, "the backup's stream is not in this control plane's backup store")
	}
	return apierr.Retry(apierr.Unavailable, 5, "the backup store is unavailable: %v", err)
}

// DropNamespace removes a namespace made for a restore that did not
// happen (the shard leaves nothing of a failed restore).
func (s *Service) DropNamespace(tid, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.DeleteNamespace(ctx, tid, ns); err != nil {
		s.log.Warn("control: could not remove the namespace of a failed restore", "tenant", tid, "namespace", ns, "err", err)
	}
}

// DeleteStored removes a backup's stream; one already gone is fine.
func (s *Service) DeleteStored(ctx context.Context, rec state.BackupRecord) error {
	if rec.State != wire.BackupCompleted {
		// A failed backup may have left nothing, or (interrupted) a
		// stream its old leader finished after.
		if err := s.cfg.BackupStore.Delete(ctx, rec.StoreID()); err != nil && !errors.Is(err, backup.ErrNotFound) {
			return errBackupStore(err)
		}
		return nil
	}
	if err := s.cfg.BackupStore.Delete(ctx, rec.StoreID()); err != nil && !errors.Is(err, backup.ErrNotFound) {
		return errBackupStore(err)
	}
	return nil
}

// storeErr is a store failure reading rec.
func (s *Service) storeErr(rec state.BackupRecord, err error) error {
	s.log.Warn("control: backup store", "backup", rec.ID, "err", err)
	return errBackupStore(err)
}

// StartScheduledBackup starts policy p's run due at at: its record names
// the run, which becomes the policy's last in the same entry, so a run is
// started at most once, whichever leader starts it.
func (s *Service) StartScheduledBackup(ctx context.Context, p state.BackupPolicy, at time.Time) (wire.Backup, error) {
	return s.StartBackup(ctx, &state.StartBackupCmd{Tenant: p.Tenant, ID: NewID(wire.BackupIDPrefix),
		Namespace: p.Namespace, Kind: wire.BackupScheduled, RunAt: at})
}
