package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/golang-jwt/jwt/v5"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
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
// do not slide: one ends sessionTTL after sign-in (sooner when its key
// expires sooner), and the console signs in again.

const (
	sessionCookie   = "jobbie_session"
	sessionTTL      = 15 * time.Minute
	sessionIssuer   = "jobbie-gateway"
	sessionAudience = "jobbie-console"
	// csrfHeader must be on every mutation a session makes: a cross-site
	// form cannot send a custom header, and a cross-site script cannot
	// send one without a CORS preflight the gateway never grants.
	csrfHeader = "X-Jobbie-CSRF"
	// maxSessionBody bounds the sign-in body: an API key and some JSON.
	maxSessionBody = 16 << 10
)

// sessionClaims is a session's JWT: the key's verified claims, the signing
// key that vouched for it and its secret's generation.
type sessionClaims struct {
	Key tenancy.KeyClaims `json:"key"`
	Kid string            `json:"kid"`
	Gen uint64            `json:"gen"`
	jwt.RegisteredClaims
}

// sessions issues and verifies console sessions.
type sessions struct {
	auth   *authenticator
	secret []byte
	parser *jwt.Parser
	cache  *lru.Cache[string, session] // cookie value → its session

	mu    sync.Mutex
	ended map[string]time.Time // signed-out session ids → their expiry
}

func newSessions(auth *authenticator, cacheSize int) (*sessions, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	cache, err := lru.New[string, session](cacheSize)
	if err != nil {
		return nil, err
	}
	return &sessions{
		auth:   auth,
		secret: secret,
		cache:  cache,
		ended:  map[string]time.Time{},
		parser: jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithTimeFunc(auth.clock.Now),
			jwt.WithIssuer(sessionIssuer), jwt.WithAudience(sessionAudience), jwt.WithExpirationRequired()),
	}, nil
}

// issue signs a session for verified key v, starting at now.
func (ss *sessions) issue(v verifiedKey, now time.Time) (token string, expires time.Time, err error) {
	expires = now.Add(sessionTTL).Truncate(time.Second) // a JWT's exp is in whole seconds
	if v.expires != 0 && time.Unix(0, v.expires).Before(expires) {
		expires = time.Unix(0, v.expires)
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", time.Time{}, err
	}
	claims := sessionClaims{Key: *v.claims, Kid: v.kid, Gen: v.gen, RegisteredClaims: jwt.RegisteredClaims{
		Issuer: sessionIssuer, Audience: jwt.ClaimStrings{sessionAudience}, Subject: v.claims.Subject,
		ID: hex.EncodeToString(id), IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(expires),
	}}
	token, err = jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(ss.secret)
	return token, expires, err
}

// session is a verified session: its key, and its own id and expiry.
type session struct {
	key     verifiedKey
	id      string
	expires time.Time
}

// authenticate admits a session cookie's value as its key, with the checks
// of the key itself. token may alias request memory.
func (ss *sessions) authenticate(token string) (session, error) {
	a := ss.auth
	now := a.clock.Now()
	if err := a.judging(now); err != nil {
		return session{}, err
	}
	s, cached := ss.cache.Get(token)
	if !cached || !now.Before(s.expires) {
		if cached {
			ss.cache.Remove(token)
		}
		tok := strings.Clone(token)
		var err error
		if s, err = ss.verify(tok); err != nil {
			return session{}, err
		}
		ss.cache.Add(tok, s)
	}
	v := s.key
	if ss.signedOut(s.id) {
		return session{}, apierr.New(apierr.Unauthenticated, "console session has been signed out: sign in again")
	}
	if _, ok := a.keys.lookup(v.kid); !ok {
		return session{}, apierr.New(apierr.Unauthenticated, "console session's API key %s is signed by a signing key control no longer publishes: sign in again", v.claims.Subject)
	}
	if err := a.checkRevoked(v, now); err != nil {
		return session{}, err
	}
	a.uses.saw(v, now)
	return s, nil
}

// verify checks a session token's signature and claims.
func (ss *sessions) verify(token string) (session, error) {
	var c sessionClaims
	if _, err := ss.parser.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return ss.secret, nil }); err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) {
			return session{}, apierr.New(apierr.Unauthenticated, "console session has expired: sign in again")
		}
		return session{}, apierr.New(apierr.Unauthenticated, "console session is invalid (this gateway did not issue it, or it restarted since): sign in again")
	}
	key := c.Key
	v := verifiedKey{claims: &key, kid: c.Kid, gen: c.Gen, use: new(useMark)}
	if key.ExpiresAt != nil {
		v.expires = key.ExpiresAt.UnixNano()
	}
	return session{key: v, id: c.ID, expires: c.ExpiresAt.Time}, nil
}

// signOut ends session id (which expires at exp) on this gateway.
func (ss *sessions) signOut(id string, exp, now time.Time) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, e := range ss.ended {
		if !now.Before(e) {
			delete(ss.ended, k)
		}
	}
	ss.ended[id] = exp
}

func (ss *sessions) signedOut(id string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	_, ok := ss.ended[id]
	return ok
}

// caller authenticates a request to /api/v1: by its Authorization header
// when it has one (the cookie is then ignored), else by its console
// session, whose mutations must pass the CSRF check.
func (s *Server) caller(c *fiber.Ctx) (*tenancy.KeyClaims, error) {
	h := c.Get(fiber.HeaderAuthorization)
	if h != "" {
		return s.auth.authenticate(h) // an API client: no cookie to parse
	}
	cookie := c.Cookies(sessionCookie)
	if cookie == "" {
		return s.auth.authenticate(h)
	}
	sess, err := s.sessions.authenticate(cookie)
	if err != nil {
		return nil, err
	}
	if err := checkCSRF(c); err != nil {
		return nil, err
	}
	return sess.key.claims, nil
}

// checkCSRF refuses a cookie-authenticated request that a page of another
// site could have sent: a mutation without the CSRF header, or one whose
// Origin is not the gateway's own. Behind a proxy that ends TLS the
// gateway sees plain HTTP, so over plain HTTP an https Origin of the same
// host is its own too.
func checkCSRF(c *fiber.Ctx) error {
	if m := c.Method(); m == fiber.MethodGet || m == fiber.MethodHead {
		return nil
	}
	if c.Get(csrfHeader) != "1" {
		return apierr.New(apierr.Forbidden, "CSRF check failed: a request authenticated by a console session that changes anything must send the header %s: 1", csrfHeader)
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

// sessionAnswer is what the session endpoints say about a session.
type sessionAnswer struct {
	KeyID            string    `json:"key_id"`
	TenantID         string    `json:"tenant_id"`
	Role             string    `json:"role"`
	Namespaces       []string  `json:"namespaces"`
	DefaultNamespace string    `json:"default_namespace"`
	ExpiresAt        time.Time `json:"expires_at"`
	// Namespace is the one asked about (X-Jobbie-Namespace), or the
	// default when the header is absent or names one the key may not use;
	// Actions is what the key's role may do there (on some queue of it, for
	// a custom role), so the console can hide what would be refused.
	Namespace string   `json:"namespace"`
	Actions   []string `json:"actions"`
}

func (s *Server) answerOf(c *fiber.Ctx, k *tenancy.KeyClaims, exp time.Time) (sessionAnswer, error) {
	ns, err := namespaceOf(k, c.Get(wire.NamespaceHeader))
	if err != nil {
		ns = k.DefaultNamespace
	}
	acts, err := s.actionsIn(k, ns, apierr.RequestIDOf(c))
	if err != nil {
		return sessionAnswer{}, err
	}
	return sessionAnswer{KeyID: k.Subject, TenantID: k.TenantID, Role: string(k.Role),
		Namespaces: slices.Clone(k.Namespaces), DefaultNamespace: k.DefaultNamespace, ExpiresAt: exp.UTC(),
		Namespace: ns, Actions: acts}, nil
}

// actionsIn lists the actions k's role may perform in namespace ns: for a
// built-in role as RBAC decides them, for a custom role those it may
// perform on at least one queue there.
func (s *Server) actionsIn(k *tenancy.KeyClaims, ns, requestID string) ([]string, error) {
	var rs *roleSet
	if isCustomRole(k.Role) {
		var err error
		if rs, err = s.roles.get(k.TenantID, requestID, k.Role); err != nil {
			return nil, err
		}
	}
	out := []string{}
	for _, a := range tenancy.AllActions {
		var ok bool
		if rs == nil {
			var err error
			if ok, err = s.rbac.allowed(k.Role, k.TenantID, ns, a); err != nil {
				return nil, err
			}
		} else {
			ok = !rs.scope(k.Role, ns, a).none()
		}
		if ok {
			out = append(out, string(a))
		}
	}
	return out, nil
}

// signIn exchanges an API key for a session: POST /console/api/session
// {"api_key": "…"}. It is a mutation like any other (CSRF-checked), so a
// page of another site cannot sign a browser in with a key of its own.
func (s *Server) signIn(c *fiber.Ctx) error {
	if err := checkCSRF(c); err != nil {
		return err
	}
	body := c.Request().Body()
	if len(body) > maxSessionBody {
		return apierr.New(apierr.TooLarge, "request body is %d bytes, over this endpoint's limit of %d bytes", len(body), maxSessionBody)
	}
	var in struct {
		APIKey string `json:"api_key"`
	}
	if err := apierr.DecodeJSON(body, &in, true); err != nil {
		return err
	}
	if strings.TrimSpace(in.APIKey) == "" {
		return apierr.Field("api_key", "api_key is required: the API key to sign in with")
	}
	v, err := s.auth.authenticateKey("Bearer " + in.APIKey)
	if err != nil {
		return err
	}
	token, exp, err := s.sessions.issue(v, s.cfg.Clock.Now())
	if err != nil {
		return err
	}
	c.Cookie(&fiber.Cookie{Name: sessionCookie, Value: token, Path: "/", Expires: exp,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: c.Protocol() == "https"})
	a, err := s.answerOf(c, v.claims, exp)
	if err != nil {
		return err
	}
	return c.JSON(a)
}

// showSession answers the current session, or 401.
func (s *Server) showSession(c *fiber.Ctx) error {
	cookie := c.Cookies(sessionCookie)
	if cookie == "" {
		return apierr.New(apierr.Unauthenticated, "not signed in: POST /console/api/session with an API key")
	}
	sess, err := s.sessions.authenticate(cookie)
	if err != nil {
		return err
	}
	a, err := s.answerOf(c, sess.key.claims, sess.expires)
	if err != nil {
		return err
	}
	return c.JSON(a)
}

// signOut ends the session and clears its cookie (204, signed in or not).
func (s *Server) signOut(c *fiber.Ctx) error {
	if err := checkCSRF(c); err != nil {
		return err
	}
	if cookie := c.Cookies(sessionCookie); cookie != "" {
		if sess, err := s.sessions.verify(cookie); err == nil {
			s.sessions.signOut(sess.id, sess.expires, s.cfg.Clock.Now())
		}
		s.sessions.cache.Remove(cookie)
	}
	c.Cookie(&fiber.Cookie{Name: sessionCookie, Value: "", Path: "/", Expires: time.Unix(0, 0),
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: c.Protocol() == "https"})
	return c.SendStatus(fiber.StatusNoContent)
}
