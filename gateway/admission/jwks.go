package admission

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/tenancy"
)

// keySet holds the signing keys by kid. It is swapped whole, so readers
// take no lock.
type keySet struct {
	keys    atomic.Pointer[map[string]ed25519.PublicKey]
	control controlapi.Control
	minGap  time.Duration
	clock   clockwork.Clock
	// onRemoved runs when a refresh drops a kid, so keys it signed stop
	// being honoured from caches too.
	onRemoved func()

	mu        sync.Mutex // serializes fetches
	lastFetch time.Time
	fetches   uint64 // fetches begun, so waiters can tell one happened
}

// loaded reports whether the keys were fetched at least once.
func (ks *keySet) loaded() bool { return ks.keys.Load() != nil }

// lookup returns the key named kid, if known.
func (ks *keySet) lookup(kid string) (ed25519.PublicKey, bool) {
	m := ks.keys.Load()
	if m == nil {
		return nil, false
	}
	k, ok := (*m)[kid]
	return k, ok
}

// maxKidWait is the longest an API key with an unknown kid waits for the
// next JWKS fetch the rate limit allows; past it, the key is refused.
const maxKidWait = time.Second

// lookupOrRefresh returns the key named kid, fetching the JWK set first
// when kid is unknown, so a rotated key works at once. Fetches caused by
// unknown kids are at least minGap apart (forged kids cost control at most
// one fetch per gap): a key that comes within maxKidWait of the next
// allowed fetch waits for it (requests that waited together share it),
// one further off is refused.
func (ks *keySet) lookupOrRefresh(ctx context.Context, kid string) (ed25519.PublicKey, bool) {
	if k, ok := ks.lookup(kid); ok {
		return k, true
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if k, ok := ks.lookup(kid); ok { // fetched while we waited
		return k, true
	}
	wait := ks.minGap - ks.clock.Since(ks.lastFetch)
	if wait > maxKidWait {
		return nil, false
	}
	if wait > 0 {
		seen := ks.fetches
		ks.mu.Unlock()
		t := time.NewTimer(wait) // on the wall clock: a fake one would never fire
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		ks.mu.Lock()
		if ctx.Err() != nil || ks.fetches != seen { // another request fetched meanwhile
			return ks.lookup(kid)
		}
	}
	if err := ks.fetchLocked(ctx); err != nil {
		return nil, false
	}
	return ks.lookup(kid)
}

// refresh fetches the JWK set now.
func (ks *keySet) refresh(ctx context.Context) error {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.fetchLocked(ctx)
}

func (ks *keySet) fetchLocked(ctx context.Context) error {
	ks.lastFetch = ks.clock.Now()
	ks.fetches++
	set, err := ks.control.JWKS(ctx)
	if err != nil {
		return err
	}
	keys, err := parseJWKS(set)
	if err != nil {
		return err
	}
	old := ks.keys.Swap(&keys)
	if old != nil && ks.onRemoved != nil {
		for kid := range *old {
			if _, ok := keys[kid]; !ok {
				ks.onRemoved()
				break
			}
		}
	}
	return nil
}

// parseJWKS keeps the Ed25519 signing keys of a JWK set, skipping keys of
// other kinds or malformed ones, and refuses a set with none usable so a
// broken control answer cannot lock every key out.
func parseJWKS(set tenancy.JWKS) (map[string]ed25519.PublicKey, error) {
	keys := make(map[string]ed25519.PublicKey, len(set.Keys))
	var bad error
	for _, k := range set.Keys {
		if !k.IsEdDSASigning() {
			continue
		}
		pub, err := k.PublicKey()
		if err != nil {
			bad = err
			continue
		}
		keys[k.Kid] = pub
	}
	if len(keys) == 0 {
		if bad != nil {
			return nil, fmt.Errorf("gateway: jwks holds no usable Ed25519 signing key: %w", bad)
		}
		return nil, fmt.Errorf("gateway: jwks holds no Ed25519 signing key")
	}
	return keys, nil
}
