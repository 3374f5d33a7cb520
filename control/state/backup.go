package state

import (
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// The backup catalog: a record per backup, written as it starts (running)
// and as it ends (completed with its manifest's figures, or failed), and
// the latest restore from it; and a backup policy per namespace. The
// streams themselves are in the backup store (backup_run.go).

// BackupRecord is a backup's catalog entry.
type BackupRecord struct {
	Tenant string `json:"tenant"`
	wire.Backup
}

// StoreID is the backup's id in the store: under its tenant, so a store
// lists a tenant's backups together.
func (b BackupRecord) StoreID() string { return b.Tenant + "/" + b.ID }

// BackupPolicy is a namespace's policy. Since is when it was last set: a
// policy runs at the first time its cron names after Since and LastRun,
// so setting one never fires the runs it would have had before.
type BackupPolicy struct {
	Tenant    string    `json:"tenant"`
	Namespace string    `json:"namespace"`
	Cron      string    `json:"cron"`
	Timezone  string    `json:"timezone"`
	Retention int       `json:"retention"`
	Enabled   bool      `json:"enabled"`
	Since     time.Time `json:"since"`
	LastRun   time.Time `json:"last_run,omitzero"` // the scheduled time of its last run
}

// StartBackupCmd records a backup as running. A scheduled one names the
// run time it is for, which becomes its policy's LastRun in the same
// entry: a run is started at most once, whichever leader starts it.
type StartBackupCmd struct {
	Tenant    string    `json:"tenant"`
	ID        string    `json:"id"`
	Namespace string    `json:"namespace"`
	Kind      string    `json:"kind"`
	RunAt     time.Time `json:"run_at,omitzero"`
}

// FinishBackupCmd ends a running backup; a backup no longer running (an
// interrupted one a new leader failed) is left as it is.
type FinishBackupCmd struct {
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

type DeleteBackupCmd struct {
	Tenant string `json:"tenant"`
	ID     string `json:"id"`
}

type PutBackupPolicyCmd struct {
	BackupPolicy
}

type DeleteBackupPolicyCmd struct {
	Tenant    string `json:"tenant"`
	Namespace string `json:"namespace"`
}

// StartRestoreCmd records a restore from a completed backup as running;
// a replace restore starts its pre_restore backup of the namespace in the
// same entry, so either both start or neither.
type StartRestoreCmd struct {
	Tenant     string             `json:"tenant"`
	BackupID   string             `json:"backup_id"`
	Restore    wire.BackupRestore `json:"restore"`
	PreRestore *StartBackupCmd    `json:"pre_restore,omitempty"`
}

// FinishRestoreCmd ends the running restore RestoreID of a backup.
type FinishRestoreCmd struct {
	Tenant    string              `json:"tenant"`
	BackupID  string              `json:"backup_id"`
	RestoreID string              `json:"restore_id"`
	State     string              `json:"state"`
	Result    *wire.RestoreResult `json:"result,omitempty"`
	Error     string              `json:"error,omitempty"`
}

func applyStartBackup(tx *replica.Tx, c *StartBackupCmd) (BackupRecord, error) {
	ns, err := LoadNamespace(tx, c.Tenant, c.Namespace)
	if err != nil {
		return BackupRecord{}, businessErr(err)
	}
	if c.Kind == wire.BackupScheduled {
		p, ok, err := LoadBackupPolicy(tx, c.Tenant, c.Namespace)
		if err != nil {
			panic(err)
		}
		if !ok || !p.Enabled || !c.RunAt.After(p.LastRun) {
			return BackupRecord{}, apierr.New(apierr.Conflict, "the policy of namespace %q has no run due at %s", c.Namespace, c.RunAt)
		}
		p.LastRun = c.RunAt
		mustSetJSON(tx, layout.BackupPolicy(c.Tenant, c.Namespace), p)
	}
	running := ""
	err = scanJSON(tx, layout.Backups(c.Tenant), func(_ []byte, b BackupRecord) {
		if b.Namespace == c.Namespace && b.State == wire.BackupRunning {
			running = b.ID
		}
	})
	if err != nil {
		panic(err)
	}
	if running != "" {
		return BackupRecord{}, apierr.New(apierr.Conflict, "backup %s of namespace %q is running: one at a time", running, c.Namespace)
	}
	b := BackupRecord{Tenant: c.Tenant, Backup: wire.Backup{ID: c.ID, Namespace: c.Namespace, State: runSteps[RunStart][""],
		Kind: c.Kind, CreatedAt: tx.Now, Shard: ns.ShardID}}
	mustSetJSON(tx, layout.Backup(c.Tenant, c.ID), b)
	return b, nil
}

func applyFinishBackup(tx *replica.Tx, c *FinishBackupCmd) (BackupRecord, error) {
	b, err := LoadBackup(tx, c.Tenant, c.ID)
	if err != nil {
		return BackupRecord{}, businessErr(err)
	}
	if b.State != wire.BackupRunning {
		return b, nil
	}
	to, err := finishTo(b.State, c.State)
	if err != nil {
		return b, err
	}
	now := tx.Now
	b.State, b.CompletedAt, b.Error = to, &now, c.Error
	b.Size, b.Jobs, b.Records, b.Checksum, b.RaftIndex = c.Size, c.Jobs, c.Records, c.Checksum, c.RaftIndex
	mustSetJSON(tx, layout.Backup(c.Tenant, c.ID), b)
	return b, nil
}

func applyDeleteBackup(tx *replica.Tx, c *DeleteBackupCmd) (BackupRecord, error) {
	b, err := LoadBackup(tx, c.Tenant, c.ID)
	if err != nil {
		return BackupRecord{}, businessErr(err)
	}
	if b.State == wire.BackupRunning {
		return BackupRecord{}, apierr.New(apierr.Conflict, "backup %s is running: delete it once it has ended", b.ID)
	}
	if b.LastRestore != nil && b.LastRestore.State == wire.BackupRunning {
		return BackupRecord{}, apierr.New(apierr.Conflict, "backup %s is being restored: delete it once the restore has ended", b.ID)
	}
	mustDelete(tx, layout.Backup(c.Tenant, c.ID))
	return b, nil
}

func applyPutBackupPolicy(tx *replica.Tx, c *PutBackupPolicyCmd) (BackupPolicy, error) {
	if _, err := LoadNamespace(tx, c.Tenant, c.Namespace); err != nil {
		return BackupPolicy{}, businessErr(err)
	}
	p := c.BackupPolicy
	if old, ok, err := LoadBackupPolicy(tx, c.Tenant, c.Namespace); err != nil {
		panic(err)
	} else if ok {
		p.LastRun = old.LastRun
	}
	p.Since = tx.Now
	mustSetJSON(tx, layout.BackupPolicy(c.Tenant, c.Namespace), p)
	return p, nil
}

func applyDeleteBackupPolicy(tx *replica.Tx, c *DeleteBackupPolicyCmd) (replica.None, error) {
	if _, ok, err := LoadBackupPolicy(tx, c.Tenant, c.Namespace); err != nil {
		panic(err)
	} else if !ok {
		return replica.None{}, apierr.New(apierr.NotFound, "namespace %q has no backup policy", c.Namespace)
	}
	mustDelete(tx, layout.BackupPolicy(c.Tenant, c.Namespace))
	return replica.None{}, nil
}

// RestoreStarted is a started restore: the backup it restores and, for a
// replace, the pre_restore backup to take first.
type RestoreStarted struct {
	Backup     BackupRecord  `json:"backup"`
	PreRestore *BackupRecord `json:"pre_restore,omitempty"`
}

func applyStartRestore(tx *replica.Tx, c *StartRestoreCmd) (RestoreStarted, error) {
	b, err := LoadBackup(tx, c.Tenant, c.BackupID)
	if err != nil {
		return RestoreStarted{}, businessErr(err)
	}
	if b.State != wire.BackupCompleted {
		return RestoreStarted{}, apierr.New(apierr.Conflict, "backup %s is %s: only a completed backup can be restored", b.ID, b.State)
	}
	if b.LastRestore != nil && b.LastRestore.State == wire.BackupRunning {
		return RestoreStarted{}, apierr.New(apierr.Conflict, "backup %s is being restored (%s): one restore at a time", b.ID, b.LastRestore.ID)
	}
	if id, ok := RunningMove(tx, c.Tenant, c.Restore.TargetNamespace); ok {
		return RestoreStarted{}, ErrMoveRunning(id, c.Restore.TargetNamespace, "restore into it")
	}
	var out RestoreStarted
	if c.PreRestore != nil {
		pre, err := applyStartBackup(tx, c.PreRestore)
		if err != nil {
			return RestoreStarted{}, err
		}
		out.PreRestore = &pre
	}
	r := c.Restore
	r.State, r.CreatedAt, r.CompletedAt, r.Result, r.Error = runSteps[RunStart][""], tx.Now, nil, nil, ""
	b.LastRestore = &r
	mustSetJSON(tx, layout.Backup(c.Tenant, c.BackupID), b)
	out.Backup = b
	return out, nil
}

func applyFinishRestore(tx *replica.Tx, c *FinishRestoreCmd) (BackupRecord, error) {
	b, err := LoadBackup(tx, c.Tenant, c.BackupID)
	if err != nil {
		return BackupRecord{}, businessErr(err)
	}
	r := b.LastRestore
	if r == nil || r.ID != c.RestoreID || r.State != wire.BackupRunning {
		return b, nil
	}
	to, err := finishTo(r.State, c.State)
	if err != nil {
		return b, err
	}
	now := tx.Now
	r.State, r.CompletedAt, r.Result, r.Error = to, &now, c.Result, c.Error
	mustSetJSON(tx, layout.Backup(c.Tenant, c.BackupID), b)
	return b, nil
}

func LoadBackup(r pebble.Reader, tid, id string) (BackupRecord, error) {
	var b BackupRecord
	ok, err := getJSON(r, layout.Backup(tid, id), &b)
	if err == nil && !ok {
		err = apierr.New(apierr.NotFound, "backup %q not found", id)
	}
	return b, err
}

func LoadBackupPolicy(r pebble.Reader, tid, ns string) (BackupPolicy, bool, error) {
	var p BackupPolicy
	ok, err := getJSON(r, layout.BackupPolicy(tid, ns), &p)
	return p, ok, err
}

// finishTo is the state a finish command ending a run in state from at
// state want leads to, by the lifecycle table: refused when want is no
// end of a run.
func finishTo(from, want string) (string, error) {
	step, ok := finishStep(want)
	if !ok {
		return "", apierr.New(apierr.Conflict, "a run ends completed or failed, not %q", want)
	}
	to, ok := RunNext(from, step)
	if !ok {
		return "", apierr.New(apierr.Conflict, "a run that is %s cannot %s", from, step)
	}
	return to, nil
}
