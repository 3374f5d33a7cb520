package controlapi

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Control is what the gateway asks the control plane. requestID, where a
// call takes one, is the tenant request the call serves (control logs
// it); tenant is a tenant id. Errors are described in the package
// comment.
type Control interface {
	// Who may call: signing keys, revocations, custom roles (admission).
	// Revocations also tells when the list was current: zero when it was
	// as of the call, else when it arrived (a local API's trust bundle).
	JWKS(ctx context.Context) (tenancy.JWKS, error)
	Revocations(ctx context.Context) (wire.Revocations, time.Time, error)
	TenantRoles(ctx context.Context, requestID, tenant string) (wire.TenantRoles, error)
	ReportKeyUse(ctx context.Context, uses wire.KeyUsage) error
	// SSOSignIn is the OIDC sign-in configuration, client secret included,
	// of the tenant q names (tenant_id, tenant or domain): the console's
	// sign-in through the tenant's identity provider. 404: none.
	SSOSignIn(ctx context.Context, requestID string, q SSOLookup) (wire.SSOSignIn, error)

	// Where a namespace lives (proxy) and what a tenant's plan allows
	// (limits). A 404 *Error from TenantPlan or TenantQuota means none.
	Namespace(ctx context.Context, requestID, tenant, ns string) (wire.NamespacePlacement, error)
	TenantPlan(ctx context.Context, requestID, tenant string) (wire.TenantPlan, error)
	TenantQuota(ctx context.Context, tenant string) (wire.TenantQuota, error)
	ReportAPIRequests(ctx context.Context, report wire.APIRequestsReport) error

	// Self-hosted shards: who may dial in, and what their nodes trust
	// (selfhosted).
	SelfHostedShards(ctx context.Context) (wire.SelfHostedShards, error)
	TrustBundle(ctx context.Context, tenant, shard string) (wire.TrustBundle, error)

	Admin
}

// Admin is tenant administration, which the gateway serves through
// control once it has decided the caller may (package admin).
type Admin interface {
	ListNamespaces(ctx context.Context, requestID, tenant string) (wire.NamespaceList, error)
	CreateNamespace(ctx context.Context, requestID, tenant string, in NewNamespace) (wire.Namespace, error)
	UpdateNamespace(ctx context.Context, requestID, tenant, ns string, in wire.UpdateNamespaceRequest) (wire.Namespace, error)
	DeleteNamespace(ctx context.Context, requestID, tenant, ns string) error

	ListKeys(ctx context.Context, requestID, tenant string) (wire.KeyList, error)
	CreateKey(ctx context.Context, requestID, tenant string, in wire.CreateKeyRequest) (wire.CreatedKey, error)
	Key(ctx context.Context, requestID, tenant, id string) (wire.Key, error)
	DeleteKey(ctx context.Context, requestID, tenant, id string) error
	RotateKey(ctx context.Context, requestID, tenant, id string, in wire.RotateKeyRequest) (wire.RotatedKey, error)

	Role(ctx context.Context, requestID, tenant, name string) (wire.Role, error)
	CreateRole(ctx context.Context, requestID, tenant string, in wire.RoleRequest) (wire.RoleChanged, error)
	UpdateRole(ctx context.Context, requestID, tenant, name string, in wire.RoleRequest) (wire.RoleChanged, error)
	DeleteRole(ctx context.Context, requestID, tenant, name string) (wire.RolesVersion, error)

	CreateBackup(ctx context.Context, requestID, tenant string, in wire.CreateBackupRequest) (wire.Backup, error)
	// ListBackups lists the backups of namespaces, or of every namespace
	// when it is empty.
	ListBackups(ctx context.Context, requestID, tenant string, namespaces []string) (wire.BackupList, error)
	Backup(ctx context.Context, requestID, tenant, id string) (wire.Backup, error)
	DeleteBackup(ctx context.Context, requestID, tenant, id string) error
	RestoreBackup(ctx context.Context, requestID, tenant, id string, in wire.RestoreOrder) (wire.Backup, error)
	// DownloadBackup opens a backup's bytes as control streams them; ctx
	// bounds the whole download.
	DownloadBackup(ctx context.Context, requestID, tenant, id string) (*Download, error)
	BackupPolicy(ctx context.Context, requestID, tenant, ns string) (wire.BackupPolicy, error)
	PutBackupPolicy(ctx context.Context, requestID, tenant, ns string, in wire.BackupPolicyRequest) (wire.BackupPolicy, error)
	DeleteBackupPolicy(ctx context.Context, requestID, tenant, ns string) error

	Invoices(ctx context.Context, requestID, tenant string) (wire.InvoiceList, error)
	// Invoice is invoice id ("upcoming" too) as control keeps it: a
	// closed invoice's stored bytes.
	Invoice(ctx context.Context, requestID, tenant, id string) (json.RawMessage, error)
	Usage(ctx context.Context, requestID, tenant string, q wire.UsageQuery) (wire.Usage, error)

	OwnedShards(ctx context.Context, requestID, tenant string) (wire.OwnedShardList, error)
	CreateJoinToken(ctx context.Context, requestID, tenant string, in wire.CreateJoinTokenRequest) (wire.JoinToken, error)
	RevokeShard(ctx context.Context, requestID, tenant, id string) error
	AddShardNodes(ctx context.Context, requestID, tenant, id string, in wire.AddNodesRequest) (wire.JoinToken, error)
	RemoveShardNode(ctx context.Context, requestID, tenant, id, node string) error

	SSO(ctx context.Context, requestID, tenant string) (wire.SSOConfig, error)
	PutSSO(ctx context.Context, requestID, tenant string, in wire.SSORequest) (wire.SSOConfig, error)
	DeleteSSO(ctx context.Context, requestID, tenant string) error

	// AppendAudit records one request of the tenant in its audit log at
	// control; Audit reads a page of it (q: GET /api/v1/audit's filters,
	// limit and control's own cursor, after).
	AppendAudit(ctx context.Context, requestID, tenant string, in wire.AuditAppendRequest) error
	Audit(ctx context.Context, requestID, tenant string, q url.Values) (wire.AuditPage, error)
}

// NewNamespace is a namespace to create: the tenant's request, and the
// tenant's own self-hosted shard to place it on, if any.
type NewNamespace struct {
	wire.CreateNamespaceRequest
	Shard string `json:"shard,omitempty"`
}

// SSOLookup names the tenant of a sign-in: by one of its id, its name,
// or an email's domain (found only when exactly one tenant admits it).
type SSOLookup struct {
	TenantID, TenantName, Domain string
}

// Download is a backup's bytes, streamed. The caller closes Body.
type Download struct {
	Body io.ReadCloser
	// Length is the body's length, -1 when control did not say.
	Length int64
	// Size is control's X-Jobbie-Backup-Size, when it sent one.
	Size string
}
