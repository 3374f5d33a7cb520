package control

import (
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// The backup catalog: a record per backup, written as it starts (running)
// and as it ends (completed with its manifest's figures, or failed), and
// the latest restore from it; and a backup policy per namespace. The
// streams themselves are in the backup store (backup_run.go).

// backupRecord is a backup's catalog entry.
type backupRecord struct {
	Tenant string `json:"tenant"`
	wire.Backup
}

// storeID is the backup's id in the store: under its tenant, so a store
// lists a tenant's backups together.
func (b backupRecord) storeID() string { return b.Tenant + "/" + b.ID }

// backupPolicy is a namespace's policy. Since is when it was last set: a
// policy runs at the first time its cron names after Since and LastRun,
// so setting one never fires the runs it would have had before.
type backupPolicy struct {
	Tenant    string    `json:"tenant"`
	Namespace string    `json:"namespace"`
	Cron      string    `json:"cron"`
	Timezone  string    `json:"timezone"`
	Retention int       `json:"retention"`
	Enabled   bool      `json:"enabled"`
	Since     time.Time `json:"since"`
	LastRun   time.Time `json:"last_run,omitzero"` // the scheduled time of its last run
}

// startBackupCmd records a backup as running. A scheduled one names the
// run time it is for, which becomes its policy's LastRun in the same
// entry: a run is started at most once, whichever leader starts it.
type startBackupCmd struct {
	Tenant    string    `json:"tenant"`
	ID        string    `json:"id"`
	Namespace string    `json:"namespace"`
	Kind      string    `json:"kind"`
	RunAt     time.Time `json:"run_at,omitzero"`
}

// finishBackupCmd ends a running backup; a backup no longer running (an
// interrupted one a new leader failed) is left as it is.
type finishBackupCmd struct {
	Tenant    string `json:"tenant"`
	ID        string `json:"id"`
	State     string `json:"state"`
	Size      int64  `json:"size,omitempty"`
	Jobs      int64  `json:"jobs,omitempty"`
	Records   int64  `json:"records,omitempty"`
	Checksum  string `json:"checksum,omitempty"`
	RaftIndex uint64 `json:"raft_index,omitempty"`
	Error     string `json:"error,omitempty"`
}

type deleteBackupCmd struct {
	Tenant string `json:"tenant"`
	ID     string `json:"id"`
}

type putBackupPolicyCmd struct {
	backupPolicy
}

type deleteBackupPolicyCmd struct {
	Tenant    string `json:"tenant"`
	Namespace string `json:"namespace"`
}

// startRestoreCmd records a restore from a completed backup as running;
// a replace restore starts its pre_restore backup of the namespace in the
// same entry, so either both start or neither.
type startRestoreCmd struct {
	Tenant     string             `json:"tenant"`
	BackupID   string             `json:"backup_id"`
	Restore    wire.BackupRestore `json:"restore"`
	PreRestore *startBackupCmd    `json:"pre_restore,omitempty"`
}

// finishRestoreCmd ends the running restore RestoreID of a backup.
type finishRestoreCmd struct {
	Tenant    string              `json:"tenant"`
	BackupID  string              `json:"backup_id"`
	RestoreID string              `json:"restore_id"`
	State     string              `json:"state"`
	Result    *wire.RestoreResult `json:"result,omitempty"`
	Error     string              `json:"error,omitempty"`
}

func applyStartBackup(tx *replica.Tx, c *startBackupCmd) (backupRecord, error) {
	ns, err := loadNamespace(tx, c.Tenant, c.Namespace)
	if err != nil {
		return backupRecord{}, businessErr(err)
	}
	if c.Kind == wire.BackupScheduled {
		p, ok, err := loadBackupPolicy(tx, c.Tenant, c.Namespace)
		if err != nil {
			panic(err)
		}
		if !ok || !p.Enabled || !c.RunAt.After(p.LastRun) {
			return backupRecord{}, apierr.New(apierr.Conflict, "the policy of namespace %q has no run due at %s", c.Namespace, c.RunAt)
		}
		p.LastRun = c.RunAt
		mustSetJSON(tx, layout.BackupPolicy(c.Tenant, c.Namespace), p)
	}
	running := ""
	err = scanJSON(tx, layout.Backups(c.Tenant), func(_ []byte, b backupRecord) {
		if b.Namespace == c.Namespace && b.State == wire.BackupRunning {
			running = b.ID
		}
	})
	if err != nil {
		panic(err)
	}
	if running != "" {
		return backupRecord{}, apierr.New(apierr.Conflict, "backup %s of namespace %q is running: one at a time", running, c.Namespace)
	}
	b := backupRecord{Tenant: c.Tenant, Backup: wire.Backup{ID: c.ID, Namespace: c.Namespace, State: wire.BackupRunning,
		Kind: c.Kind, CreatedAt: tx.Now, Shard: ns.ShardID}}
	mustSetJSON(tx, layout.Backup(c.Tenant, c.ID), b)
	return b, nil
}

func applyFinishBackup(tx *replica.Tx, c *finishBackupCmd) (backupRecord, error) {
	b, err := loadBackup(tx, c.Tenant, c.ID)
	if err != nil {
		return backupRecord{}, businessErr(err)
	}
	if b.State != wire.BackupRunning {
		return b, nil
	}
	now := tx.Now
	b.State, b.CompletedAt, b.Error = c.State, &now, c.Error
	b.Size, b.Jobs, b.Records, b.Checksum, b.RaftIndex = c.Size, c.Jobs, c.Records, c.Checksum, c.RaftIndex
	mustSetJSON(tx, layout.Backup(c.Tenant, c.ID), b)
	return b, nil
}

func applyDeleteBackup(tx *replica.Tx, c *deleteBackupCmd) (backupRecord, error) {
	b, err := loadBackup(tx, c.Tenant, c.ID)
	if err != nil {
		return backupRecord{}, businessErr(err)
	}
	if b.State == wire.BackupRunning {
		return backupRecord{}, apierr.New(apierr.Conflict, "backup %s is running: delete it once it has ended", b.ID)
	}
	if b.LastRestore != nil && b.LastRestore.State == wire.BackupRunning {
		return backupRecord{}, apierr.New(apierr.Conflict, "backup %s is being restored: delete it once the restore has ended", b.ID)
	}
	mustDelete(tx, layout.Backup(c.Tenant, c.ID))
	return b, nil
}

func applyPutBackupPolicy(tx *replica.Tx, c *putBackupPolicyCmd) (backupPolicy, error) {
	if _, err := loadNamespace(tx, c.Tenant, c.Namespace); err != nil {
		return backupPolicy{}, businessErr(err)
	}
	p := c.backupPolicy
	if old, ok, err := loadBackupPolicy(tx, c.Tenant, c.Namespace); err != nil {
		panic(err)
	} else if ok {
		p.LastRun = old.LastRun
	}
	p.Since = tx.Now
	mustSetJSON(tx, layout.BackupPolicy(c.Tenant, c.Namespace), p)
	return p, nil
}

func applyDeleteBackupPolicy(tx *replica.Tx, c *deleteBackupPolicyCmd) (replica.None, error) {
	if _, ok, err := loadBackupPolicy(tx, c.Tenant, c.Namespace); err != nil {
		panic(err)
	} else if !ok {
		return replica.None{}, apierr.New(apierr.NotFound, "namespace %q has no backup policy", c.Namespace)
	}
	mustDelete(tx, layout.BackupPolicy(c.Tenant, c.Namespace))
	return replica.None{}, nil
}

// restoreStarted is a started restore: the backup it restores and, for a
// replace, the pre_restore backup to take first.
type restoreStarted struct {
	Backup     backupRecord  `json:"backup"`
	PreRestore *backupRecord `json:"pre_restore,omitempty"`
}

func applyStartRestore(tx *replica.Tx, c *startRestoreCmd) (restoreStarted, error) {
	b, err := loadBackup(tx, c.Tenant, c.BackupID)
	if err != nil {
		return restoreStarted{}, businessErr(err)
	}
	if b.State != wire.BackupCompleted {
		return restoreStarted{}, apierr.New(apierr.Conflict, "backup %s is %s: only a completed backup can be restored", b.ID, b.State)
	}
	if b.LastRestore != nil && b.LastRestore.State == wire.BackupRunning {
		return restoreStarted{}, apierr.New(apierr.Conflict, "backup %s is being restored (%s): one restore at a time", b.ID, b.LastRestore.ID)
	}
	if id, ok := runningMove(tx, c.Tenant, c.Restore.TargetNamespace); ok {
		return restoreStarted{}, errMoveRunning(id, c.Restore.TargetNamespace, "restore into it")
	}
	var out restoreStarted
	if c.PreRestore != nil {
		pre, err := applyStartBackup(tx, c.PreRestore)
		if err != nil {
			return restoreStarted{}, err
		}
		out.PreRestore = &pre
	}
	r := c.Restore
	r.State, r.CreatedAt, r.CompletedAt, r.Result, r.Error = wire.BackupRunning, tx.Now, nil, nil, ""
	b.LastRestore = &r
	mustSetJSON(tx, layout.Backup(c.Tenant, c.BackupID), b)
	out.Backup = b
	return out, nil
}

func applyFinishRestore(tx *replica.Tx, c *finishRestoreCmd) (backupRecord, error) {
	b, err := loadBackup(tx, c.Tenant, c.BackupID)
	if err != nil {
		return backupRecord{}, businessErr(err)
	}
	r := b.LastRestore
	if r == nil || r.ID != c.RestoreID || r.State != wire.BackupRunning {
		return b, nil
	}
	now := tx.Now
	r.State, r.CompletedAt, r.Result, r.Error = c.State, &now, c.Result, c.Error
	mustSetJSON(tx, layout.Backup(c.Tenant, c.BackupID), b)
	return b, nil
}

func loadBackup(r pebble.Reader, tid, id string) (backupRecord, error) {
	var b backupRecord
	ok, err := getJSON(r, layout.Backup(tid, id), &b)
	if err == nil && !ok {
		err = apierr.New(apierr.NotFound, "backup %q not found", id)
	}
	return b, err
}

func loadBackupPolicy(r pebble.Reader, tid, ns string) (backupPolicy, bool, error) {
	var p backupPolicy
	ok, err := getJSON(r, layout.BackupPolicy(tid, ns), &p)
	return p, ok, err
}
