package controlapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/internal/controlclient"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// HTTP is Control over control's internal API (docs/internal-api.md),
// through a controlclient.Client whose TLS admits control alone.
type HTTP struct{ c *controlclient.Client }

var _ Control = (*HTTP)(nil)

// NewHTTP asks control through c.
func NewHTTP(c *controlclient.Client) *HTTP { return &HTTP{c: c} }

// maxErrorBody bounds what is read of a download's error answer.
const maxErrorBody = 32 << 20

// call sends in (nil: no body) and decodes an answer of status want into
// out (nil: none), turning another status into an *Error. A create whose
// ctx carries an Idempotency-Key sends it (idempotency.go).
func (h *HTTP) call(ctx context.Context, method, path, requestID string, in any, want int, out any) error {
	if idem := IdempotencyOf(ctx); idem != nil && method == http.MethodPost && out != nil {
		return h.callKeyed(ctx, idem, method, path, requestID, in, want, out)
	}
	return asError(h.c.JSON(ctx, method, path, requestID, in, want, out))
}

func (h *HTTP) get(ctx context.Context, path, requestID string, out any) error {
	return h.call(ctx, http.MethodGet, path, requestID, nil, http.StatusOK, out)
}

func asError(err error) error {
	var se *controlclient.StatusError
	if errors.As(err, &se) {
		return &Error{Method: se.Method, Path: se.Path, Status: se.Status, RetryAfter: se.Header.Get("Retry-After"), Body: se.Body}
	}
	return err
}

// tenantPath is a path under control's internal tenant API; parts are
// escaped one by one.
func tenantPath(tenant string, parts ...string) string {
	p := "/internal/v1/tenants/" + url.PathEscape(tenant)
	for _, part := range parts {
		p += "/" + url.PathEscape(part)
	}
	return p
}

func (h *HTTP) JWKS(ctx context.Context) (tenancy.JWKS, error) {
	var set tenancy.JWKS
	return set, h.get(ctx, "/control/v1/jwks", "", &set)
}

func (h *HTTP) Revocations(ctx context.Context) (wire.Revocations, time.Time, error) {
	var rev wire.Revocations
	return rev, time.Time{}, h.get(ctx, "/internal/v1/revocations", "", &rev)
}

func (h *HTTP) TenantRoles(ctx context.Context, requestID, tenant string) (wire.TenantRoles, error) {
	var tr wire.TenantRoles
	return tr, h.get(ctx, tenantPath(tenant, "roles"), requestID, &tr)
}

func (h *HTTP) ReportKeyUse(ctx context.Context, uses wire.KeyUsage) error {
	return h.call(ctx, http.MethodPost, "/internal/v1/keys/used", "", uses, http.StatusNoContent, nil)
}

func (h *HTTP) Namespace(ctx context.Context, requestID, tenant, ns string) (wire.NamespacePlacement, error) {
	var p wire.NamespacePlacement
	return p, h.get(ctx, tenantPath(tenant, "namespaces", ns), requestID, &p)
}

func (h *HTTP) TenantPlan(ctx context.Context, requestID, tenant string) (wire.TenantPlan, error) {
	var tp wire.TenantPlan
	return tp, h.get(ctx, tenantPath(tenant, "plan"), requestID, &tp)
}

func (h *HTTP) TenantQuota(ctx context.Context, tenant string) (wire.TenantQuota, error) {
	var q wire.TenantQuota
	return q, h.get(ctx, tenantPath(tenant, "quota"), "", &q)
}

func (h *HTTP) ReportAPIRequests(ctx context.Context, report wire.APIRequestsReport) error {
	return h.call(ctx, http.MethodPost, "/internal/v1/usage/api-requests", "", report, http.StatusNoContent, nil)
}

func (h *HTTP) SelfHostedShards(ctx context.Context) (wire.SelfHostedShards, error) {
	var list wire.SelfHostedShards
	return list, h.get(ctx, "/internal/v1/shards/self-hosted", "", &list)
}

func (h *HTTP) TrustBundle(ctx context.Context, tenant, shard string) (wire.TrustBundle, error) {
	var b wire.TrustBundle
	return b, h.get(ctx, tenantPath(tenant, "shards", shard, "trust"), "", &b)
}

func (h *HTTP) ListNamespaces(ctx context.Context, requestID, tenant string) (wire.NamespaceList, error) {
	var list wire.NamespaceList
	return list, h.get(ctx, tenantPath(tenant, "namespaces"), requestID, &list)
}

func (h *HTTP) CreateNamespace(ctx context.Context, requestID, tenant string, in NewNamespace) (wire.Namespace, error) {
	var ns wire.Namespace
	return ns, h.call(ctx, http.MethodPost, tenantPath(tenant, "namespaces"), requestID, in, http.StatusCreated, &ns)
}

func (h *HTTP) UpdateNamespace(ctx context.Context, requestID, tenant, ns string, in wire.UpdateNamespaceRequest) (wire.Namespace, error) {
	var out wire.Namespace
	return out, h.call(ctx, http.MethodPatch, tenantPath(tenant, "namespaces", ns), requestID, in, http.StatusOK, &out)
}

func (h *HTTP) DeleteNamespace(ctx context.Context, requestID, tenant, ns string) error {
	return h.call(ctx, http.MethodDelete, tenantPath(tenant, "namespaces", ns), requestID, nil, http.StatusNoContent, nil)
}
