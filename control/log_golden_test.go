package control

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// The Raft log's format is every command's bytes: a log written by an
// earlier version must replay to the same state. testdata/log.golden holds
// a script of every command as encoded when the file was written, and the
// state it left, key by key; this test encodes the script again (the bytes
// must match) and replays the recorded bytes on a fresh state machine (the
// state must match). Regenerate only for a new command, with -update-log.

var updateLog = flag.Bool("update-log", false, "rewrite testdata/log.golden")

type logStep struct {
	t   replica.CommandType
	cmd []byte
}

func logScript() []logStep {
	at := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	exp := at.Add(48 * time.Hour)
	var s []logStep
	add := func(b []byte) { s = append(s, logStep{t: replica.CommandType(b[0]), cmd: b}) }
	plan := wire.Plan{Name: "pro", Description: "pro", Currency: "USD", Weight: 2,
		Prices: map[string]wire.Price{"executions": {Unit: 1000, Price: 5}}, Included: map[string]int64{"executions": 100}}
	add(opPutPlan.Command(&putPlanCmd{Plan: plan, Create: true}))
	add(opAddSigningKey.Command(&addSigningKeyCmd{Key: signingKey{ID: "kid1", Seed: bytes.Repeat([]byte{1}, 32), CreatedAt: at}, OnlyIfNone: true}))
	add(opRegisterShard.Command(&registerShardCmd{Shard: ShardRegistration{ShardID: "s3", Capacity: 5, Version: "v1",
		Members: []ShardMember{{NodeID: "n1", HTTPAddr: "127.0.0.1:9301", RaftAddr: "127.0.0.1:9401"}}}}))
	add(opCreateTenant.Command(&createTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Plan: "pro",
		placement: placement{Shards: []string{"s1", "s2"}, StaticCapacity: 10}}))
	add(opCreateTenant.Command(&createTenantCmd{ID: tidB, Name: "beta", OwnerKeyID: kidB, placement: placement{Shards: []string{"s1"}}}))
	add(opCreateNamespace.Command(&createNamespaceCmd{TenantID: tidA, Name: "orders", Description: "d", Retention: time.Hour,
		DeletionProtection: true, placement: placement{Shards: []string{"s1", "s2"}, StaticCapacity: 10}, Tombstones: true, Cleared: "s2"}))
	add(opCreateNamespace.Command(&createNamespaceCmd{TenantID: tidA, Name: "mails", placement: placement{Shards: []string{"s1", "s2"}, StaticCapacity: 10}}))
	desc, ret, prot := "new", 2*time.Hour, false
	add(opUpdateNamespace.Command(&updateNamespaceCmd{TenantID: tidA, Name: "orders", Description: &desc, Retention: &ret, DeletionProtection: &prot}))
	add(opCreateKey.Command(&createKeyCmd{ID: "key_1", TenantID: tidA, Name: "ci", Role: tenancy.RoleDeveloper,
		Namespaces: []string{"orders"}, ExpiresAt: &exp, Description: "ci key"}))
	add(opCreateKey.Command(&createKeyCmd{ID: "key_2", Name: "ops", Role: tenancy.RoleOperator}))
	add(opRotateKey.Command(&rotateKeyCmd{TenantID: tidA, ID: "key_1", Grace: time.Hour}))
	add(opRecordKeyUse.Command(&recordKeyUseCmd{Uses: []keyUse{{TenantID: tidA, ID: "key_1", At: at}}}))
	add(opRevokeKey.Command(&revokeKeyCmd{TenantID: tidA, ID: "key_1"}))
	add(opRotateSigning.Command(&rotateSigningKeyCmd{Key: signingKey{ID: "kid2", Seed: bytes.Repeat([]byte{2}, 32), CreatedAt: at}, RetireAfter: time.Hour}))
	perms := []tenancy.Permission{{Actions: []string{"enqueue"}, Namespaces: []string{"orders"}, Queues: []string{"*"}}}
	add(opPutRole.Command(&putRoleCmd{TenantID: tidA, Name: "pusher", Description: "p", Permissions: perms, Create: true}))
	add(opPutRole.Command(&putRoleCmd{TenantID: tidA, Name: "gone", Permissions: perms, Create: true}))
	add(opDeleteRole.Command(&deleteRoleCmd{TenantID: tidA, Name: "gone"}))
	add(opPutUsage.Command(&putUsageCmd{Shard: "s1", Entries: []usageEntry{{Tenant: tidA, Namespace: "orders", Hour: at.Add(-time.Hour).Unix(),
		Meters: wire.ShardMeters{JobsEnqueued: 1, Executions: 2, JobsCompleted: 3, JobsFailed: 4, JobsDead: 5, ActiveJobMs: 6, StorageByteMs: 7}}},
		Cursor: at.Unix(), AppliedAt: at.UnixNano()}))
	add(opPutAPIRequests.Command(&putAPIRequestsCmd{Gateway: "gw1", Counts: []apiRequestCount{{Tenant: tidA, Hour: at.Unix(), Count: 9}}}))
	add(opSetTenantPlan.Command(&setTenantPlanCmd{TenantID: tidB, Plan: "pro"}))
	add(opFreezeInvoice.Command(&freezeInvoiceCmd{TenantID: tidA, Month: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC).Unix(), Invoice: []byte(`{"id":"x"}`)}))
	add(opSetMemberHTTP.Command(&setMemberHTTPCmd{NodeID: "control1", HTTPAddr: "127.0.0.1:8081"}))
	add(opPutBackupPolicy.Command(&putBackupPolicyCmd{backupPolicy{Tenant: tidA, Namespace: "orders", Cron: "0 * * * *", Timezone: "UTC", Retention: 3, Enabled: true}}))
	add(opStartBackup.Command(&startBackupCmd{Tenant: tidA, ID: "bkp_1", Namespace: "orders", Kind: wire.BackupScheduled, RunAt: at}))
	add(opFinishBackup.Command(&finishBackupCmd{Tenant: tidA, ID: "bkp_1", State: wire.BackupCompleted, Size: 10, Jobs: 2, Records: 3, Checksum: "ab", RaftIndex: 7}))
	add(opStartBackup.Command(&startBackupCmd{Tenant: tidA, ID: "bkp_2", Namespace: "mails", Kind: wire.BackupManual}))
	add(opFinishBackup.Command(&finishBackupCmd{Tenant: tidA, ID: "bkp_2", State: wire.BackupFailed, Error: "boom"}))
	add(opStartRestore.Command(&startRestoreCmd{Tenant: tidA, BackupID: "bkp_1",
		Restore:    wire.BackupRestore{ID: "rst_1", Mode: wire.RestoreReplace, TargetNamespace: "orders", PreRestoreBackup: "bkp_3"},
		PreRestore: &startBackupCmd{Tenant: tidA, ID: "bkp_3", Namespace: "orders", Kind: wire.BackupPreRestore}}))
	add(opFinishBackup.Command(&finishBackupCmd{Tenant: tidA, ID: "bkp_3", State: wire.BackupCompleted, Size: 1}))
	add(opFinishRestore.Command(&finishRestoreCmd{Tenant: tidA, BackupID: "bkp_1", RestoreID: "rst_1", State: wire.BackupCompleted,
		Result: &wire.RestoreResult{}}))
	add(opDeleteBackup.Command(&deleteBackupCmd{Tenant: tidA, ID: "bkp_2"}))
	add(opDelBackupPolicy.Command(&deleteBackupPolicyCmd{Tenant: tidA, Namespace: "orders"}))
	add(opCreateJoinToken.Command(&createJoinTokenCmd{TenantID: tidA, ShardID: "sh_1", Name: "edge", Hash: "h1", TTL: time.Hour, Nodes: 2}))
	add(opJoinShard.Command(&joinShardCmd{Hash: "h1", NodeID: "e1"}))
	add(opJoinShard.Command(&joinShardCmd{Hash: "h1", NodeID: "e2"}))
	add(opRevokeShard.Command(&revokeShardCmd{Node: &removeNode{TenantID: tidA, ShardID: "sh_1", NodeID: "e1"}}))
	add(opCreateJoinToken.Command(&createJoinTokenCmd{Hash: "h2", TTL: time.Hour, Nodes: 1, AddTo: &addNodes{TenantID: tidA, ShardID: "sh_1"}}))
	add(opCreateJoinToken.Command(&createJoinTokenCmd{TenantID: tidB, ShardID: "sh_2", Name: "gone", Hash: "h3", TTL: time.Hour, Nodes: 1}))
	add(opRevokeShard.Command(&revokeShardCmd{TenantID: tidB, ShardID: "sh_2"}))
	add(opStartMove.Command(&startMoveCmd{ID: "mov_1", Tenant: tidA, Namespace: "mails", ToShard: "s1", StaticShards: []string{"s1", "s2"}}))
	add(opMoveProgress.Command(&moveProgressCmd{ID: "mov_1", State: wire.MoveCatchingUp, Rounds: 1, Records: 10, Bytes: 100}))
	add(opMoveProgress.Command(&moveProgressCmd{ID: "mov_1", State: wire.MoveFenced, Rounds: 1, Records: 10, Bytes: 100, Fenced: true}))
	add(opMoveProgress.Command(&moveProgressCmd{ID: "mov_1", State: wire.MoveFenced, Rounds: 2, Records: 12, Bytes: 120, Committing: true}))
	add(opSwitchMove.Command(&switchMoveCmd{ID: "mov_1", Rounds: 2, Records: 12, Bytes: 120}))
	add(opEndMove.Command(&endMoveCmd{ID: "mov_1"}))
	add(opStartMove.Command(&startMoveCmd{ID: "mov_2", Tenant: tidA, Namespace: "mails", ToShard: "s2", StaticShards: []string{"s1", "s2"}}))
	add(opCancelMove.Command(&cancelMoveCmd{ID: "mov_2"}))
	add(opEndMove.Command(&endMoveCmd{ID: "mov_2", Failed: true, Error: "cancelled"}))
	add(opDeleteNamespace.Command(&deleteNamespaceCmd{TenantID: tidA, Name: "mails"}))
	return s
}

// replayLog applies each command's bytes in its own batch, an hour apart,
// and returns every key and value the state holds, one line each.
func replayLog(t *testing.T, cmds [][]byte) (string, []string) {
	db, err := pebble.Open(filepath.Join(t.TempDir(), "state"), &pebble.Options{})
	require.NoError(t, err)
	defer db.Close()
	reg := newRegistry()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	var outcomes []string
	for i, c := range cmds {
		b := db.NewIndexedBatch()
		_, err := reg.Apply(replica.NewTx(b, now.Add(time.Duration(i)*time.Minute), uint64(i+1)), c)
		outcomes = append(outcomes, fmt.Sprintf("%s %v", reg.Name(replica.CommandType(c[0])), err))
		require.NoError(t, b.Commit(pebble.NoSync))
		b.Close()
	}
	var sb strings.Builder
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	for it.First(); it.Valid(); it.Next() {
		fmt.Fprintf(&sb, "%x %x\n", it.Key(), it.Value())
	}
	require.NoError(t, it.Close())
	return sb.String(), outcomes
}

func TestLogReplaysAsWritten(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "log.golden")
	script := logScript()
	var cmds [][]byte
	var sb strings.Builder
	for _, st := range script {
		cmds = append(cmds, st.cmd)
		fmt.Fprintf(&sb, "cmd %x\n", st.cmd)
	}
	if *updateLog {
		state, outcomes := replayLog(t, cmds)
		sb.WriteString("outcomes\n" + strings.Join(outcomes, "\n") + "\nstate\n" + state)
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o644))
	}
	golden, err := os.ReadFile(path)
	require.NoError(t, err)
	var recorded [][]byte
	lines := strings.Split(string(golden), "\n")
	i := 0
	for ; strings.HasPrefix(lines[i], "cmd "); i++ {
		b, err := hex.DecodeString(strings.TrimPrefix(lines[i], "cmd "))
		require.NoError(t, err)
		recorded = append(recorded, b)
	}
	require.Len(t, recorded, len(cmds))
	for j := range cmds {
		require.Equal(t, hex.EncodeToString(recorded[j]), hex.EncodeToString(cmds[j]), "command %d encodes as the log holds it", j)
	}
	state, outcomes := replayLog(t, recorded)
	rest := strings.Join(lines[i:], "\n")
	require.Equal(t, rest, "outcomes\n"+strings.Join(outcomes, "\n")+"\nstate\n"+state)
}
