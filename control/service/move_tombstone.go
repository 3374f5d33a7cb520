package service

import (
	"context"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
)

// Moved tombstones of new namespaces. A finished move leaves its source
// shard answering "moved" for the namespace until a restore or a move
// into it there begins. A namespace created later under the same name
// and placed on that shard would be refused there for ever, so the
// create clears the tombstone first: it guesses the shard placement will
// choose, and when the move catalog holds a completed move of the
// namespace away from it, sends the shard a move begin (which clears the
// tombstone) and an abort of the same token (which removes the empty
// restore mark the begin left). The create is proposed only once that
// worked, naming the shard cleared; its apply refuses another shard that
// a move left (the placement changed meanwhile), so a namespace never
// lands where it cannot serve, and a failure creates nothing.

// tombstoneTimeout bounds clearing a shard's tombstone, within a create.
const tombstoneTimeout = 10 * time.Second

// clearTombstone readies create c: the shard it is about to go on is
// cleared of a moved tombstone of the namespace if the catalog says one
// may be there. An unreachable shard is a 503 and nothing is created.
func (s *Service) clearTombstone(ctx context.Context, c *state.CreateNamespaceCmd) error {
	c.Tombstones = true
	var shard string
	var moved bool
	err := s.View(func(r pebble.Reader) error {
		sh, err := c.Place(r, time.Now())
		if err != nil {
			return nil // the apply refuses it, changing nothing
		}
		shard, moved = sh, state.LeftTombstone(r, c.TenantID, c.Name, sh)
		return nil
	})
	if err != nil || !moved {
		return err
	}
	// Whole even if the caller goes: a begin without its abort would hold
	// the namespace there until the shard's idle restores are aborted.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tombstoneTimeout)
	defer cancel()
	if err := s.runner.ClearMoved(cctx, c.TenantID, c.Name, shard); err != nil {
		s.log.Warn("control: clear a moved tombstone for a new namespace", "tenant", c.TenantID, "namespace", c.Name,
			"shard", shard, "err", err)
		return apierr.Retry(apierr.Unavailable, 5,
			"namespace %q cannot be created now: the shard chosen for it cannot be reached; nothing was created: retry", c.Name)
	}
	c.Cleared = shard
	return nil
}
