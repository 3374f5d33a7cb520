package service

import (
	"context"
	"regexp"
	"strings"

	"github.com/cockroachdb/pebble"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/oklog/ulid/v2"
)

// propose replicates c through op on the current node and returns its
// result, the business error that refused it, or the replication failure
// in the error catalog. A create under the call's Idempotency-Key is
// proposed wrapped (idempotency.go).
func propose[C, R any](ctx context.Context, s *Service, op replica.Op[C, R], c *C) (R, error) {
	node, release, err := s.Acquire()
	if err != nil {
		var zero R
		return zero, err
	}
	defer release()
	if res, ok, err := proposeIdempotent(ctx, node, op, c); ok {
		return res, err
	}
	return op.Propose(ctx, node, c)
}

// ViewValue is view for a query that returns one value.
func ViewValue[T any](s *Service, fn func(r pebble.Reader) (T, error)) (T, error) {
	var out T
	err := s.View(func(r pebble.Reader) error {
		var err error
		out, err = fn(r)
		return err
	})
	return out, err
}

// View runs fn on a consistent snapshot of the local state.
func (s *Service) View(fn func(r pebble.Reader) error) error {
	node, release, err := s.Acquire()
	if err != nil {
		return err
	}
	defer release()
	snap := node.DB().NewSnapshot()
	defer snap.Close()
	return fn(snap)
}

// Acquire returns the running node and a release function, or an error if
// the server is not running.
func (s *Service) Acquire() (*replica.Node, func(), error) {
	s.mu.RLock()
	if s.node == nil {
		s.mu.RUnlock()
		return nil, nil, apierr.Retry(apierr.Unavailable, 1, "the control plane is not running")
	}
	return s.node, s.mu.RUnlock, nil
}

// LeadingTerm is the Raft term this node leads in, 0 when it does not lead.
func (s *Service) LeadingTerm() uint64 {
	node, release, err := s.Acquire()
	if err != nil {
		return 0
	}
	defer release()
	if !node.IsLeader() {
		return 0
	}
	return node.Term()
}

// IsLeader reports whether this node leads the control plane's Raft group,
// for what it advertises in gossip.
func (s *Service) IsLeader() bool {
	node, release, err := s.Acquire()
	if err != nil {
		return false
	}
	defer release()
	return node.IsLeader()
}

// Placement is how create commands proposed now choose a shard: the
// configured shards with DefaultShardCapacity each, and every registered
// shard.
func (s *Service) Placement() state.Placement {
	ids := make([]string, len(s.cfg.Shards))
	for i, sh := range s.cfg.Shards {
		ids[i] = sh.ID
	}
	return state.Placement{Shards: ids, StaticCapacity: DefaultShardCapacity}
}

// staticShard returns the configured shard with this id.
func (s *Service) staticShard(id string) (ShardInfo, bool) {
	for _, sh := range s.cfg.Shards {
		if sh.ID == id {
			return sh, true
		}
	}
	return ShardInfo{}, false
}

// NewID makes an id: prefix and a lowercase ULID, so ids sort by creation.
func NewID(prefix string) string {
	return prefix + strings.ToLower(ulid.Make().String())
}

var ShardIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// ShardInfo names a shard cluster namespaces may be placed on.
type ShardInfo struct {
	ID   string `json:"id"`
	Addr string `json:"addr"` // base URL of the shard's HTTP API, e.g. http://10.0.0.5:8082
	// UsageAddrs are more addresses of the shard's nodes (host:port or
	// https URLs) for control's own calls, the usage pulls. Control reads
	// usage from Addr and these; a Unix socket Addr (a gateway on the
	// same host) is not for control, so such a shard needs them.
	UsageAddrs []string `json:"usage_addrs,omitempty"`
}
