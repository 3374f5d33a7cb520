package control

import (
	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// Commands of the control log. Types are append-only: a shipped number
// keeps its meaning forever. Payloads are the replica's encoding
// (MessagePack; entries written before it are JSON, which still decodes).
var (
	opCreateTenant    = replica.Op[createTenantCmd, tenantCreated]{Type: 1, Name: "create_tenant"}
	opCreateNamespace = replica.Op[createNamespaceCmd, Namespace]{Type: 2, Name: "create_namespace"}
	opCreateKey       = replica.Op[createKeyCmd, APIKey]{Type: 3, Name: "create_key"}
	opRevokeKey       = replica.Op[revokeKeyCmd, APIKey]{Type: 4, Name: "revoke_key"}
	opAddSigningKey   = replica.Op[addSigningKeyCmd, signingKey]{Type: 5, Name: "add_signing_key"}
	opRegisterShard   = replica.Op[registerShardCmd, RegisteredShard]{Type: 6, Name: "register_shard"}
	opUpdateNamespace = replica.Op[updateNamespaceCmd, Namespace]{Type: 7, Name: "update_namespace"}
	opDeleteNamespace = replica.Op[deleteNamespaceCmd, Namespace]{Type: 8, Name: "delete_namespace"}
	opRotateKey       = replica.Op[rotateKeyCmd, keyRotated]{Type: 9, Name: "rotate_key"}
	opRecordKeyUse    = replica.Op[recordKeyUseCmd, replica.None]{Type: 10, Name: "record_key_use"}
	opRotateSigning   = replica.Op[rotateSigningKeyCmd, signingKey]{Type: 11, Name: "rotate_signing_key"}
	opPutRole         = replica.Op[putRoleCmd, roleChanged]{Type: 12, Name: "put_role"}
	opDeleteRole      = replica.Op[deleteRoleCmd, uint64]{Type: 13, Name: "delete_role"}
	opPutUsage        = replica.Op[putUsageCmd, replica.None]{Type: 14, Name: "put_usage"}
	opPutAPIRequests  = replica.Op[putAPIRequestsCmd, replica.None]{Type: 15, Name: "put_api_requests"}
	opPutPlan         = replica.Op[putPlanCmd, planVersion]{Type: 16, Name: "put_plan"}
	opSetTenantPlan   = replica.Op[setTenantPlanCmd, wire.TenantPlan]{Type: 17, Name: "set_tenant_plan"}
	opFreezeInvoice   = replica.Op[freezeInvoiceCmd, bool]{Type: 18, Name: "freeze_invoice"}
	opSetMemberHTTP   = replica.Op[setMemberHTTPCmd, replica.None]{Type: 19, Name: "set_member_http"}
	opStartBackup     = replica.Op[startBackupCmd, backupRecord]{Type: 20, Name: "start_backup"}
	opFinishBackup    = replica.Op[finishBackupCmd, backupRecord]{Type: 21, Name: "finish_backup"}
	opDeleteBackup    = replica.Op[deleteBackupCmd, backupRecord]{Type: 22, Name: "delete_backup"}
	opPutBackupPolicy = replica.Op[putBackupPolicyCmd, backupPolicy]{Type: 23, Name: "put_backup_policy"}
	opDelBackupPolicy = replica.Op[deleteBackupPolicyCmd, replica.None]{Type: 24, Name: "delete_backup_policy"}
	opStartRestore    = replica.Op[startRestoreCmd, restoreStarted]{Type: 25, Name: "start_restore"}
	opFinishRestore   = replica.Op[finishRestoreCmd, backupRecord]{Type: 26, Name: "finish_restore"}
	opCreateJoinToken = replica.Op[createJoinTokenCmd, wire.JoinToken]{Type: 27, Name: "create_join_token"}
	opJoinShard       = replica.Op[joinShardCmd, replica.None]{Type: 28, Name: "join_shard"}
	opRevokeShard     = replica.Op[revokeShardCmd, replica.None]{Type: 29, Name: "revoke_shard"}
	opStartMove       = replica.Op[startMoveCmd, moveRecord]{Type: 30, Name: "start_move"}
	opMoveProgress    = replica.Op[moveProgressCmd, moveRecord]{Type: 31, Name: "move_progress"}
	opSwitchMove      = replica.Op[switchMoveCmd, moveRecord]{Type: 32, Name: "switch_move"}
	opCancelMove      = replica.Op[cancelMoveCmd, moveRecord]{Type: 33, Name: "cancel_move"}
	opEndMove         = replica.Op[endMoveCmd, moveRecord]{Type: 34, Name: "end_move"}
)

// newRegistry registers every command's handler.
func newRegistry() *replica.Registry {
	r := &replica.Registry{}
	opCreateTenant.Handle(r, applyCreateTenant)
	opCreateNamespace.Handle(r, applyCreateNamespace)
	opCreateKey.Handle(r, applyCreateKey)
	opRevokeKey.Handle(r, applyRevokeKey)
	opAddSigningKey.Handle(r, applyAddSigningKey)
	opRegisterShard.Handle(r, applyRegisterShard)
	opUpdateNamespace.Handle(r, applyUpdateNamespace)
	opDeleteNamespace.Handle(r, applyDeleteNamespace)
	opRotateKey.Handle(r, applyRotateKey)
	opRecordKeyUse.Handle(r, applyRecordKeyUse)
	opRotateSigning.Handle(r, applyRotateSigningKey)
	opPutRole.Handle(r, applyPutRole)
	opDeleteRole.Handle(r, applyDeleteRole)
	opPutUsage.Handle(r, applyPutUsage)
	opPutAPIRequests.Handle(r, applyPutAPIRequests)
	opPutPlan.Handle(r, applyPutPlan)
	opSetTenantPlan.Handle(r, applySetTenantPlan)
	opFreezeInvoice.Handle(r, applyFreezeInvoice)
	opSetMemberHTTP.Handle(r, applySetMemberHTTP)
	opStartBackup.Handle(r, applyStartBackup)
	opFinishBackup.Handle(r, applyFinishBackup)
	opDeleteBackup.Handle(r, applyDeleteBackup)
	opPutBackupPolicy.Handle(r, applyPutBackupPolicy)
	opDelBackupPolicy.Handle(r, applyDeleteBackupPolicy)
	opStartRestore.Handle(r, applyStartRestore)
	opFinishRestore.Handle(r, applyFinishRestore)
	opCreateJoinToken.Handle(r, applyCreateJoinToken)
	opJoinShard.Handle(r, applyJoinShard)
	opRevokeShard.Handle(r, applyRevokeShard)
	opStartMove.Handle(r, applyStartMove)
	opMoveProgress.Handle(r, applyMoveProgress)
	opSwitchMove.Handle(r, applySwitchMove)
	opCancelMove.Handle(r, applyCancelMove)
	opEndMove.Handle(r, applyEndMove)
	return r
}

// view runs fn on a consistent snapshot of the local state.
func (s *Server) view(fn func(r pebble.Reader) error) error {
	node, release, err := s.acquire()
	if err != nil {
		return err
	}
	defer release()
	snap := node.DB().NewSnapshot()
	defer snap.Close()
	return fn(snap)
}
