package admission

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/golang-jwt/jwt/v5"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

// Console sessions. The console signs in with an API key once and gets a
// session: a short-lived JWT (HS256) in the jobbie_session cookie, bound
// to the key's id, secret generation and signing key, and carrying its
// claims (tenant, role, namespaces). A request to /api/v1 without an
// Authorization header but with the cookie is admitted as that key, with
// every check of the key itself on every request: a revoked key, a
// rotated-out secret past its grace and a retired signing key end their
// sessions as soon as the revocation list says so.
//
// The HMAC key is random per gateway process: sessions do not survive a
// restart, and each works only on the gateway that issued it (behind
// several replicas the load balancer must keep a browser on one). Sessions
// do not slide: one ends SessionTTL after sign-in (sooner when its key
// expires sooner), and the console signs in again.

const (
	// SessionCookie is the cookie that carries a session.
	SessionCookie = "jobbie_session"
	// SessionTTL is how long a session lasts at most.
	SessionTTL      = 15 * time.Minute
	sessionIssuer   = "jobbie-gateway"
	sessionAudience = "jobbie-console"
	// CSRFHeader must be on every mutation a session makes: a cross-site
	// form cannot send a custom header, and a cross-site script cannot
	// send one without a CORS preflight the gateway never grants.
	CSRFHeader = "X-Jobbie-CSRF"
)

// sessionClaims is a session's JWT: the key's verified claims, the signing
// key that vouched for it and its secret's generation.
type sessionClaims struct {
	Key tenancy.KeyClaims `json:"key"`
	Kid string            `json:"kid"`
	Gen uint64            `json:"gen"`
	jwt.RegisteredClaims
}

// Sessions issues and verifies console sessions.
type Sessions struct {
	auth   *authenticator
	secret []byte
	parser *jwt.Parser
	cache  *lru.Cache[string, Session] // cookie value → its session

	mu    sync.Mutex
	ended map[string]time.Time // signed-out session ids → their expiry
}

func newSessions(auth *authenticator, cacheSize int) (*Sessions, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	cache, err := lru.New[string, Session](cacheSize)
	if err != nil {
		return nil, err
	}
	return &Sessions{
		auth:   auth,
		secret: secret,
		cache:  cache,
		ended:  map[string]time.Time{},
		parser: jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithTimeFunc(auth.clock.Now),
			jwt.WithIssuer(sessionIssuer), jwt.WithAudience(sessionAudience), jwt.WithExpirationRequired()),
	}, nil
}

// Issue signs a session for verified key v, starting at now.
func (ss *Sessions) Issue(v VerifiedKey, now time.Time) (token string, expires time.Time, err error) {
	expires = now.Add(SessionTTL).Truncate(time.Second) // a JWT's exp is in whole seconds
	if v.expires != 0 && time.Unix(0, v.expires).Before(expires) {
		expires = time.Unix(0, v.expires)
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", time.Time{}, err
	}
	claims := sessionClaims{Key: *v.Claims, Kid: v.kid, Gen: v.gen, RegisteredClaims: jwt.RegisteredClaims{
		Issuer: sessionIssuer, Audience: jwt.ClaimStrings{sessionAudience}, Subject: v.Claims.Subject,
		ID: hex.EncodeToString(id), IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(expires),
	}}
	token, err = jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(ss.secret)
	return token, expires, err
}

// Session is a verified session: its key, and its own id and expiry.
type Session struct {
	Key     VerifiedKey
	id      string
	Expires time.Time
}

// Authenticate admits a session cookie's value as its key, with the
// checks of the key itself. token may alias request memory.
func (ss *Sessions) Authenticate(token string) (Session, error) {
	a := ss.auth
	now := a.clock.Now()
	if err := a.judging(now); err != nil {
		return Session{}, err
	}
	s, cached := ss.cache.Get(token)
	if !cached || !now.Before(s.Expires) {
		if cached {
			ss.cache.Remove(token)
		}
		tok := strings.Clone(token)
		var err error
		if s, err = ss.Verify(tok); err != nil {
			return Session{}, err
		}
		ss.cache.Add(tok, s)
	}
	v := s.Key
	if ss.signedOut(s.id) {
		return Session{}, apierr.New(apierr.Unauthenticated, "console session has been signed out: sign in again")
	}
	if _, ok := a.keys.lookup(v.kid); !ok {
		return Session{}, apierr.New(apierr.Unauthenticated, "console session's API key %s is signed by a signing key control no longer publishes: sign in again", v.Claims.Subject)
	}
	if err := a.checkRevoked(v, now); err != nil {
		return Session{}, err
	}
	a.uses.saw(v, now)
	return s, nil
}

// Verify checks a session token's signature and claims.
func (ss *Sessions) Verify(token string) (Session, error) {
	var c sessionClaims
	if _, err := ss.parser.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return ss.secret, nil }); err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) {
			return Session{}, apierr.New(apierr.Unauthenticated, "console session has expired: sign in again")
		}
		return Session{}, apierr.New(apierr.Unauthenticated, "console session is invalid (this gateway did not issue it, or it restarted since): sign in again")
	}
	key := c.Key
	v := VerifiedKey{Claims: &key, kid: c.Kid, gen: c.Gen, use: new(useMark)}
	if key.ExpiresAt != nil {
		v.expires = key.ExpiresAt.UnixNano()
	}
	return Session{Key: v, id: c.ID, Expires: c.ExpiresAt.Time}, nil
}

// SignOut ends the session of token, if it is one, on this gateway.
func (ss *Sessions) SignOut(token string, now time.Time) {
	if s, err := ss.Verify(token); err == nil {
		ss.signOut(s.id, s.Expires, now)
	}
	ss.cache.Remove(token)
}

// signOut ends session id (which expires at exp) on this gateway.
func (ss *Sessions) signOut(id string, exp, now time.Time) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, e := range ss.ended {
		if !now.Before(e) {
			delete(ss.ended, k)
		}
	}
	ss.ended[id] = exp
}

func (ss *Sessions) signedOut(id string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	_, ok := ss.ended[id]
	return ok
}

// caller authenticates a request to /api/v1: by its Authorization header
// when it has one (the cookie is then ignored), else by its console
// session, whose mutations must pass the CSRF check.
func (g *Gate) caller(c *fiber.Ctx) (*tenancy.KeyClaims, error) {
	h := c.Get(fiber.HeaderAuthorization)
	if h != "" {
		return g.auth.authenticate(h) // an API client: no cookie to parse
	}
	cookie := c.Cookies(SessionCookie)
	if cookie == "" {
		return g.auth.authenticate(h)
	}
	sess, err := g.sessions.Authenticate(cookie)
	if err != nil {
		return nil, err
	}
	if err := CheckCSRF(c); err != nil {
		return nil, err
	}
	return sess.Key.Claims, nil
}

// CheckCSRF refuses a cookie-authenticated request that a page of another
// site could have sent: a mutation without the CSRF header, or one whose
// Origin is not the gateway's own. Behind a proxy that ends TLS the
// gateway sees plain HTTP, so over plain HTTP an https Origin of the same
// host is its own too.
func CheckCSRF(c *fiber.Ctx) error {
	if m := c.Method(); m == fiber.MethodGet || m == fiber.MethodHead {
		return nil
	}
	if c.Get(CSRFHeader) != "1" {
		return apierr.New(apierr.Forbidden, "CSRF check failed: a request authenticated by a console session that changes anything must send the header %s: 1", CSRFHeader)
	}
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" {
		return nil
	}
	host := string(c.Request().Host())
	u, err := url.Parse(origin)
	ok := err == nil && host != "" && u.Host == host && u.Path == "" &&
		(u.Scheme == "https" || (u.Scheme == "http" && !c.Context().IsTLS()))
	if !ok {
		return apierr.New(apierr.Forbidden, "CSRF check failed: Origin %q is not this gateway's (%s)", origin, host)
	}
	return nil
}

// ActionsIn lists the actions k's role may perform in namespace ns: for a
// built-in role as RBAC decides them, for a custom role those it may
// perform on at least one queue there.
func (g *Gate) ActionsIn(k *tenancy.KeyClaims, ns, requestID string) ([]string, error) {
	var rs *RoleSet
	if isCustomRole(k.Role) {
		var err error
		if rs, err = g.roles.get(k.TenantID, requestID, k.Role); err != nil {
			return nil, err
		}
	}
	out := []string{}
	for _, a := range tenancy.AllActions {
		var ok bool
		if rs == nil {
			var err error
			if ok, err = g.rbac.allowed(k.Role, k.TenantID, ns, a); err != nil {
				return nil, err
			}
		} else {
			ok = !rs.Scope(k.Role, ns, a).None()
		}
		if ok {
			out = append(out, string(a))
		}
	}
	return out, nil
}
