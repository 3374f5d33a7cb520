package control

import (
	"context"

	"github.com/cockroachdb/pebble"
	"github.com/jobbie/jobbie/internal/replica"
)

// propose replicates c through op on the current node and returns its
// result, the business error that refused it, or the replication failure
// in the error catalog.
func propose[C, R any](ctx context.Context, s *Server, op replica.Op[C, R], c *C) (R, error) {
	node, release, err := s.acquire()
	if err != nil {
		var zero R
		return zero, err
	}
	defer release()
	return op.Propose(ctx, node, c)
}

// viewValue is view for a query that returns one value.
func viewValue[T any](s *Server, fn func(r pebble.Reader) (T, error)) (T, error) {
	var out T
	err := s.view(func(r pebble.Reader) error {
		var err error
		out, err = fn(r)
		return err
	})
	return out, err
}

// view runs fn on a consistent snapshot of the local state.
func (s *Server) view(fn func(r pebble.Reader) error) error {
	node, release, err := s.acquire()
	if err != nil {
		return err
	}
	defer release()
	snap := node.DB().NewSnapshot()
	defer snap.Close()
	return fn(snap)
}
