package admission

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// authenticator turns an Authorization header into verified key claims.
// A key verified once is cached by its token string, so the hot path costs
// a map lookup; revocation is checked on every request, cached or not.
type authenticator struct {
	keys   *keySet
	revs   *revocations
	uses   *keyUses
	tokens *lru.Cache[string, VerifiedKey]
	parser *jwt.Parser
	clock  clockwork.Clock
	ctx    context.Context // bounds JWKS fetches caused by unknown kids
	local  bool            // a self-hosted shard's local API: its words differ
}

// VerifiedKey is a cached, signature-checked key.
type VerifiedKey struct {
	Claims  *tenancy.KeyClaims
	kid     string // the signing key's
	gen     uint64 // the secret's generation (wire.SecretGeneration of its jti)
	expires int64  // unix nanoseconds; 0 when the key does not expire
	use     *useMark
}

var (
	errNoKid      = errors.New("key names no signing key (kid)")
	errUnknownKid = errors.New("key is signed by an unknown signing key")
)

// newAuthenticator caches up to cacheSize verified keys. A cached key's
// expiry and a fresh key's exp claim are both judged by clock.
func newAuthenticator(ctx context.Context, keys *keySet, revs *revocations, uses *keyUses, cacheSize int, clock clockwork.Clock) (*authenticator, error) {
	tokens, err := lru.New[string, VerifiedKey](cacheSize)
	if err != nil {
		return nil, err
	}
	a := &authenticator{
		keys:   keys,
		revs:   revs,
		uses:   uses,
		tokens: tokens,
		parser: jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}), jwt.WithTimeFunc(clock.Now)),
		clock:  clock,
		ctx:    ctx,
	}
	// A signing key dropped from the JWKS must stop vouching for cached keys.
	keys.onRemoved = a.tokens.Purge
	return a, nil
}

// ready reports whether keys can be judged: signing keys and the
// revocation list are both loaded.
func (a *authenticator) ready() bool { return a.keys.loaded() && a.revs.loaded() }

// authenticate verifies the key in an Authorization header value. header
// may alias request memory: only copies of it are kept.
func (a *authenticator) authenticate(header string) (*tenancy.KeyClaims, error) {
	v, err := a.authenticateKey(header)
	if err != nil {
		return nil, err
	}
	return v.Claims, nil
}

// judging refuses every key while keys cannot be judged at now: before
// signing keys and revocations are loaded, and while the revocation list
// is past its freshness bound.
func (a *authenticator) judging(now time.Time) error {
	if !a.ready() {
		if a.local {
			return apierr.Retry(apierr.Unavailable, StaleRetryAfter, "this self-hosted shard has no trust bundle from the hosted service yet (the signing keys and revocations it judges keys by): it gets one over its tunnel once it is connected")
		}
		return apierr.Retry(apierr.Unavailable, 1, "the gateway is starting: signing keys or the revocation list are not loaded yet")
	}
	if age, stale := a.revs.stale(now); stale && a.local {
		return apierr.Retry(apierr.RevocationsStale, StaleRetryAfter,
			"this self-hosted shard has not heard from the hosted service for %s, over its bound of %s (--local-api-max-offline), so it cannot confirm which keys are revoked: keys are refused until its tunnel brings a new trust bundle",
			age.Truncate(time.Second), a.revs.maxAge)
	} else if stale {
		return apierr.Retry(apierr.RevocationsStale, StaleRetryAfter,
			"the gateway cannot reach the control plane to confirm which keys are revoked: its revocation list is %s old, over its bound of %s, so keys are refused until it is fresh; retry shortly",
			age.Truncate(time.Second), a.revs.maxAge)
	}
	return nil
}

// authenticateKey is authenticate, answering the verified key whole.
func (a *authenticator) authenticateKey(header string) (VerifiedKey, error) {
	now := a.clock.Now()
	if err := a.judging(now); err != nil {
		return VerifiedKey{}, err
	}
	token, err := bearerToken(header)
	if err != nil {
		return VerifiedKey{}, err
	}
	v, cached := a.tokens.Get(token)
	if !cached || (v.expires != 0 && now.UnixNano() >= v.expires) {
		tok := strings.Clone(token)
		claims, kid, err := a.verify(tok)
		if err != nil {
			if cached { // expired since it was cached
				a.tokens.Remove(tok)
			}
			return VerifiedKey{}, err
		}
		v = VerifiedKey{Claims: claims, kid: kid, use: new(useMark)}
		if claims.ExpiresAt != nil {
			v.expires = claims.ExpiresAt.UnixNano()
		}
		if v.gen, err = wire.SecretGeneration(claims.ID); err != nil {
			return VerifiedKey{}, apierr.New(apierr.Unauthenticated, "API key is invalid: %v", err)
		}
		a.tokens.Add(tok, v)
	}
	if err := a.checkRevoked(v, now); err != nil {
		return VerifiedKey{}, err
	}
	a.uses.saw(v, now)
	return v, nil
}

// checkRevoked refuses a revoked key, a secret of a key that a rotation
// replaced once its grace period is over, and a key signed by a signing
// key that has retired.
func (a *authenticator) checkRevoked(v VerifiedKey, now time.Time) error {
	c := v.Claims
	if a.revs.revoked(c.Subject) {
		return apierr.New(apierr.Unauthenticated, "API key %s has been revoked", c.Subject)
	}
	if retired, at := a.revs.signingRetired(v.kid, now); retired {
		return apierr.New(apierr.Unauthenticated, "API key %s is signed by a signing key that retired at %s: it needs a new secret (rotate it with a key that still works, or create a new key)",
			c.Subject, at.UTC().Format(time.RFC3339))
	}
	if ok, until := a.revs.secret(c.Subject, v.gen, now); !ok {
		if until.IsZero() {
			return apierr.New(apierr.Unauthenticated, "this secret of API key %s was replaced when the key was rotated: use its new secret", c.Subject)
		}
		return apierr.New(apierr.Unauthenticated, "this secret of API key %s was replaced when the key was rotated, and its grace period ended at %s: use its new secret",
			c.Subject, until.UTC().Format(time.RFC3339))
	}
	return nil
}

// verify checks a token's signature and claims, and returns them with the
// id of the signing key.
func (a *authenticator) verify(token string) (*tenancy.KeyClaims, string, error) {
	claims := &tenancy.KeyClaims{}
	t, err := a.parser.ParseWithClaims(token, claims, a.keyFor)
	if err != nil {
		return nil, "", apierr.New(apierr.Unauthenticated, "%s", jwtProblem(err))
	}
	if err := claims.CheckAnyRole(); err != nil {
		return nil, "", apierr.New(apierr.Unauthenticated, "API key is invalid: %v", err)
	}
	if claims.Role == tenancy.RoleOperator {
		return nil, "", apierr.New(apierr.Forbidden, "operator keys are refused at the gateway (403): use the control plane's operator API")
	}
	kid, _ := t.Header["kid"].(string)
	return claims, kid, nil
}

func (a *authenticator) keyFor(t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	if kid == "" {
		return nil, errNoKid
	}
	k, ok := a.keys.lookupOrRefresh(a.ctx, kid)
	if !ok {
		return nil, errUnknownKid
	}
	return k, nil
}

// jwtProblem words a verification failure for the client.
func jwtProblem(err error) string {
	switch {
	case errors.Is(err, errNoKid):
		return "API key is invalid: it names no signing key (kid)"
	case errors.Is(err, errUnknownKid):
		return "API key is signed by an unknown signing key"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "API key has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "API key is not valid yet"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "API key is malformed: it is not a JWT"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "API key signature is invalid"
	}
	return "API key is invalid"
}

// StaleRetryAfter is the Retry-After, in seconds, of a key refused for a
// stale revocation list: an outage of control, not a blip.
const StaleRetryAfter = 5

const bearerPrefix = "bearer "

// bearerToken extracts the token of "Bearer <token>".
func bearerToken(h string) (string, error) {
	if h == "" || strings.EqualFold(strings.TrimSpace(h), "bearer") {
		return "", apierr.New(apierr.Unauthenticated, "missing API key: send Authorization: Bearer <API key>")
	}
	if len(h) <= len(bearerPrefix) || !strings.EqualFold(h[:len(bearerPrefix)], bearerPrefix) {
		return "", apierr.New(apierr.Unauthenticated, "malformed Authorization header: expected \"Bearer <API key>\"")
	}
	tok := strings.TrimSpace(h[len(bearerPrefix):])
	if tok == "" {
		return "", apierr.New(apierr.Unauthenticated, "missing API key: send Authorization: Bearer <API key>")
	}
	return tok, nil
}
