package state

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
	add(OpPutPlan.Command(&PutPlanCmd{Plan: plan, Create: true}))
	add(OpAddSigningKey.Command(&AddSigningKeyCmd{Key: SigningKey{ID: "kid1", Seed: bytes.Repeat([]byte{1}, 32), CreatedAt: at}, OnlyIfNone: true}))
	add(OpRegisterShard.Command(&RegisterShardCmd{Shard: ShardRegistration{ShardID: "s3", Capacity: 5, Version: "v1",
		Members: []ShardMember{{NodeID: "n1", HTTPAddr: "127.0.0.1:9301", RaftAddr: "127.0.0.1:9401"}}}}))
	add(OpCreateTenant.Command(&CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Plan: "pro",
		Placement: Placement{Shards: []string{"s1", "s2"}, StaticCapacity: 10}}))
	add(OpCreateTenant.Command(&CreateTenantCmd{ID: tidB, Name: "beta", OwnerKeyID: kidB, Placement: Placement{Shards: []string{"s1"}}}))
	add(OpCreateNamespace.Command(&CreateNamespaceCmd{TenantID: tidA, Name: "orders", Description: "d", Retention: time.Hour,
		DeletionProtection: true, Placement: Placement{Shards: []string{"s1", "s2"}, StaticCapacity: 10}, Tombstones: true, Cleared: "s2"}))
	add(OpCreateNamespace.Command(&CreateNamespaceCmd{TenantID: tidA, Name: "mails", Placement: Placement{Shards: []string{"s1", "s2"}, StaticCapacity: 10}}))
	desc, ret, prot := "new", 2*time.Hour, false
	add(OpUpdateNamespace.Command(&UpdateNamespaceCmd{TenantID: tidA, Name: "orders", Description: &desc, Retention: &ret, DeletionProtection: &prot}))
	add(OpCreateKey.Command(&CreateKeyCmd{ID: "key_1", TenantID: tidA, Name: "ci", Role: tenancy.RoleDeveloper,
		Namespaces: []string{"orders"}, ExpiresAt: &exp, Description: "ci key"}))
	add(OpCreateKey.Command(&CreateKeyCmd{ID: "key_2", Name: "ops", Role: tenancy.RoleOperator}))
	add(OpRotateKey.Command(&RotateKeyCmd{TenantID: tidA, ID: "key_1", Grace: time.Hour}))
	add(OpRecordKeyUse.Command(&RecordKeyUseCmd{Uses: []KeyUse{{TenantID: tidA, ID: "key_1", At: at}}}))
	add(OpRevokeKey.Command(&RevokeKeyCmd{TenantID: tidA, ID: "key_1"}))
	add(OpRotateSigning.Command(&RotateSigningKeyCmd{Key: SigningKey{ID: "kid2", Seed: bytes.Repeat([]byte{2}, 32), CreatedAt: at}, RetireAfter: time.Hour}))
	perms := []tenancy.Permission{{Actions: []string{"enqueue"}, Namespaces: []string{"orders"}, Queues: []string{"*"}}}
	add(OpPutRole.Command(&PutRoleCmd{TenantID: tidA, Name: "pusher", Description: "p", Permissions: perms, Create: true}))
	add(OpPutRole.Command(&PutRoleCmd{TenantID: tidA, Name: "gone", Permissions: perms, Create: true}))
	add(OpDeleteRole.Command(&DeleteRoleCmd{TenantID: tidA, Name: "gone"}))
	add(OpPutUsage.Command(&PutUsageCmd{Shard: "s1", Entries: []UsageEntry{{Tenant: tidA, Namespace: "orders", Hour: at.Add(-time.Hour).Unix(),
		Meters: wire.ShardMeters{JobsEnqueued: 1, Executions: 2, JobsCompleted: 3, JobsFailed: 4, JobsDead: 5, ActiveJobMs: 6, StorageByteMs: 7}}},
		Cursor: at.Unix(), AppliedAt: at.UnixNano()}))
	add(OpPutAPIRequests.Command(&PutAPIRequestsCmd{Gateway: "gw1", Counts: []APIRequestCount{{Tenant: tidA, Hour: at.Unix(), Count: 9}}}))
	add(OpSetTenantPlan.Command(&SetTenantPlanCmd{TenantID: tidB, Plan: "pro"}))
	add(OpFreezeInvoice.Command(&FreezeInvoiceCmd{TenantID: tidA, Month: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC).Unix(), Invoice: []byte(`{"id":"x"}`)}))
	add(OpSetMemberHTTP.Command(&SetMemberHTTPCmd{NodeID: "control1", HTTPAddr: "127.0.0.1:8081"}))
	add(OpPutBackupPolicy.Command(&PutBackupPolicyCmd{BackupPolicy{Tenant: tidA, Namespace: "orders", Cron: "0 * * * *", Timezone: "UTC", Retention: 3, Enabled: true}}))
	add(OpStartBackup.Command(&StartBackupCmd{Tenant: tidA, ID: "bkp_1", Namespace: "orders", Kind: wire.BackupScheduled, RunAt: at}))
	add(OpFinishBackup.Command(&FinishBackupCmd{Tenant: tidA, ID: "bkp_1", State: wire.BackupCompleted, Size: 10, Jobs: 2, Records: 3, Checksum: "ab", RaftIndex: 7}))
	add(OpStartBackup.Command(&StartBackupCmd{Tenant: tidA, ID: "bkp_2", Namespace: "mails", Kind: wire.BackupManual}))
	add(OpFinishBackup.Command(&FinishBackupCmd{Tenant: tidA, ID: "bkp_2", State: wire.BackupFailed, Error: "boom"}))
	add(OpStartRestore.Command(&StartRestoreCmd{Tenant: tidA, BackupID: "bkp_1",
		Restore:    wire.BackupRestore{ID: "rst_1", Mode: wire.RestoreReplace, TargetNamespace: "orders", PreRestoreBackup: "bkp_3"},
		PreRestore: &StartBackupCmd{Tenant: tidA, ID: "bkp_3", Namespace: "orders", Kind: wire.BackupPreRestore}}))
	add(OpFinishBackup.Command(&FinishBackupCmd{Tenant: tidA, ID: "bkp_3", State: wire.BackupCompleted, Size: 1}))
	add(OpFinishRestore.Command(&FinishRestoreCmd{Tenant: tidA, BackupID: "bkp_1", RestoreID: "rst_1", State: wire.BackupCompleted,
		Result: &wire.RestoreResult{}}))
	add(OpDeleteBackup.Command(&DeleteBackupCmd{Tenant: tidA, ID: "bkp_2"}))
	add(OpDelBackupPolicy.Command(&DeleteBackupPolicyCmd{Tenant: tidA, Namespace: "orders"}))
	add(OpCreateJoinToken.Command(&CreateJoinTokenCmd{TenantID: tidA, ShardID: "sh_1", Name: "edge", Hash: "h1", TTL: time.Hour, Nodes: 2}))
	add(OpJoinShard.Command(&JoinShardCmd{Hash: "h1", NodeID: "e1"}))
	add(OpJoinShard.Command(&JoinShardCmd{Hash: "h1", NodeID: "e2"}))
	add(OpRevokeShard.Command(&RevokeShardCmd{Node: &RemoveNode{TenantID: tidA, ShardID: "sh_1", NodeID: "e1"}}))
	add(OpCreateJoinToken.Command(&CreateJoinTokenCmd{Hash: "h2", TTL: time.Hour, Nodes: 1, AddTo: &AddNodes{TenantID: tidA, ShardID: "sh_1"}}))
	add(OpCreateJoinToken.Command(&CreateJoinTokenCmd{TenantID: tidB, ShardID: "sh_2", Name: "gone", Hash: "h3", TTL: time.Hour, Nodes: 1}))
	add(OpRevokeShard.Command(&RevokeShardCmd{TenantID: tidB, ShardID: "sh_2"}))
	add(OpStartMove.Command(&StartMoveCmd{ID: "mov_1", Tenant: tidA, Namespace: "mails", ToShard: "s1", StaticShards: []string{"s1", "s2"}}))
	add(OpMoveProgress.Command(&MoveProgressCmd{ID: "mov_1", State: wire.MoveCatchingUp, Rounds: 1, Records: 10, Bytes: 100}))
	add(OpMoveProgress.Command(&MoveProgressCmd{ID: "mov_1", State: wire.MoveFenced, Rounds: 1, Records: 10, Bytes: 100, Fenced: true}))
	add(OpMoveProgress.Command(&MoveProgressCmd{ID: "mov_1", State: wire.MoveFenced, Rounds: 2, Records: 12, Bytes: 120, Committing: true}))
	add(OpSwitchMove.Command(&SwitchMoveCmd{ID: "mov_1", Rounds: 2, Records: 12, Bytes: 120}))
	add(OpEndMove.Command(&EndMoveCmd{ID: "mov_1"}))
	add(OpStartMove.Command(&StartMoveCmd{ID: "mov_2", Tenant: tidA, Namespace: "mails", ToShard: "s2", StaticShards: []string{"s1", "s2"}}))
	add(OpCancelMove.Command(&CancelMoveCmd{ID: "mov_2"}))
	add(OpEndMove.Command(&EndMoveCmd{ID: "mov_2", Failed: true, Error: "cancelled"}))
	add(OpDeleteNamespace.Command(&DeleteNamespaceCmd{TenantID: tidA, Name: "mails"}))
	idemRole := OpPutRole.Command(&PutRoleCmd{TenantID: tidA, Name: "keyed", Permissions: perms, Create: true})
	add(OpIdempotent.Command(&IdemCmd{TenantID: tidA, Key: "k-1", Hash: []byte{1}, Cmd: idemRole}))
	add(OpIdempotent.Command(&IdemCmd{TenantID: tidA, Key: "k-1", Hash: []byte{1}, Cmd: idemRole}))                                    // replayed
	add(OpIdempotent.Command(&IdemCmd{TenantID: tidA, Key: "k-1", Hash: []byte{2}, Cmd: idemRole}))                                    // 422
	add(OpIdempotent.Command(&IdemCmd{TenantID: tidB, Key: "k-1", Hash: []byte{1}, Cmd: OpCreateKey.Command(&CreateKeyCmd{ID: "key_3", // another tenant's key
		TenantID: tidB, Name: "k", Role: tenancy.RoleViewer, Namespaces: []string{"default"}})}))
	add(OpAppendAudit.Command(&AppendAuditCmd{TenantID: tidA, RetentionDays: 30, Record: wire.AuditRecord{KeyID: kidA, Role: "owner",
		Action: "key.manage", Route: "POST /api/v1/keys", ObjectType: "key", ObjectID: "key_9", Result: "ok", Status: 201,
		SourceAddress: "192.0.2.1", RequestID: "req-1"}}))
	add(OpAppendAudit.Command(&AppendAuditCmd{TenantID: tidA, Record: wire.AuditRecord{KeyID: "key_1", Role: "developer",
		Action: "namespace.manage", Route: "DELETE /api/v1/namespaces/:name", ObjectType: "namespace", ObjectID: "orders",
		Namespace: "orders", Result: "forbidden", Status: 403, SourceAddress: "192.0.2.2", RequestID: "req-2"}}))
	add(OpTrimAudit.Command(&TrimAuditCmd{TenantID: tidA, Before: at.UnixNano()}))
	sso := wire.SSORequest{IssuerURL: "https://login.example.com", ClientID: "jobbie", ClientSecret: "s3cret",
		AllowedDomains: []string{"example.com"}, GroupsClaim: "groups", GroupRoles: []wire.SSOGroupRole{{Group: "ops", Role: "pusher"}}, DefaultRole: "viewer"}
	add(OpPutSSO.Command(&PutSSOCmd{TenantID: tidA, Request: sso}))
	add(OpPutSSO.Command(&PutSSOCmd{TenantID: tidB, Request: sso})) // 400: tidB has no role "pusher"
	sso.ClientSecret, sso.DefaultRole = "", "developer"
	add(OpPutSSO.Command(&PutSSOCmd{TenantID: tidA, Request: sso})) // keeps the secret
	add(OpPutSSO.Command(&PutSSOCmd{TenantID: tidB, Request: wire.SSORequest{IssuerURL: "https://b.example.com", ClientID: "b",
		AllowedGroups: []string{"staff"}, DefaultRole: "viewer"}})) // 400: no secret yet
	add(OpPutSSO.Command(&PutSSOCmd{TenantID: tidB, Request: wire.SSORequest{IssuerURL: "https://b.example.com", ClientID: "b",
		ClientSecret: "b-secret", AllowedGroups: []string{"staff"}, DefaultRole: "viewer"}}))
	add(OpDeleteSSO.Command(&DeleteSSOCmd{TenantID: tidB}))
	add(OpDeleteSSO.Command(&DeleteSSOCmd{TenantID: tidB})) // 404
	return s
}

// replayLog applies each command's bytes in its own batch, an hour apart,
// and returns every key and value the state holds, one line each.
func replayLog(t *testing.T, cmds [][]byte) (string, []string) {
	db, err := pebble.Open(filepath.Join(t.TempDir(), "state"), &pebble.Options{})
	require.NoError(t, err)
	defer db.Close()
	reg := NewRegistry()
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
	inScript := map[replica.CommandType]bool{}
	for _, st := range script {
		inScript[st.t] = true
	}
	for _, typ := range NewRegistry().Types() {
		require.True(t, inScript[typ], "command %d (%s) is not in the script", typ, NewRegistry().Name(typ))
	}
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
