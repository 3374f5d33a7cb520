package admission

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/wire"
)

// Which keys were used, for their last_used_at: the gateway notes each
// key it admits and reports them to control in batches, every
// KeyUsageInterval of the gateway's Config (controlapi's ReportKeyUse),
// which records the times. A key is noted at most once per report, by its first use
// since the last one, so the hot path takes the lock once per token and
// interval, not once per request; its last_used_at therefore trails its
// real last use by up to about an interval, and shows up about an
// interval after.

// maxPendingUses bounds the keys waiting to be reported: while control
// cannot be reached the gateway keeps what it has and drops new keys
// past this.
const maxPendingUses = 100_000

// useMark is the report a cached token was last noted for (its epoch
// plus one; 0: never), shared by the token's cache entry.
type useMark struct{ epoch atomic.Uint64 }

type keyRef struct{ tenant, id string }

// keyUses gathers the keys seen since the last report.
type keyUses struct {
	control controlapi.Control
	log     *slog.Logger
	epoch   atomic.Uint64 // the report being gathered; grows at each report

	mu      sync.Mutex
	pending map[keyRef]time.Time
}

func newKeyUses(control controlapi.Control, log *slog.Logger) *keyUses {
	return &keyUses{control: control, log: log, pending: map[keyRef]time.Time{}}
}

// saw notes that key v was admitted at now, once per report.
func (u *keyUses) saw(v VerifiedKey, now time.Time) {
	e := u.epoch.Load() + 1
	old := v.use.epoch.Load()
	if old == e || !v.use.epoch.CompareAndSwap(old, e) {
		return
	}
	k := keyRef{tenant: v.Claims.TenantID, id: v.Claims.Subject}
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.pending[k]; !ok && len(u.pending) < maxPendingUses {
		u.pending[k] = now
	}
}

// report sends control the keys seen since the last report, in batches
// of wire.MaxKeyUses. What could not be sent is kept for the next one.
func (u *keyUses) report(ctx context.Context) error {
	u.mu.Lock()
	seen := u.pending
	u.pending = make(map[keyRef]time.Time, len(seen))
	u.epoch.Add(1)
	u.mu.Unlock()
	uses := make([]wire.KeyUse, 0, len(seen))
	for k, at := range seen {
		uses = append(uses, wire.KeyUse{TenantID: k.tenant, KeyID: k.id, At: at.UTC()})
	}
	for len(uses) > 0 {
		n := min(len(uses), wire.MaxKeyUses)
		if err := u.send(ctx, uses[:n]); err != nil {
			u.keep(uses)
			return err
		}
		uses = uses[n:]
	}
	return nil
}

// keep puts back uses that could not be reported, keeping the later time
// of a key seen again meanwhile.
func (u *keyUses) keep(uses []wire.KeyUse) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, use := range uses {
		k := keyRef{tenant: use.TenantID, id: use.KeyID}
		if cur, ok := u.pending[k]; ok && cur.After(use.At) {
			continue
		}
		if _, ok := u.pending[k]; ok || len(u.pending) < maxPendingUses {
			u.pending[k] = use.At
		}
	}
}

func (u *keyUses) send(ctx context.Context, batch []wire.KeyUse) error {
	return u.control.ReportKeyUse(ctx, wire.KeyUsage{Keys: batch})
}

// reportLast sends what is left when the gateway stops, briefly: a
// control plane that is down loses the last interval's uses.
func (u *keyUses) reportLast(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := u.report(ctx); err != nil && !errors.Is(err, context.Canceled) {
		u.log.Warn("gateway: could not report the last key uses to control", "err", err)
	}
}
