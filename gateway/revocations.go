package gateway

import (
	"context"
	"sync/atomic"

	"github.com/jobbie/jobbie/wire"
)

const revocationsPath = "/internal/v1/revocations"

// revocationList is one version of control's list of revoked key ids, as
// a set.
type revocationList struct {
	version uint64
	ids     map[string]struct{}
}

// revocations holds the newest list; it is swapped whole so the per-request
// check is one atomic load and one map lookup.
type revocations struct {
	list    atomic.Pointer[revocationList]
	control *controlClient
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

// refresh fetches the list, rebuilding the set only when its version moved.
func (r *revocations) refresh(ctx context.Context) error {
	var rev wire.Revocations
	if err := r.control.getJSON(ctx, revocationsPath, "", &rev); err != nil {
		return err
	}
	if cur := r.list.Load(); cur != nil && cur.version == rev.Version && len(cur.ids) == len(rev.Revoked) {
		return nil
	}
	l := &revocationList{version: rev.Version, ids: make(map[string]struct{}, len(rev.Revoked))}
	for _, id := range rev.Revoked {
		l.ids[id] = struct{}{}
	}
	r.list.Store(l)
	return nil
}
