// Package gossip is the membership layer every Jobbie process (shard nodes,
// control plane, gateways) runs. It wraps one hashicorp/memberlist pool in
// which each node advertises a small Meta record — its role, shard, Raft
// state and term, the leader it knows, its HTTP address, version and load —
// so that gateways can route a namespace to its shard's current leader
// without asking anybody, and every process learns about joins, failures
// and leadership changes within a few gossip rounds.
package gossip

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/memberlist"
)

// Roles a process can advertise.
const (
	RoleShard   = "shard"
	RoleControl = "control"
	RoleGateway = "gateway"
)

// Raft states a process can advertise. The empty string means "not a Raft
// member" (gateways) or "unknown yet".
const (
	StateLeader    = "leader"
	StateFollower  = "follower"
	StateCandidate = "candidate"
)

// MaxMetaSize is the most bytes of encoded Meta memberlist will carry in a
// node's alive message. memberlist panics beyond it, so we refuse earlier.
const MaxMetaSize = memberlist.MetaMaxSize

// ErrMetaTooLarge is wrapped by the error returned when a Meta does not fit
// in MaxMetaSize once encoded.
var ErrMetaTooLarge = errors.New("gossip: node metadata too large")

// Meta is what a node tells the pool about itself. It travels as JSON with
// one- or two-letter keys because the whole record must fit in 512 bytes;
// empty fields are omitted. Unknown keys are ignored when decoding, so a
// newer Jobbie may add fields without confusing older nodes.
type Meta struct {
	// Role is RoleShard, RoleControl or RoleGateway.
	Role string `json:"r"`
	// ShardID names the shard cluster (Raft group) a shard node belongs to.
	ShardID string `json:"s,omitempty"`
	// NodeID is the node's Raft server id (shard and control nodes).
	NodeID string `json:"n,omitempty"`
	// RaftState is StateLeader, StateFollower, StateCandidate or "".
	RaftState string `json:"rs,omitempty"`
	// Term is the Raft term RaftState and Leader refer to; it orders
	// competing claims so a stale leader loses to a newer one.
	Term uint64 `json:"t,omitempty"`
	// Leader is the NodeID of the leader this node knows for Term, and
	// LeaderHTTP that leader's HTTP address. A leader reports itself.
	Leader     string `json:"l,omitempty"`
	LeaderHTTP string `json:"lh,omitempty"`
	// HTTPAddr is where this node serves HTTP (internal API for shards and
	// control, the public API for gateways).
	HTTPAddr string `json:"h,omitempty"`
	// RaftAddr is this node's Raft transport address.
	RaftAddr string `json:"ra,omitempty"`
	// Version is the Jobbie build version.
	Version string `json:"v,omitempty"`
	// EntryFormat is the newest Raft entry format a shard node applies
	// (replica.EntryFormat); 0 from builds that did not say. A leader
	// proposes effects entries only while every other member shows 2 or
	// more.
	EntryFormat int `json:"ef,omitempty"`
	// Load is a role-defined load figure (namespaces hosted, jobs stored …)
	// that placement may compare between nodes of the same role.
	Load int64 `json:"ld,omitempty"`
}

// Validate checks the fields whose values other nodes interpret, so a typo
// ("Leader" instead of "leader") fails at the source instead of silently
// hiding a leader from every gateway.
func (m Meta) Validate() error {
	switch m.Role {
	case RoleShard:
		if m.ShardID == "" {
			return errors.New("gossip: a shard node must advertise its ShardID")
		}
	case RoleControl, RoleGateway:
	default:
		return fmt.Errorf("gossip: unknown role %q (want %q, %q or %q)", m.Role, RoleShard, RoleControl, RoleGateway)
	}
	switch m.RaftState {
	case "", StateLeader, StateFollower, StateCandidate:
	default:
		return fmt.Errorf("gossip: unknown raft state %q (want %q, %q, %q or empty; see NormalizeRaftState)",
			m.RaftState, StateLeader, StateFollower, StateCandidate)
	}
	return nil
}

// Encode validates m and returns its wire form, refusing anything over
// MaxMetaSize with an error that says by how much.
func (m Meta) Encode() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("gossip: encode meta: %w", err)
	}
	if len(b) > MaxMetaSize {
		return nil, fmt.Errorf("%w: %d bytes encoded, memberlist allows %d; shorten NodeID, ShardID, addresses or Version",
			ErrMetaTooLarge, len(b), MaxMetaSize)
	}
	return b, nil
}

// DecodeMeta parses a peer's metadata. It does not Validate: a peer running
// a newer version may use a role this one does not know, and it should
// still be listed.
func DecodeMeta(b []byte) (Meta, error) {
	var m Meta
	if len(b) == 0 {
		return m, errors.New("gossip: empty node metadata")
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Meta{}, fmt.Errorf("gossip: decode meta: %w", err)
	}
	return m, nil
}

// NormalizeRaftState maps hashicorp/raft's RaftState.String() values
// ("Leader", "Follower", "Candidate", "Shutdown") onto the constants above,
// so callers can write Meta.RaftState = NormalizeRaftState(r.State().String()).
// Anything else, including "Shutdown", becomes "".
func NormalizeRaftState(s string) string {
	switch strings.ToLower(s) {
	case StateLeader:
		return StateLeader
	case StateFollower:
		return StateFollower
	case StateCandidate:
		return StateCandidate
	}
	return ""
}
