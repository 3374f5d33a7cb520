package admission

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/golang-jwt/jwt/v5"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

// A person's console session: someone who signed in through their
// tenant's identity provider (gateway/sso) rather than with a key. It is
// a session like a key's (the same cookie, CSRF check, sliding expiry
// and cap), whose requests are admitted as the claims of PersonClaims:
// the tenant, the role the person's groups map to, every namespace. No
// key of control's stands behind it, so no revocation applies; signing
// out, the idle timeout, the cap, and a change or removal of the
// tenant's SSO configuration (seen within ssoRecheck) end it.

// PersonKeyPrefix starts the key id a person's requests carry (and the
// audit log records): "sso:" and the person's email, or their subject
// at the provider when it gave no email it verified.
const PersonKeyPrefix = "sso:"

// Person is who a person's session belongs to.
type Person struct {
	Issuer  string `json:"iss"`
	Subject string `json:"sub"`
	Email   string `json:"email,omitempty"`
	Name    string `json:"name,omitempty"`
	// ConfigAt is the updated_at of the tenant's SSO configuration the
	// sign-in read: the session holds while it is the current one.
	ConfigAt time.Time `json:"cfg"`
}

// ID is the key id the person's requests carry.
func (p *Person) ID() string {
	if p.Email != "" {
		return PersonKeyPrefix + p.Email
	}
	return PersonKeyPrefix + p.Subject
}

// PersonClaims are the claims a person's requests are admitted with.
func PersonClaims(p *Person, tenant string, role tenancy.Role) *tenancy.KeyClaims {
	return &tenancy.KeyClaims{TenantID: tenant, Role: role, Namespaces: []string{tenancy.AllNamespaces},
		DefaultNamespace: tenancy.DefaultNamespace, RegisteredClaims: jwt.RegisteredClaims{Issuer: tenancy.Issuer, Subject: p.ID()}}
}

// IssuePerson signs a session for person p of tenant with role, starting
// at now.
func (ss *Sessions) IssuePerson(p Person, tenant string, role tenancy.Role, now time.Time) (token string, expires time.Time, err error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", time.Time{}, err
	}
	v := VerifiedKey{Claims: PersonClaims(&p, tenant, role), use: new(useMark)}
	s, token, err := ss.sign(Session{Key: v, Person: &p, id: hex.EncodeToString(id), Start: now.Truncate(time.Second)}, now)
	return token, s.Expires, err
}

// ssoRecheck is how often a gateway asks control again whether a
// tenant's SSO configuration is still the one its people's sessions
// began under: a change (or its removal) ends them within about this.
const ssoRecheck = 30 * time.Second

// ssoConfigs knows, per tenant, when its SSO configuration last changed
// (its updated_at, control's time, compared only for equality with what
// the sign-in read, so no clocks are compared).
type ssoConfigs struct {
	control controlapi.Control
	ctx     context.Context
	log     *slog.Logger
	seen    *lru.Cache[string, ssoSeen]
	calls   singleflight.Group
}

type ssoSeen struct {
	updated time.Time // zero: the tenant has none
	at      time.Time // when control said so
}

func newSSOConfigs(ctx context.Context, c controlapi.Control, log *slog.Logger) *ssoConfigs {
	seen, _ := lru.New[string, ssoSeen](10000) // only a non-positive size fails
	if log == nil {
		log = slog.Default()
	}
	return &ssoConfigs{control: c, ctx: ctx, log: log, seen: seen}
}

// check refuses person session s once its tenant's configuration is no
// longer the one it began under. When control cannot be asked, what was
// last heard stands (nothing heard: the session stands), as cached keys
// do while control is away.
func (c *ssoConfigs) check(s Session, now time.Time) error {
	if c == nil {
		return nil
	}
	tenant := s.Key.Claims.TenantID
	seen, ok := c.seen.Get(tenant)
	if !ok || now.Sub(seen.at) >= ssoRecheck {
		v, err, _ := c.calls.Do(tenant, func() (any, error) { return c.fetch(tenant, now) })
		if err == nil {
			seen, ok = v.(ssoSeen), true
		}
	}
	switch {
	case !ok:
		return nil
	case seen.updated.IsZero():
		return apierr.New(apierr.Unauthenticated, "the tenant no longer signs in through its identity provider: sign in again")
	case !seen.updated.Equal(s.Person.ConfigAt):
		return apierr.New(apierr.Unauthenticated, "the tenant's SSO configuration changed since you signed in: sign in again")
	}
	return nil
}

func (c *ssoConfigs) fetch(tenant string, now time.Time) (ssoSeen, error) {
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	cfg, err := c.control.SSO(ctx, "", tenant) // the configuration without its secret
	switch {
	case controlapi.NotFound(err):
		cfg.UpdatedAt = time.Time{}
	case err != nil:
		c.log.Warn("gateway: SSO configuration not checked: control did not answer", "tenant", tenant, "err", err)
		return ssoSeen{}, err
	}
	seen := ssoSeen{updated: cfg.UpdatedAt, at: now}
	c.seen.Add(tenant, seen)
	return seen, nil
}
