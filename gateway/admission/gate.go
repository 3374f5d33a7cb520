package admission

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/gateway/controlapi"
)

// Config configures a Gate. Every field is required but Local.
type Config struct {
	Control controlapi.Control
	Clock   clockwork.Clock
	Logger  *slog.Logger
	// Local: the gateway is a self-hosted node's local API, whose control
	// is its trust bundle; its refusals say so.
	Local bool
	// TokenCacheSize bounds the verified keys cached (and the sessions);
	// DecisionCacheSize the RBAC decisions.
	TokenCacheSize, DecisionCacheSize int
	// JWKSMinRefresh is the least time between two JWKS fetches caused by
	// keys with an unknown kid.
	JWKSMinRefresh time.Duration
	// RevocationMaxAge is the revocation list's freshness bound.
	RevocationMaxAge time.Duration
	// SessionIdle ends a console session idle this long, SessionMax one
	// this long after sign-in (zero: DefaultSessionIdle, DefaultSessionMax).
	SessionIdle, SessionMax time.Duration
}

// Gate admits requests: it authenticates keys and sessions and
// authorizes actions.
type Gate struct {
	control  controlapi.Control
	log      *slog.Logger
	clock    clockwork.Clock
	ctx      context.Context // bounds control calls; ends when the gateway stops
	keys     *keySet
	revs     *revocations
	uses     *keyUses
	auth     *authenticator
	sessions *Sessions
	rbac     *authorizer
	roles    *roleCache

	revsStale bool // the revocation loop's view, to log changes once
}

// New builds a gate; ctx ends its calls to control.
func New(ctx context.Context, cfg Config) (*Gate, error) {
	rbac, err := newAuthorizer(cfg.DecisionCacheSize)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g := &Gate{control: cfg.Control, log: cfg.Logger, clock: cfg.Clock, ctx: ctx, rbac: rbac,
		keys:  &keySet{control: cfg.Control, minGap: cfg.JWKSMinRefresh, clock: cfg.Clock},
		revs:  newRevocations(cfg.Control, cfg.Clock, cfg.RevocationMaxAge),
		uses:  newKeyUses(cfg.Control, cfg.Logger),
		roles: newRoleCache(ctx, cfg.Control)}
	g.revs.onRoles = g.roles.update
	if g.auth, err = newAuthenticator(ctx, g.keys, g.revs, g.uses, cfg.TokenCacheSize, cfg.Clock); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.auth.local = cfg.Local
	idle, most := cfg.SessionIdle, cfg.SessionMax
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	if most <= 0 {
		most = DefaultSessionMax
	}
	if g.sessions, err = newSessions(g.auth, cfg.TokenCacheSize, idle, most); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.sessions.sso = newSSOConfigs(ctx, cfg.Control, cfg.Logger)
	return g, nil
}

// Sessions are the console's sessions.
func (g *Gate) Sessions() *Sessions { return g.sessions }

// AuthenticateKey verifies the key in an Authorization header value, as
// Admit does, and answers it whole (a console sign-in).
func (g *Gate) AuthenticateKey(header string) (VerifiedKey, error) {
	return g.auth.authenticateKey(header)
}

// RolesChanged records a change of tenant tid's custom roles made through
// this gateway, which brought them to version: its next request sees it.
func (g *Gate) RolesChanged(tid string, version uint64) { g.roles.changed(tid, version) }

// Ready reports whether keys can be judged: signing keys and the
// revocation list are both loaded.
func (g *Gate) Ready() bool { return g.auth.ready() }

// KeysLoaded reports whether the signing keys were fetched at least once.
func (g *Gate) KeysLoaded() bool { return g.keys.loaded() }

// RevocationsLoaded reports whether the revocation list was fetched at
// least once.
func (g *Gate) RevocationsLoaded() bool { return g.revs.loaded() }

// RevocationsChanged answers a channel that closes when the revocation
// list next changes: a worker stream judges its key again then
// (AuthenticateKey), instead of at its next call.
func (g *Gate) RevocationsChanged() <-chan struct{} { return g.revs.changed() }

// RevocationAge is how old the revocation list is at now, and whether
// that is past its freshness bound (every key is then refused).
func (g *Gate) RevocationAge(now time.Time) (time.Duration, bool) { return g.revs.stale(now) }

// CachedKeys is how many verified keys are cached.
func (g *Gate) CachedKeys() int { return g.auth.tokens.Len() }

// RefreshKeys fetches the signing keys now.
func (g *Gate) RefreshKeys(ctx context.Context) error { return g.keys.refresh(ctx) }

// RefreshRevocations refreshes the revocation list and logs when it
// passes its freshness bound, and when it is fresh again. One goroutine
// calls it.
func (g *Gate) RefreshRevocations(ctx context.Context) error {
	err := g.revs.refresh(ctx)
	age, stale := g.revs.stale(g.clock.Now())
	switch {
	case stale && !g.revsStale && ctx.Err() == nil:
		g.log.Error("gateway: revocation list is older than its freshness bound: refusing API keys with 503 until control answers",
			"age", age.Truncate(time.Second), "bound", g.revs.maxAge, "err", err)
	case !stale && g.revsStale:
		g.log.Info("gateway: revocation list is fresh again: accepting API keys")
	}
	g.revsStale = stale
	return err
}

// ReportKeyUses sends control the keys admitted since the last report.
func (g *Gate) ReportKeyUses(ctx context.Context) error { return g.uses.report(ctx) }

// ReportLastKeyUses sends what is left when the gateway stops, within
// timeout.
func (g *Gate) ReportLastKeyUses(timeout time.Duration) { g.uses.reportLast(timeout) }
