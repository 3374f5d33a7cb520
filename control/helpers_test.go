package control

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/internal/replica"
)

// propose proposes c on srv's node as the service would, for tests that
// write a command the Go API does not offer in that form.
func propose[C, R any](ctx context.Context, srv *Server, op replica.Op[C, R], c *C) (R, error) {
	node, release, err := srv.Acquire()
	if err != nil {
		var zero R
		return zero, err
	}
	defer release()
	return op.Propose(ctx, node, c)
}

// viewValue reads srv's state.
func viewValue[T any](srv *Server, fn func(r pebble.Reader) (T, error)) (T, error) {
	return service.ViewValue(srv.Service, fn)
}

// newID is an id as the service makes them.
func newID(prefix string) string { return service.NewID(prefix) }
