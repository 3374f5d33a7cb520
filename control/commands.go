package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
)

// Command types. Append-only: a shipped number keeps its meaning forever.
// A command is its type byte followed by its JSON payload.
const (
	cmdCreateTenant    replica.CommandType = 1
	cmdCreateNamespace replica.CommandType = 2
	cmdCreateKey       replica.CommandType = 3
	cmdRevokeKey       replica.CommandType = 4
	cmdAddSigningKey   replica.CommandType = 5
	cmdRegisterShard   replica.CommandType = 6
)

// newRegistry registers every command family's handlers.
func newRegistry() *replica.Registry {
	r := &replica.Registry{}
	registerTenantCommands(r)
	registerNamespaceCommands(r)
	registerKeyCommands(r)
	registerSigningCommands(r)
	registerShardCommands(r)
	return r
}

// handler adapts a typed apply function to a replica.Handler. A payload
// that does not decode is a divergence between nodes, so it panics.
func handler[C any](apply func(tx *replica.Tx, c C) any) replica.Handler {
	return func(tx *replica.Tx, payload []byte) any {
		var c C
		if err := json.Unmarshal(payload, &c); err != nil {
			panic(fmt.Sprintf("control: undecodable %T command: %v", c, err))
		}
		return apply(tx, c)
	}
}

func encodeCommand(t replica.CommandType, c any) []byte {
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("control: encode command %d: %v", t, err))
	}
	return replica.Command(t, b)
}

// propose replicates a command and returns its handler's result: R, or
// the business error the handler returned.
func propose[R any](ctx context.Context, s *Server, t replica.CommandType, c any) (R, error) {
	var zero R
	node, release, err := s.acquire()
	if err != nil {
		return zero, err
	}
	defer release()
	v, err := node.Propose(ctx, encodeCommand(t, c))
	switch {
	case errors.Is(err, replica.ErrNotLeader):
		return zero, apierr.Retry(apierr.NoLeader, 1, "the control plane has no leader")
	case errors.Is(err, replica.ErrClosed):
		return zero, apierr.Retry(apierr.Unavailable, 1, "the control plane is shutting down")
	case err != nil:
		return zero, fmt.Errorf("control: propose command %d: %w", t, err)
	}
	if e, ok := v.(error); ok {
		return zero, e
	}
	r, ok := v.(R)
	if !ok {
		return zero, fmt.Errorf("control: command %d returned %T, want %T", t, v, zero)
	}
	return r, nil
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
