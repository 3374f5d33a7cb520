package layout

// The backup catalog and backup policies.

// Backup is the key of backup id of tenant tid. Ids are "bkp_" and a
// ULID, so a tenant's backups sort by creation time.
func Backup(tid, id string) []byte { return key(prefixBackup, tid, id) }

// Backups is the prefix of every backup of tenant tid.
func Backups(tid string) []byte { return within(prefixBackup, tid) }

// AllBackups is the prefix of every backup of every tenant.
func AllBackups() []byte { return []byte{prefixBackup} }

// BackupPolicy is the key of the backup policy of namespace ns of tenant tid.
func BackupPolicy(tid, ns string) []byte { return key(prefixBackupPol, tid, ns) }

// AllBackupPolicies is the prefix of every backup policy.
func AllBackupPolicies() []byte { return []byte{prefixBackupPol} }
