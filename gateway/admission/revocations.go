package admission

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/wire"
)

// revocationList is one version of control's list of revoked key ids, as
// a set, and of the secrets of rotated keys, by key id.
type revocationList struct {
	version  uint64
	ids      map[string]struct{}
	rotated  map[string]wire.KeySecrets
	retiring map[string]time.Time // signing key id → when it retires
}

// revocations holds the newest list; it is swapped whole so the per-request
// check is one atomic load and one map lookup. It also knows how old the
// list is: a list that control has not confirmed within maxAge may miss
// revocations made since, so keys are refused rather than trusted to it.
type revocations struct {
	list    atomic.Pointer[revocationList]
	fetched atomic.Int64 // unix nanoseconds of the last successful fetch (of the gateway's start before one)
	control controlapi.Control
	clock   clockwork.Clock
	maxAge  time.Duration
	// onRoles, when set, takes the tenants' roles versions of each new
	// list (roleCache.update).
	onRoles func([]wire.RolesVersion)

	// next closes when a new list is stored (changed): what holds a key
	// past its request, a worker stream, judges it again then.
	nextMu sync.Mutex
	next   chan struct{}
}

func newRevocations(control controlapi.Control, clock clockwork.Clock, maxAge time.Duration) *revocations {
	r := &revocations{control: control, clock: clock, maxAge: maxAge}
	r.fetched.Store(clock.Now().UnixNano())
	return r
}

// age is how long ago control last answered with the list.
func (r *revocations) age(now time.Time) time.Duration {
	return max(0, time.Duration(now.UnixNano()-r.fetched.Load()))
}

// stale reports whether the list is past its freshness bound at now, and
// its age.
func (r *revocations) stale(now time.Time) (time.Duration, bool) {
	age := r.age(now)
	return age, age > r.maxAge
}

// loaded reports whether the list was fetched at least once; until then no
// key is honoured, or a revoked key would work right after a restart.
func (r *revocations) loaded() bool { return r.list.Load() != nil }

// revoked reports whether key id was revoked.
func (r *revocations) revoked(keyID string) bool {
	l := r.list.Load()
	if l == nil {
		return false
	}
	_, ok := l.ids[keyID]
	return ok
}

// secret reports whether a token of generation gen of key keyID works at
// now (wire.KeySecrets), and, for one that no longer does, when its grace
// period ended (zero when it had none).
func (r *revocations) secret(keyID string, gen uint64, now time.Time) (bool, time.Time) {
	l := r.list.Load()
	if l == nil {
		return true, time.Time{}
	}
	ks, ok := l.rotated[keyID]
	if !ok || gen >= ks.Generation {
		return true, time.Time{}
	}
	for _, g := range ks.Grace {
		if g.Generation == gen {
			return now.Before(g.Until), g.Until
		}
	}
	return false, time.Time{}
}

// signingRetired reports whether signing key kid has retired at now, and
// when.
func (r *revocations) signingRetired(kid string, now time.Time) (bool, time.Time) {
	l := r.list.Load()
	if l == nil {
		return false, time.Time{}
	}
	at, ok := l.retiring[kid]
	return ok && !now.Before(at), at
}

// refresh fetches the list, rebuilding the set only when its version moved.
// The list counts as fresh from when the request was sent: what control
// answered was current then, not necessarily when the answer arrived.
func (r *revocations) refresh(ctx context.Context) error {
	asked := r.clock.Now()
	rev, asOf, err := r.control.Revocations(ctx)
	if err != nil {
		return err
	}
	if !asOf.IsZero() {
		asked = asOf
	}
	defer r.fetched.Store(asked.UnixNano())
	if cur := r.list.Load(); cur != nil && cur.version == rev.Version && len(cur.ids) == len(rev.Revoked) &&
		len(cur.rotated) == len(rev.Rotated) && len(cur.retiring) == len(rev.SigningKeys) {
		return nil
	}
	l := &revocationList{version: rev.Version, ids: make(map[string]struct{}, len(rev.Revoked)),
		rotated: make(map[string]wire.KeySecrets, len(rev.Rotated)), retiring: make(map[string]time.Time, len(rev.SigningKeys))}
	for _, sk := range rev.SigningKeys {
		l.retiring[sk.Kid] = sk.RetiresAt
	}
	for _, id := range rev.Revoked {
		l.ids[id] = struct{}{}
	}
	for _, ks := range rev.Rotated {
		l.rotated[ks.KeyID] = ks
	}
	if r.onRoles != nil {
		r.onRoles(rev.Roles)
	}
	r.list.Store(l)
	r.nextMu.Lock()
	if r.next != nil {
		close(r.next)
		r.next = nil
	}
	r.nextMu.Unlock()
	return nil
}

// changed answers a channel that closes when the next list is stored.
func (r *revocations) changed() <-chan struct{} {
	r.nextMu.Lock()
	defer r.nextMu.Unlock()
	if r.next == nil {
		r.next = make(chan struct{})
	}
	return r.next
}
