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
// several replicas the load balancer must keep a browser on one).
//
// Sessions slide: a session ends once it has been idle for the idle
// timeout, and at the latest the absolute cap after sign-in (sooner when
// its key expires sooner). The cookie's token carries its own expiry, so
// a request of the session that comes a while after its token was issued
// gets a new token of the same session (same id, same sign-in time) with
// the expiry moved on: Slide. Nothing is kept per session but the
// signed-out ids.

const (
	// SessionCookie is the cookie that carries a session.
	SessionCookie = "jobbie_session"
	// DefaultSessionIdle is how long a session lasts without a request,
	// unless the gateway is configured otherwise.
	DefaultSessionIdle = 30 * time.Minute
	// DefaultSessionMax is how long a session lasts after sign-in at most,
	// however active, unless the gateway is configured otherwise.
	DefaultSessionMax = 12 * time.Hour
	sessionIssuer     = "jobbie-gateway"
	sessionAudience   = "jobbie-console"
	// CSRFHeader must be on every mutation a session makes: a cross-site
	// form cannot send a custom header, and a cross-site script cannot
	// send one without a CORS preflight the gateway never grants.
	CSRFHeader = "X-Jobbie-CSRF"
)

// sessionClaims is a session's JWT: the key's verified claims, the signing
// key that vouched for it and its secret's generation, and when the
// session began (the absolute cap counts from it, across slides).
type sessionClaims struct {
	Key    tenancy.KeyClaims `json:"key"`
	Person *Person           `json:"person,omitempty"` // a person's session (sessions_person.go): no key behind it
	Kid    string            `json:"kid"`
	Gen    uint64            `json:"gen"`
	Start  int64             `json:"start"` // sign-in, Unix seconds
	jwt.RegisteredClaims
}

// Sessions issues and verifies console sessions.
type Sessions struct {
	auth   *authenticator
	secret []byte
	parser *jwt.Parser
	cache  *lru.Cache[string, Session] // cookie value → its session
	idle   time.Duration               // a session ends when idle this long
	max    time.Duration               // and this long after sign-in at most

	mu    sync.Mutex
	ended map[string]time.Time // signed-out session ids → their expiry

	sso *ssoConfigs // what people's sessions began under (sessions_person.go); nil: none checked
}

func newSessions(auth *authenticator, cacheSize int, idle, most time.Duration) (*Sessions, error) {
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
		idle:   idle,
		max:    most,
		secret: secret,
		cache:  cache,
		ended:  map[string]time.Time{},
		parser: jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithTimeFunc(auth.clock.Now),
			jwt.WithIssuer(sessionIssuer), jwt.WithAudience(sessionAudience), jwt.WithExpirationRequired()),
	}, nil
}

// Issue signs a session for verified key v, starting at now.
func (ss *Sessions) Issue(v VerifiedKey, now time.Time) (token string, expires time.Time, err error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", time.Time{}, err
	}
	s, token, err := ss.sign(Session{Key: v, id: hex.EncodeToString(id), Start: now.Truncate(time.Second)}, now)
	return token, s.Expires, err
}

// sign signs session s anew at now: its expiry the idle timeout from now,
// within the absolute cap and the key's own expiry.
func (ss *Sessions) sign(s Session, now time.Time) (Session, string, error) {
	exp := now.Add(ss.idle).Truncate(time.Second) // a JWT's exp is in whole seconds
	if end := s.Start.Add(ss.max); end.Before(exp) {
		exp = end
	}
	if s.Key.expires != 0 && time.Unix(0, s.Key.expires).Before(exp) {
		exp = time.Unix(0, s.Key.expires)
	}
	s.Expires, s.issued = exp, now.Truncate(time.Second)
	v := s.Key
	claims := sessionClaims{Key: *v.Claims, Person: s.Person, Kid: v.kid, Gen: v.gen, Start: s.Start.Unix(), RegisteredClaims: jwt.RegisteredClaims{
		Issuer: sessionIssuer, Audience: jwt.ClaimStrings{sessionAudience}, Subject: v.Claims.Subject,
		ID: s.id, IssuedAt: jwt.NewNumericDate(s.issued), ExpiresAt: jwt.NewNumericDate(exp),
	}}
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(ss.secret)
	return s, token, err
}

// Slide answers a new token for session s, used at now, when its token is
// old enough to be worth replacing (a tenth of the idle timeout, at most a
// minute: not one new cookie per request) and the new expiry is later.
func (ss *Sessions) Slide(s Session, now time.Time) (token string, expires time.Time, ok bool) {
	if now.Sub(s.issued) < min(ss.idle/10, time.Minute) {
		return "", time.Time{}, false
	}
	n, token, err := ss.sign(s, now)
	if err != nil || !n.Expires.After(s.Expires) {
		return "", time.Time{}, false
	}
	return token, n.Expires, true
}

// EndsBy is when session s ends however active it is.
func (ss *Sessions) EndsBy(s Session) time.Time {
	end := s.Start.Add(ss.max)
	if s.Key.expires != 0 && time.Unix(0, s.Key.expires).Before(end) {
		end = time.Unix(0, s.Key.expires)
	}
	return end.UTC()
}

// Session is a verified session: its key, its own id, when it began, when
// its token was issued and when that token expires.
type Session struct {
	Key VerifiedKey
	// Person is who signed in through the tenant's identity provider;
	// nil for a key's session. Key then holds the claims the person's
	// role gives (PersonClaims) and no key of control's.
	Person  *Person
	id      string
	Start   time.Time
	issued  time.Time
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
	if s.Person != nil { // no key to check: the provider vouched for the person at sign-in
		return s, ss.sso.check(s, now)
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
	s := Session{Key: v, Person: c.Person, id: c.ID, Start: time.Unix(c.Start, 0), Expires: c.ExpiresAt.Time}
	if c.IssuedAt != nil {
		s.issued = c.IssuedAt.Time
	}
	return s, nil
}

// SignOut ends the session of token, if it is one, on this gateway: every
// token of it, so until its absolute cap (a slid token outlives this one).
func (ss *Sessions) SignOut(token string, now time.Time) {
	if s, err := ss.Verify(token); err == nil {
		ss.signOut(s.id, s.Start.Add(ss.max), now)
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
// session, whose mutations must pass the CSRF check, and which the
// request keeps alive (a new cookie when Slide gives one).
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
	if token, exp, ok := g.sessions.Slide(sess, g.clock.Now()); ok {
		SetSessionCookie(c, token, exp)
	}
	return sess.Key.Claims, nil
}

// SetSessionCookie sets the session cookie to token, expiring at exp (an
// empty token at the epoch clears it).
func SetSessionCookie(c *fiber.Ctx, token string, exp time.Time) {
	c.Cookie(&fiber.Cookie{Name: SessionCookie, Value: token, Path: "/", Expires: exp,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: c.Protocol() == "https"})
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
