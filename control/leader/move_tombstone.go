package leader

import (
	"context"
	"fmt"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/wire"
)

// tombstoneTokenPrefix starts the token of a clearing: a move token
// ([A-Za-z0-9_-]{1,128}) that is no move's id.
const tombstoneTokenPrefix = "clr_"

// clearMoved clears shard's moved tombstone of namespace ns of tenant
// tid, with the runner's shard calls: begin, then abort, each retried.
// A begin takes over any restore mark of the namespace there, which is
// why it is only sent for a namespace control does not hold.
func (r *moveRunner) clearMoved(ctx context.Context, tid, ns, shard string) error {
	m := state.MoveRecord{Move: wire.Move{ID: service.NewID(tombstoneTokenPrefix), TenantID: tid, Namespace: ns}}
	if err := r.retry(ctx, func(ctx context.Context) error { return r.call(ctx, m, shard, "begin", nil, nil) }); err != nil {
		return fmt.Errorf("begin on shard %s: %w", shard, err)
	}
	if err := r.retry(ctx, func(ctx context.Context) error { return r.call(ctx, m, shard, "abort", nil, nil) }); err != nil {
		return fmt.Errorf("abort on shard %s: %w", shard, err)
	}
	return nil
}
