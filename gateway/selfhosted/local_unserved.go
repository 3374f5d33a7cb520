package selfhosted

import (
	"context"
	"encoding/json"
	"net/url"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/wire"
)

// What a local API does not serve: self-hosted shards' own trust, and
// tenant administration, whose routes it does not mount. Each call says
// so; the gateway takes it as control being away.

// notServed is Local's answer to a call it does not serve.
func notServed(what string) error {
	return &controlapi.NotServedError{What: what, By: "a self-hosted shard's local API"}
}

func (*Local) SelfHostedShards(context.Context) (wire.SelfHostedShards, error) {
	return wire.SelfHostedShards{}, notServed("self-hosted shards")
}

func (*Local) TrustBundle(context.Context, string, string) (wire.TrustBundle, error) {
	return wire.TrustBundle{}, notServed("trust bundles")
}

func (*Local) ListNamespaces(context.Context, string, string) (wire.NamespaceList, error) {
	return wire.NamespaceList{}, notServed("namespaces")
}

func (*Local) CreateNamespace(context.Context, string, string, controlapi.NewNamespace) (wire.Namespace, error) {
	return wire.Namespace{}, notServed("namespaces")
}

func (*Local) UpdateNamespace(context.Context, string, string, string, wire.UpdateNamespaceRequest) (wire.Namespace, error) {
	return wire.Namespace{}, notServed("namespaces")
}

func (*Local) DeleteNamespace(context.Context, string, string, string) error {
	return notServed("namespaces")
}

func (*Local) ListKeys(context.Context, string, string) (wire.KeyList, error) {
	return wire.KeyList{}, notServed("API keys")
}

func (*Local) CreateKey(context.Context, string, string, wire.CreateKeyRequest) (wire.CreatedKey, error) {
	return wire.CreatedKey{}, notServed("API keys")
}

func (*Local) Key(context.Context, string, string, string) (wire.Key, error) {
	return wire.Key{}, notServed("API keys")
}

func (*Local) DeleteKey(context.Context, string, string, string) error { return notServed("API keys") }

func (*Local) RotateKey(context.Context, string, string, string, wire.RotateKeyRequest) (wire.RotatedKey, error) {
	return wire.RotatedKey{}, notServed("API keys")
}

func (*Local) Role(context.Context, string, string, string) (wire.Role, error) {
	return wire.Role{}, notServed("custom roles")
}

func (*Local) CreateRole(context.Context, string, string, wire.RoleRequest) (wire.RoleChanged, error) {
	return wire.RoleChanged{}, notServed("changes of custom roles")
}

func (*Local) UpdateRole(context.Context, string, string, string, wire.RoleRequest) (wire.RoleChanged, error) {
	return wire.RoleChanged{}, notServed("changes of custom roles")
}

func (*Local) DeleteRole(context.Context, string, string, string) (wire.RolesVersion, error) {
	return wire.RolesVersion{}, notServed("changes of custom roles")
}

func (*Local) CreateBackup(context.Context, string, string, wire.CreateBackupRequest) (wire.Backup, error) {
	return wire.Backup{}, notServed("backups")
}

func (*Local) ListBackups(context.Context, string, string, []string) (wire.BackupList, error) {
	return wire.BackupList{}, notServed("backups")
}

func (*Local) Backup(context.Context, string, string, string) (wire.Backup, error) {
	return wire.Backup{}, notServed("backups")
}

func (*Local) DeleteBackup(context.Context, string, string, string) error {
	return notServed("backups")
}

func (*Local) RestoreBackup(context.Context, string, string, string, wire.RestoreOrder) (wire.Backup, error) {
	return wire.Backup{}, notServed("backups")
}

func (*Local) DownloadBackup(context.Context, string, string, string) (*controlapi.Download, error) {
	return nil, notServed("backup downloads")
}

func (*Local) BackupPolicy(context.Context, string, string, string) (wire.BackupPolicy, error) {
	return wire.BackupPolicy{}, notServed("backup policies")
}

func (*Local) PutBackupPolicy(context.Context, string, string, string, wire.BackupPolicyRequest) (wire.BackupPolicy, error) {
	return wire.BackupPolicy{}, notServed("backup policies")
}

func (*Local) DeleteBackupPolicy(context.Context, string, string, string) error {
	return notServed("backup policies")
}

func (*Local) Invoices(context.Context, string, string) (wire.InvoiceList, error) {
	return wire.InvoiceList{}, notServed("invoices")
}

func (*Local) Invoice(context.Context, string, string, string) (json.RawMessage, error) {
	return nil, notServed("invoices")
}

func (*Local) Usage(context.Context, string, string, wire.UsageQuery) (wire.Usage, error) {
	return wire.Usage{}, notServed("usage")
}

func (*Local) OwnedShards(context.Context, string, string) (wire.OwnedShardList, error) {
	return wire.OwnedShardList{}, notServed("self-hosted shards")
}

func (*Local) CreateJoinToken(context.Context, string, string, wire.CreateJoinTokenRequest) (wire.JoinToken, error) {
	return wire.JoinToken{}, notServed("join tokens")
}

func (*Local) RevokeShard(context.Context, string, string, string) error {
	return notServed("self-hosted shards")
}

func (*Local) AddShardNodes(context.Context, string, string, string, wire.AddNodesRequest) (wire.JoinToken, error) {
	return wire.JoinToken{}, notServed("join tokens")
}

func (*Local) RemoveShardNode(context.Context, string, string, string, string) error {
	return notServed("self-hosted shards")
}

// A local API keeps no audit log of its own: what its shard serves is
// recorded there; its own refusals are not recorded (docs/api/audit.md).
func (*Local) AppendAudit(context.Context, string, string, wire.AuditAppendRequest) error {
	return notServed("the audit log")
}

func (*Local) Audit(context.Context, string, string, url.Values) (wire.AuditPage, error) {
	return wire.AuditPage{}, notServed("the audit log")
}

func (*Local) SSOSignIn(context.Context, string, controlapi.SSOLookup) (wire.SSOSignIn, error) {
	return wire.SSOSignIn{}, notServed("console sign-in through the tenant's identity provider")
}

func (*Local) SSO(context.Context, string, string) (wire.SSOConfig, error) {
	return wire.SSOConfig{}, notServed("SSO configuration")
}

func (*Local) PutSSO(context.Context, string, string, wire.SSORequest) (wire.SSOConfig, error) {
	return wire.SSOConfig{}, notServed("SSO configuration")
}

func (*Local) DeleteSSO(context.Context, string, string) error {
	return notServed("SSO configuration")
}
