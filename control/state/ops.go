package state

import (
	"github.com/jobbie/jobbie/control/billing"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// Commands of the control log. Types are append-only: a shipped number
// keeps its meaning forever. Payloads are the replica's encoding
// (MessagePack; entries written before it are JSON, which still decodes).
var (
	OpCreateTenant    = replica.Op[CreateTenantCmd, TenantCreated]{Type: 1, Name: "create_tenant"}
	OpCreateNamespace = replica.Op[CreateNamespaceCmd, Namespace]{Type: 2, Name: "create_namespace"}
	OpCreateKey       = replica.Op[CreateKeyCmd, APIKey]{Type: 3, Name: "create_key"}
	OpRevokeKey       = replica.Op[RevokeKeyCmd, APIKey]{Type: 4, Name: "revoke_key"}
	OpAddSigningKey   = replica.Op[AddSigningKeyCmd, SigningKey]{Type: 5, Name: "add_signing_key"}
	OpRegisterShard   = replica.Op[RegisterShardCmd, RegisteredShard]{Type: 6, Name: "register_shard"}
	OpUpdateNamespace = replica.Op[UpdateNamespaceCmd, Namespace]{Type: 7, Name: "update_namespace"}
	OpDeleteNamespace = replica.Op[DeleteNamespaceCmd, Namespace]{Type: 8, Name: "delete_namespace"}
	OpRotateKey       = replica.Op[RotateKeyCmd, KeyRotated]{Type: 9, Name: "rotate_key"}
	OpRecordKeyUse    = replica.Op[RecordKeyUseCmd, replica.None]{Type: 10, Name: "record_key_use"}
	OpRotateSigning   = replica.Op[RotateSigningKeyCmd, SigningKey]{Type: 11, Name: "rotate_signing_key"}
	OpPutRole         = replica.Op[PutRoleCmd, RoleChanged]{Type: 12, Name: "put_role"}
	OpDeleteRole      = replica.Op[DeleteRoleCmd, uint64]{Type: 13, Name: "delete_role"}
	OpPutUsage        = replica.Op[PutUsageCmd, replica.None]{Type: 14, Name: "put_usage"}
	OpPutAPIRequests  = replica.Op[PutAPIRequestsCmd, replica.None]{Type: 15, Name: "put_api_requests"}
	OpPutPlan         = replica.Op[PutPlanCmd, billing.PlanVersion]{Type: 16, Name: "put_plan"}
	OpSetTenantPlan   = replica.Op[SetTenantPlanCmd, wire.TenantPlan]{Type: 17, Name: "set_tenant_plan"}
	OpFreezeInvoice   = replica.Op[FreezeInvoiceCmd, bool]{Type: 18, Name: "freeze_invoice"}
	OpSetMemberHTTP   = replica.Op[SetMemberHTTPCmd, replica.None]{Type: 19, Name: "set_member_http"}
	OpStartBackup     = replica.Op[StartBackupCmd, BackupRecord]{Type: 20, Name: "start_backup"}
	OpFinishBackup    = replica.Op[FinishBackupCmd, BackupRecord]{Type: 21, Name: "finish_backup"}
	OpDeleteBackup    = replica.Op[DeleteBackupCmd, BackupRecord]{Type: 22, Name: "delete_backup"}
	OpPutBackupPolicy = replica.Op[PutBackupPolicyCmd, BackupPolicy]{Type: 23, Name: "put_backup_policy"}
	OpDelBackupPolicy = replica.Op[DeleteBackupPolicyCmd, replica.None]{Type: 24, Name: "delete_backup_policy"}
	OpStartRestore    = replica.Op[StartRestoreCmd, RestoreStarted]{Type: 25, Name: "start_restore"}
	OpFinishRestore   = replica.Op[FinishRestoreCmd, BackupRecord]{Type: 26, Name: "finish_restore"}
	OpCreateJoinToken = replica.Op[CreateJoinTokenCmd, wire.JoinToken]{Type: 27, Name: "create_join_token"}
	OpJoinShard       = replica.Op[JoinShardCmd, replica.None]{Type: 28, Name: "join_shard"}
	OpRevokeShard     = replica.Op[RevokeShardCmd, replica.None]{Type: 29, Name: "revoke_shard"}
	OpStartMove       = replica.Op[StartMoveCmd, MoveRecord]{Type: 30, Name: "start_move"}
	OpMoveProgress    = replica.Op[MoveProgressCmd, MoveRecord]{Type: 31, Name: "move_progress"}
	OpSwitchMove      = replica.Op[SwitchMoveCmd, MoveRecord]{Type: 32, Name: "switch_move"}
	OpCancelMove      = replica.Op[CancelMoveCmd, MoveRecord]{Type: 33, Name: "cancel_move"}
	OpEndMove         = replica.Op[EndMoveCmd, MoveRecord]{Type: 34, Name: "end_move"}
	OpIdempotent      = replica.Op[IdemCmd, *IdemOutcome]{Type: 35, Name: "idempotent"}
	OpAppendAudit     = replica.Op[AppendAuditCmd, replica.None]{Type: 36, Name: "append_audit"}
	OpTrimAudit       = replica.Op[TrimAuditCmd, int]{Type: 37, Name: "trim_audit"}
	OpPutSSO          = replica.Op[PutSSOCmd, SSOSettings]{Type: 38, Name: "put_sso"}
	OpDeleteSSO       = replica.Op[DeleteSSOCmd, replica.None]{Type: 39, Name: "delete_sso"}
)

// NewRegistry registers every command's handler.
func NewRegistry() *replica.Registry {
	r := &replica.Registry{}
	OpCreateTenant.Handle(r, applyCreateTenant)
	OpCreateNamespace.Handle(r, applyCreateNamespace)
	OpCreateKey.Handle(r, applyCreateKey)
	OpRevokeKey.Handle(r, applyRevokeKey)
	OpAddSigningKey.Handle(r, applyAddSigningKey)
	OpRegisterShard.Handle(r, applyRegisterShard)
	OpUpdateNamespace.Handle(r, applyUpdateNamespace)
	OpDeleteNamespace.Handle(r, applyDeleteNamespace)
	OpRotateKey.Handle(r, applyRotateKey)
	OpRecordKeyUse.Handle(r, applyRecordKeyUse)
	OpRotateSigning.Handle(r, applyRotateSigningKey)
	OpPutRole.Handle(r, applyPutRole)
	OpDeleteRole.Handle(r, applyDeleteRole)
	OpPutUsage.Handle(r, applyPutUsage)
	OpPutAPIRequests.Handle(r, applyPutAPIRequests)
	OpPutPlan.Handle(r, applyPutPlan)
	OpSetTenantPlan.Handle(r, applySetTenantPlan)
	OpFreezeInvoice.Handle(r, applyFreezeInvoice)
	OpSetMemberHTTP.Handle(r, applySetMemberHTTP)
	OpStartBackup.Handle(r, applyStartBackup)
	OpFinishBackup.Handle(r, applyFinishBackup)
	OpDeleteBackup.Handle(r, applyDeleteBackup)
	OpPutBackupPolicy.Handle(r, applyPutBackupPolicy)
	OpDelBackupPolicy.Handle(r, applyDeleteBackupPolicy)
	OpStartRestore.Handle(r, applyStartRestore)
	OpFinishRestore.Handle(r, applyFinishRestore)
	OpCreateJoinToken.Handle(r, applyCreateJoinToken)
	OpJoinShard.Handle(r, applyJoinShard)
	OpRevokeShard.Handle(r, applyRevokeShard)
	OpStartMove.Handle(r, applyStartMove)
	OpMoveProgress.Handle(r, applyMoveProgress)
	OpSwitchMove.Handle(r, applySwitchMove)
	OpCancelMove.Handle(r, applyCancelMove)
	OpEndMove.Handle(r, applyEndMove)
	OpIdempotent.Handle(r, func(tx *replica.Tx, c *IdemCmd) (*IdemOutcome, error) { return applyIdem(r, defaultIdemLimits, tx, c) })
	OpAppendAudit.Handle(r, applyAppendAudit)
	OpTrimAudit.Handle(r, applyTrimAudit)
	OpPutSSO.Handle(r, applyPutSSO)
	OpDeleteSSO.Handle(r, applyDeleteSSO)
	return r
}
