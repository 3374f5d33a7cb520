package controlapi

import (
	"context"
	"net/http"
	"net/url"

	"github.com/jobbie/jobbie/wire"
)

// A tenant's OIDC sign-in configuration over control's internal API.

func (h *HTTP) SSO(ctx context.Context, requestID, tenant string) (wire.SSOConfig, error) {
	var c wire.SSOConfig
	return c, h.get(ctx, tenantPath(tenant, "sso"), requestID, &c)
}

func (h *HTTP) PutSSO(ctx context.Context, requestID, tenant string, in wire.SSORequest) (wire.SSOConfig, error) {
	var c wire.SSOConfig
	return c, h.call(ctx, http.MethodPut, tenantPath(tenant, "sso"), requestID, in, http.StatusOK, &c)
}

func (h *HTTP) DeleteSSO(ctx context.Context, requestID, tenant string) error {
	return h.call(ctx, http.MethodDelete, tenantPath(tenant, "sso"), requestID, nil, http.StatusNoContent, nil)
}

func (h *HTTP) SSOSignIn(ctx context.Context, requestID string, q SSOLookup) (wire.SSOSignIn, error) {
	v := url.Values{}
	for k, s := range map[string]string{"tenant_id": q.TenantID, "tenant": q.TenantName, "domain": q.Domain} {
		if s != "" {
			v.Set(k, s)
		}
	}
	var in wire.SSOSignIn
	return in, h.get(ctx, "/internal/v1/sso?"+v.Encode(), requestID, &in)
}
