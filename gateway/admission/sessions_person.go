package admission

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/jobbie/jobbie/tenancy"
)

// A person's console session: someone who signed in through their
// tenant's identity provider (gateway/sso) rather than with a key. It is
// a session like a key's (the same cookie, CSRF check, sliding expiry
// and cap), whose requests are admitted as the claims of PersonClaims:
// the tenant, the role the person's groups map to, every namespace. No
// key of control's stands behind it, so no revocation applies; signing
// out, the idle timeout and the cap end it.

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
