package controlapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Keys, roles, backups, billing and self-hosted shards over control's
// internal tenant API.

func (h *HTTP) ListKeys(ctx context.Context, requestID, tenant string) (wire.KeyList, error) {
	var list wire.KeyList
	return list, h.get(ctx, tenantPath(tenant, "keys"), requestID, &list)
}

func (h *HTTP) CreateKey(ctx context.Context, requestID, tenant string, in wire.CreateKeyRequest) (wire.CreatedKey, error) {
	var k wire.CreatedKey
	return k, h.call(ctx, http.MethodPost, tenantPath(tenant, "keys"), requestID, in, http.StatusCreated, &k)
}

func (h *HTTP) Key(ctx context.Context, requestID, tenant, id string) (wire.Key, error) {
	var k wire.Key
	return k, h.get(ctx, tenantPath(tenant, "keys", id), requestID, &k)
}

func (h *HTTP) DeleteKey(ctx context.Context, requestID, tenant, id string) error {
	return h.call(ctx, http.MethodDelete, tenantPath(tenant, "keys", id), requestID, nil, http.StatusNoContent, nil)
}

func (h *HTTP) RotateKey(ctx context.Context, requestID, tenant, id string, in wire.RotateKeyRequest) (wire.RotatedKey, error) {
	var k wire.RotatedKey
	return k, h.call(ctx, http.MethodPost, tenantPath(tenant, "keys", id, "rotate"), requestID, in, http.StatusOK, &k)
}

func (h *HTTP) Role(ctx context.Context, requestID, tenant, name string) (wire.Role, error) {
	var r wire.Role
	return r, h.get(ctx, tenantPath(tenant, "roles", name), requestID, &r)
}

func (h *HTTP) CreateRole(ctx context.Context, requestID, tenant string, in wire.RoleRequest) (wire.RoleChanged, error) {
	var r wire.RoleChanged
	return r, h.call(ctx, http.MethodPost, tenantPath(tenant, "roles"), requestID, in, http.StatusCreated, &r)
}

func (h *HTTP) UpdateRole(ctx context.Context, requestID, tenant, name string, in wire.RoleRequest) (wire.RoleChanged, error) {
	var r wire.RoleChanged
	return r, h.call(ctx, http.MethodPut, tenantPath(tenant, "roles", name), requestID, in, http.StatusOK, &r)
}

func (h *HTTP) DeleteRole(ctx context.Context, requestID, tenant, name string) (wire.RolesVersion, error) {
	var v wire.RolesVersion
	return v, h.call(ctx, http.MethodDelete, tenantPath(tenant, "roles", name), requestID, nil, http.StatusOK, &v)
}

func (h *HTTP) CreateBackup(ctx context.Context, requestID, tenant string, in wire.CreateBackupRequest) (wire.Backup, error) {
	var b wire.Backup
	return b, h.call(ctx, http.MethodPost, tenantPath(tenant, "backups"), requestID, in, http.StatusAccepted, &b)
}

func (h *HTTP) ListBackups(ctx context.Context, requestID, tenant string, namespaces []string) (wire.BackupList, error) {
	path := tenantPath(tenant, "backups")
	if len(namespaces) > 0 {
		path += "?" + url.Values{"namespace": namespaces}.Encode()
	}
	var list wire.BackupList
	return list, h.get(ctx, path, requestID, &list)
}

func (h *HTTP) Backup(ctx context.Context, requestID, tenant, id string) (wire.Backup, error) {
	var b wire.Backup
	return b, h.get(ctx, tenantPath(tenant, "backups", id), requestID, &b)
}

func (h *HTTP) DeleteBackup(ctx context.Context, requestID, tenant, id string) error {
	return h.call(ctx, http.MethodDelete, tenantPath(tenant, "backups", id), requestID, nil, http.StatusNoContent, nil)
}

func (h *HTTP) RestoreBackup(ctx context.Context, requestID, tenant, id string, in wire.RestoreOrder) (wire.Backup, error) {
	var b wire.Backup
	return b, h.call(ctx, http.MethodPost, tenantPath(tenant, "backups", id, "restore"), requestID, in, http.StatusAccepted, &b)
}

func (h *HTTP) DownloadBackup(ctx context.Context, requestID, tenant, id string) (*Download, error) {
	path := tenantPath(tenant, "backups", id, "download")
	resp, err := h.c.Open(ctx, path, requestID)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK { // an error answer: short, judged as any other
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, &Error{Method: http.MethodGet, Path: path, Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Body: body}
	}
	return &Download{Body: resp.Body, Length: resp.ContentLength, Size: resp.Header.Get("X-Jobbie-Backup-Size")}, nil
}

func (h *HTTP) BackupPolicy(ctx context.Context, requestID, tenant, ns string) (wire.BackupPolicy, error) {
	var p wire.BackupPolicy
	return p, h.get(ctx, tenantPath(tenant, "namespaces", ns, "backup-policy"), requestID, &p)
}

func (h *HTTP) PutBackupPolicy(ctx context.Context, requestID, tenant, ns string, in wire.BackupPolicyRequest) (wire.BackupPolicy, error) {
	var p wire.BackupPolicy
	return p, h.call(ctx, http.MethodPut, tenantPath(tenant, "namespaces", ns, "backup-policy"), requestID, in, http.StatusOK, &p)
}

func (h *HTTP) DeleteBackupPolicy(ctx context.Context, requestID, tenant, ns string) error {
	return h.call(ctx, http.MethodDelete, tenantPath(tenant, "namespaces", ns, "backup-policy"), requestID, nil, http.StatusNoContent, nil)
}

func (h *HTTP) Invoices(ctx context.Context, requestID, tenant string) (wire.InvoiceList, error) {
	var list wire.InvoiceList
	return list, h.get(ctx, tenantPath(tenant, "invoices"), requestID, &list)
}

func (h *HTTP) Invoice(ctx context.Context, requestID, tenant, id string) (json.RawMessage, error) {
	path := tenantPath(tenant, "invoices", id)
	r, err := h.c.Do(ctx, http.MethodGet, path, requestID, nil)
	if err != nil {
		return nil, err
	}
	if r.Status != http.StatusOK {
		return nil, &Error{Method: http.MethodGet, Path: path, Status: r.Status, RetryAfter: r.Header.Get("Retry-After"), Body: r.Body}
	}
	return r.Body, nil
}

func (h *HTTP) Usage(ctx context.Context, requestID, tenant string, q wire.UsageQuery) (wire.Usage, error) {
	v := url.Values{"from": {q.From.Format(time.RFC3339)}, "to": {q.To.Format(time.RFC3339)}, "granularity": {q.Granularity}}
	if q.Namespace != "" {
		v.Set("namespace", q.Namespace)
	}
	var u wire.Usage
	return u, h.get(ctx, tenantPath(tenant, "usage")+"?"+v.Encode(), requestID, &u)
}

func (h *HTTP) OwnedShards(ctx context.Context, requestID, tenant string) (wire.OwnedShardList, error) {
	var list wire.OwnedShardList
	return list, h.get(ctx, tenantPath(tenant, "shards"), requestID, &list)
}

func (h *HTTP) CreateJoinToken(ctx context.Context, requestID, tenant string, in wire.CreateJoinTokenRequest) (wire.JoinToken, error) {
	var tok wire.JoinToken
	return tok, h.call(ctx, http.MethodPost, tenantPath(tenant, "shards", "join-tokens"), requestID, in, http.StatusCreated, &tok)
}

func (h *HTTP) RevokeShard(ctx context.Context, requestID, tenant, id string) error {
	return h.call(ctx, http.MethodDelete, tenantPath(tenant, "shards", id), requestID, nil, http.StatusNoContent, nil)
}

func (h *HTTP) AddShardNodes(ctx context.Context, requestID, tenant, id string, in wire.AddNodesRequest) (wire.JoinToken, error) {
	var tok wire.JoinToken
	return tok, h.call(ctx, http.MethodPost, tenantPath(tenant, "shards", id, "join-tokens"), requestID, in, http.StatusCreated, &tok)
}

func (h *HTTP) RemoveShardNode(ctx context.Context, requestID, tenant, id, node string) error {
	return h.call(ctx, http.MethodDelete, tenantPath(tenant, "shards", id, "nodes", node), requestID, nil, http.StatusNoContent, nil)
}

func (h *HTTP) AppendAudit(ctx context.Context, requestID, tenant string, in wire.AuditAppendRequest) error {
	return h.call(ctx, http.MethodPost, tenantPath(tenant, "audit"), requestID, in, http.StatusNoContent, nil)
}

func (h *HTTP) Audit(ctx context.Context, requestID, tenant string, q url.Values) (wire.AuditPage, error) {
	var p wire.AuditPage
	return p, h.call(ctx, http.MethodGet, tenantPath(tenant, "audit")+"?"+q.Encode(), requestID, nil, http.StatusOK, &p)
}
