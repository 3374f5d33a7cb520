package wire

import "time"

// Backups of a namespace (control keeps the catalog and the stored
// streams; the namespace's shard takes and restores them):
//
//	POST   /api/v1/backups                         CreateBackupRequest → 202 Backup
//	GET    /api/v1/backups[?namespace=]            BackupList, newest first
//	GET    /api/v1/backups/{id}                    Backup
//	DELETE /api/v1/backups/{id}                    204
//	GET    /api/v1/backups/{id}/download           the backup stream (BackupContentType)
//	POST   /api/v1/backups/{id}/restore            RestoreRequest → 202 Backup (its LastRestore running)
//	GET    /api/v1/namespaces/{name}/backup-policy BackupPolicy
//	PUT    /api/v1/namespaces/{name}/backup-policy BackupPolicyRequest → BackupPolicy
//	DELETE /api/v1/namespaces/{name}/backup-policy 204

// BackupContentType is the media type of a backup stream
// (docs/BACKUP-FORMAT.md).
const BackupContentType = "application/vnd.jobbie.backup"

// BackupIDPrefix starts every backup id ("bkp_" and a ULID); RestoreIDPrefix
// every restore's ("rst_" and a ULID).
const (
	BackupIDPrefix  = "bkp_"
	RestoreIDPrefix = "rst_"
)

// Backup states, kinds and restore modes.
const (
	BackupRunning   = "running"
	BackupCompleted = "completed"
	BackupFailed    = "failed"

	BackupManual     = "manual"      // POST /api/v1/backups
	BackupScheduled  = "scheduled"   // taken by the namespace's policy; pruned by its retention
	BackupPreRestore = "pre_restore" // what a replace restore replaced, so it can be undone

	RestoreNew     = "new"     // into a namespace created for it
	RestoreReplace = "replace" // over the backup's own namespace
)

// MaxBackupRetention bounds a policy's retention count.
const MaxBackupRetention = 1000

// Backup is one backup in the catalog. Size is the stored bytes; Jobs and
// Records count what the stream holds; Checksum is the sha256 (hex) of
// its uncompressed body; RaftIndex the shard's applied index the snapshot
// was read at. The figures are set once it completed.
type Backup struct {
	ID          string         `json:"id"`
	Namespace   string         `json:"namespace"`
	State       string         `json:"state"`
	Kind        string         `json:"kind"`
	CreatedAt   time.Time      `json:"created_at"`
	CompletedAt *time.Time     `json:"completed_at,omitempty"`
	Size        int64          `json:"size"`
	Jobs        int64          `json:"jobs"`
	Records     int64          `json:"records"`
	Checksum    string         `json:"checksum,omitempty"`
	RaftIndex   uint64         `json:"raft_index,omitempty"`
	Shard       string         `json:"shard,omitempty"`
	Error       string         `json:"error,omitempty"`
	LastRestore *BackupRestore `json:"last_restore,omitempty"`
}

// BackupRestore is the latest restore from a backup: running, then
// completed with the shard's counts or failed with the reason. A replace
// restore names the pre_restore backup taken first.
type BackupRestore struct {
	ID               string         `json:"id"`
	Mode             string         `json:"mode"`
	TargetNamespace  string         `json:"target_namespace"`
	State            string         `json:"state"`
	CreatedAt        time.Time      `json:"created_at"`
	CompletedAt      *time.Time     `json:"completed_at,omitempty"`
	PreRestoreBackup string         `json:"pre_restore_backup,omitempty"`
	Result           *RestoreResult `json:"result,omitempty"`
	Error            string         `json:"error,omitempty"`
}

// BackupList is GET /api/v1/backups, newest first.
type BackupList struct {
	Backups []Backup `json:"backups"`
}

// CreateBackupRequest is POST /api/v1/backups.
type CreateBackupRequest struct {
	Namespace string `json:"namespace"`
}

// RestoreRequest is POST /api/v1/backups/{id}/restore: exactly one of
// TargetNamespace (a namespace that does not exist yet; it is created) or
// Replace (the backup's own namespace, backed up first).
type RestoreRequest struct {
	TargetNamespace string `json:"target_namespace,omitempty"`
	Replace         bool   `json:"replace,omitempty"`
}

// RestoreOrder is a RestoreRequest as the gateway sends it to control:
// ScheduleRoom, when the tenant's plan sets max_schedules, is how many
// schedules the restore may add (the limit less the tenant's schedules,
// counted on its shards; a replace's own namespace's do not count, as
// they are replaced). Control refuses a restore whose backup holds more
// (429 quota_exceeded) before it changes anything. nil: no limit.
type RestoreOrder struct {
	RestoreRequest
	ScheduleRoom *int64 `json:"schedule_room,omitempty"`
}

// RestoreResult is what a shard restored (its POST /internal/v1/restore).
type RestoreResult struct {
	Records   int64 `json:"records"`
	Jobs      int64 `json:"jobs"`
	Queues    int64 `json:"queues"`
	Schedules int64 `json:"schedules"`
}

// BackupPolicy is a namespace's backup schedule: a cron expression (5
// fields or a descriptor such as "@daily") in an IANA time zone, and how
// many of its completed scheduled backups to keep (the oldest beyond are
// deleted; manual and pre_restore backups are never pruned).
type BackupPolicy struct {
	Namespace string     `json:"namespace"`
	Cron      string     `json:"cron"`
	Timezone  string     `json:"timezone"`
	Retention int        `json:"retention"`
	Enabled   bool       `json:"enabled"`
	LastRunAt *time.Time `json:"last_run_at,omitempty"`
	NextRunAt *time.Time `json:"next_run_at,omitempty"` // while enabled
}

// BackupPolicyRequest is PUT /api/v1/namespaces/{name}/backup-policy.
// Timezone defaults to "UTC", Enabled to true; Retention is 1..MaxBackupRetention.
type BackupPolicyRequest struct {
	Cron      string `json:"cron"`
	Timezone  string `json:"timezone,omitempty"`
	Retention int    `json:"retention"`
	Enabled   *bool  `json:"enabled,omitempty"`
}
