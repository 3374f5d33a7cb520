package controlfake

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Tenants' OIDC sign-in configurations, checked as control checks them
// (wire.SSORequest.Check, roles the tenant has), and their lookup by
// tenant id, name (NameTenant) or email domain.

// NameTenant gives tenant tid its name, for sign-in lookups by name.
func (fc *Control) NameTenant(tid, name string) {
	fc.Lock()
	defer fc.Unlock()
	if fc.tenantNames == nil {
		fc.tenantNames = map[string]string{}
	}
	fc.tenantNames[tid] = name
}

// SSOSecret is tenant tid's kept client secret ("" for none).
func (fc *Control) SSOSecret(tid string) string {
	fc.Lock()
	defer fc.Unlock()
	return fc.sso[tid].ClientSecret
}

func ssoNotFound() error {
	return refuse(apierr.New(apierr.NotFound, "the tenant has no SSO configuration (PUT /api/v1/sso sets one)"))
}

func (fc *Control) SSO(_ context.Context, _, tid string) (wire.SSOConfig, error) {
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.SSOConfig{}, err
	}
	if _, ok := fc.sso[tid]; !ok {
		return wire.SSOConfig{}, ssoNotFound()
	}
	return fc.ssoView(tid), nil
}

func (fc *Control) PutSSO(_ context.Context, _, tid string, in wire.SSORequest) (wire.SSOConfig, error) {
	tid, in = strings.Clone(tid), clone(in)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.SSOConfig{}, err
	}
	if err := apierr.Invalid(in.Check()); err != nil {
		return wire.SSOConfig{}, refuse(apierr.From(err))
	}
	old, found := fc.sso[tid]
	if in.ClientSecret == "" {
		if !found {
			return wire.SSOConfig{}, refuse(apierr.Field("client_secret", "client_secret is required"))
		}
		in.ClientSecret = old.ClientSecret
	}
	roles := []string{in.DefaultRole}
	for _, gr := range in.GroupRoles {
		roles = append(roles, gr.Role)
	}
	for _, r := range roles {
		_, builtin := tenancy.ParseRole(r)
		if _, custom := fc.roles[tid][r]; r != "" && builtin != nil && !custom {
			return wire.SSOConfig{}, refuse(apierr.Field("default_role", "role %q is neither built in nor the tenant's", r))
		}
	}
	if fc.sso == nil {
		fc.sso = map[string]wire.SSORequest{}
	}
	fc.sso[tid] = in
	fc.nextID++
	if fc.ssoAt == nil {
		fc.ssoAt = map[string]time.Time{}
	}
	fc.ssoAt[tid] = Jan(5).Add(time.Duration(fc.nextID) * time.Second) // each change its own time, as control's are
	return fc.ssoView(tid), nil
}

func (fc *Control) DeleteSSO(_ context.Context, _, tid string) error {
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return err
	}
	if _, ok := fc.sso[tid]; !ok {
		return ssoNotFound()
	}
	delete(fc.sso, tid)
	return nil
}

func (fc *Control) SSOSignIn(_ context.Context, _ string, q controlapi.SSOLookup) (wire.SSOSignIn, error) {
	q = clone(q)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.SSOSignIn{}, err
	}
	var tids []string
	for tid, req := range fc.sso {
		name := fc.tenantNames[tid]
		if (q.TenantID != "" && q.TenantID == tid) || (q.TenantName != "" && q.TenantName == name) ||
			(q.Domain != "" && slices.Contains(req.AllowedDomains, q.Domain)) {
			tids = append(tids, tid)
		}
	}
	if len(tids) != 1 {
		return wire.SSOSignIn{}, refuse(apierr.New(apierr.NotFound, "no tenant signs in with SSO by that name or email domain"))
	}
	req := fc.sso[tids[0]]
	return wire.SSOSignIn{TenantID: tids[0], TenantName: fc.tenantNames[tids[0]], Config: fc.ssoView(tids[0]), ClientSecret: req.ClientSecret}, nil
}

func (fc *Control) ssoView(tid string) wire.SSOConfig {
	q := clone(fc.sso[tid])
	return wire.SSOConfig{IssuerURL: q.IssuerURL, ClientID: q.ClientID, ClientSecretSet: q.ClientSecret != "",
		AllowedDomains: q.AllowedDomains, AllowedGroups: q.AllowedGroups, GroupsClaim: q.GroupsClaim,
		GroupRoles: q.GroupRoles, DefaultRole: q.DefaultRole, RedirectPath: wire.SSOCallbackPath, UpdatedAt: fc.ssoAt[tid]}
}
