package state

import (
	"slices"
	"strconv"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A tenant's console sign-in through its identity provider (OIDC), one
// per tenant. The client secret is kept here, replicated as the rest of
// the state, and leaves control only in a gateway's sign-in lookup.

// SSOSettings is a tenant's configuration, as stored (JSON, an on-disk
// format: add fields, never rename them). Request holds the secret.
type SSOSettings struct {
	Request   wire.SSORequest `json:"request"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// PutSSOCmd sets TenantID's configuration; an empty client secret keeps
// the one set before. The proposer checked the shapes (wire.SSORequest.Check).
type PutSSOCmd struct {
	TenantID string          `json:"tenant_id"`
	Request  wire.SSORequest `json:"request"`
}

// DeleteSSOCmd ends TenantID's sign-in through its provider.
type DeleteSSOCmd struct {
	TenantID string `json:"tenant_id"`
}

func applyPutSSO(tx *replica.Tx, c *PutSSOCmd) (SSOSettings, error) {
	if _, err := LoadTenant(tx, c.TenantID); err != nil {
		return SSOSettings{}, businessErr(err)
	}
	old, found, err := LoadSSO(tx, c.TenantID)
	if err != nil {
		panic(err)
	}
	req := c.Request
	if req.ClientSecret == "" {
		if !found {
			return SSOSettings{}, apierr.Field("client_secret", "client_secret is required: the provider's secret for client_id")
		}
		req.ClientSecret = old.Request.ClientSecret
	}
	for i, gr := range req.GroupRoles {
		if err := checkSSORole(tx, c.TenantID, gr.Role, "group_roles["+strconv.Itoa(i)+"].role"); err != nil {
			return SSOSettings{}, err
		}
	}
	if req.DefaultRole != "" {
		if err := checkSSORole(tx, c.TenantID, req.DefaultRole, "default_role"); err != nil {
			return SSOSettings{}, err
		}
	}
	s := SSOSettings{Request: req, UpdatedAt: tx.Now}
	mustSetJSON(tx, layout.SSO(c.TenantID), s)
	return s, nil
}

// checkSSORole refuses a role that is neither a built-in tenant role nor
// one of the tenant's custom roles.
func checkSSORole(r pebble.Reader, tid, role, field string) error {
	if _, err := tenancy.ParseRole(role); err == nil {
		return nil
	}
	if tenancy.IsCustomRole(tenancy.Role(role)) {
		if _, ok, err := LoadRole(r, tid, role); err != nil {
			panic(err)
		} else if ok {
			return nil
		}
	}
	return apierr.Field(field, "role %q is neither a built-in role (owner, admin, developer, producer, worker, viewer, billing) nor one of the tenant's custom roles", role)
}

func applyDeleteSSO(tx *replica.Tx, c *DeleteSSOCmd) (replica.None, error) {
	if _, err := LoadTenant(tx, c.TenantID); err != nil {
		return replica.None{}, businessErr(err)
	}
	if _, found, err := LoadSSO(tx, c.TenantID); err != nil {
		panic(err)
	} else if !found {
		return replica.None{}, SSONotFound()
	}
	mustDelete(tx, layout.SSO(c.TenantID))
	return replica.None{}, nil
}

// SSONotFound is the answer about a tenant without a configuration.
func SSONotFound() error {
	return apierr.New(apierr.NotFound, "the tenant has no SSO configuration (PUT /api/v1/sso sets one)")
}

func LoadSSO(r pebble.Reader, tid string) (SSOSettings, bool, error) {
	var s SSOSettings
	ok, err := getJSON(r, layout.SSO(tid), &s)
	return s, ok, err
}

// SSOTenantsOfDomain lists the tenants whose configuration admits email
// domain d.
func SSOTenantsOfDomain(r pebble.Reader, d string) ([]string, error) {
	var out []string
	err := scanJSON(r, layout.AllSSO(), func(k []byte, s SSOSettings) {
		if slices.Contains(s.Request.AllowedDomains, d) {
			out = append(out, string(k[1:])) // the key is the prefix byte and the tenant id
		}
	})
	return out, err
}

// SSOView is the configuration as the tenant sees it: no secret.
func SSOView(s SSOSettings) wire.SSOConfig {
	q := s.Request
	orEmpty := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	roles := q.GroupRoles
	if roles == nil {
		roles = []wire.SSOGroupRole{}
	}
	return wire.SSOConfig{IssuerURL: q.IssuerURL, ClientID: q.ClientID, ClientSecretSet: q.ClientSecret != "",
		AllowedDomains: orEmpty(q.AllowedDomains), AllowedGroups: orEmpty(q.AllowedGroups), GroupsClaim: q.GroupsClaim,
		GroupRoles: roles, DefaultRole: q.DefaultRole, RedirectPath: wire.SSOCallbackPath, UpdatedAt: s.UpdatedAt.UTC()}
}
