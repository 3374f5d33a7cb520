package wire

import (
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Console sign-in through a tenant's identity provider: GET, PUT and
// DELETE /api/v1/sso (the tenant owner's). The console signs a person
// in with OpenID Connect (authorization code with PKCE) at the tenant's
// issuer, and gives the session the role the person's groups map to.

// SSORequest is PUT /api/v1/sso: the tenant's whole OIDC sign-in
// configuration. ClientSecret is write-only: required the first time,
// left out to keep the one set before, never answered back.
type SSORequest struct {
	// IssuerURL is the provider's issuer (https, no query or fragment):
	// its discovery document is IssuerURL/.well-known/openid-configuration.
	IssuerURL    string `json:"issuer_url"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// AllowedDomains admits a person whose verified email is at one of
	// these domains; AllowedGroups one in one of these groups. At least
	// one of the two lists is required; a person passes either.
	AllowedDomains []string `json:"allowed_domains,omitempty"`
	AllowedGroups  []string `json:"allowed_groups,omitempty"`
	// GroupsClaim names the ID token (or userinfo) claim listing the
	// person's groups. Default "groups".
	GroupsClaim string `json:"groups_claim,omitempty"`
	// GroupRoles maps groups to roles (built-in or the tenant's custom
	// roles): the first entry whose group the person is in gives the
	// role; none does, DefaultRole; DefaultRole empty, sign-in refused.
	GroupRoles  []SSOGroupRole `json:"group_roles,omitempty"`
	DefaultRole string         `json:"default_role,omitempty"`
}

// SSOGroupRole maps one group to a role.
type SSOGroupRole struct {
	Group string `json:"group"`
	Role  string `json:"role"`
}

// SSOConfig is GET /api/v1/sso and PUT's answer: the configuration
// without its secret (ClientSecretSet says one is kept), and the path
// of the console's callback, to register as a redirect URI at the
// provider under the gateway's address.
type SSOConfig struct {
	IssuerURL       string         `json:"issuer_url"`
	ClientID        string         `json:"client_id"`
	ClientSecretSet bool           `json:"client_secret_set"`
	AllowedDomains  []string       `json:"allowed_domains"`
	AllowedGroups   []string       `json:"allowed_groups"`
	GroupsClaim     string         `json:"groups_claim"`
	GroupRoles      []SSOGroupRole `json:"group_roles"`
	DefaultRole     string         `json:"default_role,omitempty"`
	RedirectPath    string         `json:"redirect_path"`
	UpdatedAt       time.Time      `json:"updated_at"`
}

// SSOSignIn is control's internal answer to a gateway's sign-in lookup
// (GET /internal/v1/sso): the tenant, and its configuration with the
// client secret, which only the gateway's token exchange ever uses.
type SSOSignIn struct {
	TenantID     string    `json:"tenant_id"`
	TenantName   string    `json:"tenant_name"`
	Config       SSOConfig `json:"config"`
	ClientSecret string    `json:"client_secret"`
}

// SSOCallbackPath is the console's OIDC redirect URI's path.
const SSOCallbackPath = "/console/api/sso/callback"

// DefaultGroupsClaim is SSORequest.GroupsClaim's default.
const DefaultGroupsClaim = "groups"

// Limits of an SSO configuration.
const (
	MaxSSOURL        = 2048
	MaxSSOClientID   = 256
	MaxSSOSecret     = 1024
	MaxSSOListItems  = 100
	MaxSSOGroupBytes = 256
	MaxSSOClaimBytes = 64
)

// Check checks the request's shapes and fills in defaults: a bad field
// is a *FieldError naming it. Whether a custom role it names exists is
// for control to say, and whether the issuer's address may be reached
// for the gateway's egress guard.
func (r *SSORequest) Check() error {
	if err := checkIssuer(r.IssuerURL); err != nil {
		return err
	}
	if err := checkText("client_id", r.ClientID, MaxSSOClientID, true); err != nil {
		return err
	}
	if err := checkText("client_secret", r.ClientSecret, MaxSSOSecret, false); err != nil {
		return err
	}
	if len(r.AllowedDomains) == 0 && len(r.AllowedGroups) == 0 {
		return fieldErr("allowed_domains", "allowed_domains or allowed_groups is required: which of the provider's people may sign in")
	}
	if err := checkDomains(r.AllowedDomains); err != nil {
		return err
	}
	if err := checkGroups("allowed_groups", r.AllowedGroups); err != nil {
		return err
	}
	if r.GroupsClaim == "" {
		r.GroupsClaim = DefaultGroupsClaim
	}
	if !validClaimName(r.GroupsClaim) {
		return fieldErr("groups_claim", "groups_claim %q must be 1-%d letters, digits or _ . : / -", r.GroupsClaim, MaxSSOClaimBytes)
	}
	if len(r.GroupRoles) > MaxSSOListItems {
		return fieldErr("group_roles", "at most %d group_roles", MaxSSOListItems)
	}
	for i, gr := range r.GroupRoles {
		if err := checkText(indexed("group_roles", i)+".group", gr.Group, MaxSSOGroupBytes, true); err != nil {
			return err
		}
		if gr.Role == "" {
			return fieldErr(indexed("group_roles", i)+".role", "role is required")
		}
	}
	if len(r.GroupRoles) == 0 && r.DefaultRole == "" {
		return fieldErr("default_role", "default_role or group_roles is required: the role a person signs in with")
	}
	return nil
}

func indexed(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

func checkIssuer(raw string) error {
	const f = "issuer_url"
	if raw == "" {
		return fieldErr(f, "issuer_url is required: the provider's issuer, e.g. https://login.example.com")
	}
	if len(raw) > MaxSSOURL {
		return fieldErr(f, "issuer_url is longer than %d bytes", MaxSSOURL)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fieldErr(f, "issuer_url is not a URL: %v", err)
	case u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return fieldErr(f, "issuer_url must be an absolute https URL, not %q", raw)
	case u.User != nil:
		return fieldErr(f, "issuer_url may not carry user information")
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "?") || strings.HasSuffix(raw, "#"):
		return fieldErr(f, "issuer_url may not have a query or fragment")
	}
	return nil
}

// checkText checks a printable string of at most max bytes.
func checkText(field, s string, max int, required bool) error {
	switch {
	case s == "" && required:
		return fieldErr(field, "%s is required", field)
	case len(s) > max:
		return fieldErr(field, "%s is longer than %d bytes", field, max)
	case !utf8.ValidString(s):
		return fieldErr(field, "%s is not UTF-8", field)
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return fieldErr(field, "%s has a control character", field)
		}
	}
	return nil
}

func checkDomains(ds []string) error {
	if len(ds) > MaxSSOListItems {
		return fieldErr("allowed_domains", "at most %d allowed_domains", MaxSSOListItems)
	}
	for i, d := range ds {
		if !ValidEmailDomain(d) {
			return fieldErr(indexed("allowed_domains", i), "%q is not a lowercase domain name such as example.com", d)
		}
	}
	return nil
}

func checkGroups(field string, gs []string) error {
	if len(gs) > MaxSSOListItems {
		return fieldErr(field, "at most %d %s", MaxSSOListItems, field)
	}
	for i, g := range gs {
		if err := checkText(indexed(field, i), g, MaxSSOGroupBytes, true); err != nil {
			return err
		}
	}
	return nil
}

// ValidEmailDomain reports a lowercase DNS name of two labels or more.
func ValidEmailDomain(d string) bool {
	if len(d) > 253 || !strings.Contains(d, ".") {
		return false
	}
	for label := range strings.SplitSeq(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func validClaimName(s string) bool {
	if s == "" || len(s) > MaxSSOClaimBytes {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.:/-", c) >= 0) {
			return false
		}
	}
	return true
}
