package service

import (
	"context"
	"strings"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A tenant's console sign-in through its identity provider. Control
// checks the configuration's shapes and roles and keeps it; the gateway
// runs the sign-in (gateway/sso) and asks for the configuration, secret
// included, by the tenant's id, name or an email's domain (SSOSignIn).

// SSO is tenant tid's configuration, without its secret: 404 for none.
func (s *Service) SSO(ctx context.Context, tid string) (wire.SSOConfig, error) {
	return ViewValue(s, func(r pebble.Reader) (wire.SSOConfig, error) {
		set, err := loadSSO(r, tid)
		return state.SSOView(set), err
	})
}

// PutSSO sets tenant tid's configuration: a bad field is a 400 naming
// it, and nothing changes.
func (s *Service) PutSSO(ctx context.Context, tid string, req wire.SSORequest) (wire.SSOConfig, error) {
	if tenancy.ValidateTenantID(tid) != nil {
		return wire.SSOConfig{}, apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	if err := apierr.Invalid(req.Check()); err != nil {
		return wire.SSOConfig{}, err
	}
	set, err := propose(ctx, s, state.OpPutSSO, &state.PutSSOCmd{TenantID: tid, Request: req})
	return state.SSOView(set), err
}

// DeleteSSO ends tenant tid's sign-in through its provider: 404 for none.
func (s *Service) DeleteSSO(ctx context.Context, tid string) error {
	if tenancy.ValidateTenantID(tid) != nil {
		return apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	_, err := propose(ctx, s, state.OpDeleteSSO, &state.DeleteSSOCmd{TenantID: tid})
	return err
}

// SSOLookup names the tenant a sign-in is for: exactly one of its id
// (the callback, which knows it), its name, or an email's domain (which
// finds a tenant only when exactly one tenant's configuration admits it,
// so no tenant can claim another's people by listing their domain).
type SSOLookup struct {
	TenantID, TenantName, Domain string
}

// SSOSignIn is the configuration, secret included, of the tenant lookup
// names: 404 when there is none, for whichever reason.
func (s *Service) SSOSignIn(ctx context.Context, q SSOLookup) (wire.SSOSignIn, error) {
	return ViewValue(s, func(r pebble.Reader) (wire.SSOSignIn, error) {
		t, err := ssoTenant(r, q)
		if err != nil {
			return wire.SSOSignIn{}, err
		}
		set, err := loadSSO(r, t.ID)
		if err != nil {
			return wire.SSOSignIn{}, err
		}
		return wire.SSOSignIn{TenantID: t.ID, TenantName: t.Name, Config: state.SSOView(set), ClientSecret: set.Request.ClientSecret}, nil
	})
}

func ssoNoTenant() error {
	return apierr.New(apierr.NotFound, "no tenant signs in with SSO by that name or email domain")
}

// orNotFound answers a tenant that is not found as no tenant signing in.
func orNotFound(t state.Tenant, err error) (state.Tenant, error) {
	if err != nil && apierr.From(err).Code == apierr.NotFound {
		return t, ssoNoTenant()
	}
	return t, err
}

func ssoTenant(r pebble.Reader, q SSOLookup) (state.Tenant, error) {
	notFound := ssoNoTenant()
	switch {
	case q.TenantID != "":
		if tenancy.ValidateTenantID(q.TenantID) != nil {
			return state.Tenant{}, notFound
		}
		return orNotFound(state.LoadTenant(r, q.TenantID))
	case q.TenantName != "":
		return orNotFound(state.LoadTenantByName(r, q.TenantName))
	case q.Domain != "":
		tids, err := state.SSOTenantsOfDomain(r, strings.ToLower(q.Domain))
		if err != nil {
			return state.Tenant{}, err
		}
		if len(tids) != 1 {
			return state.Tenant{}, notFound
		}
		return state.LoadTenant(r, tids[0])
	}
	return state.Tenant{}, apierr.Field("tenant", "tenant, tenant_id or domain is required")
}

func loadSSO(r pebble.Reader, tid string) (state.SSOSettings, error) {
	if _, err := state.FindTenant(r, tid); err != nil {
		return state.SSOSettings{}, err
	}
	set, ok, err := state.LoadSSO(r, tid)
	if err == nil && !ok {
		err = state.SSONotFound()
	}
	return set, err
}
