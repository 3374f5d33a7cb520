package service

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/tunnel"
	"github.com/jobbie/jobbie/wire"
)

// Shard registry limits.
const (
	// DefaultShardCapacity is the capacity of a static shard and of one
	// that registers without naming its own.
	DefaultShardCapacity = 10_000
	// MaxShardCapacity keeps namespaces×capacity exact in a uint64 (see
	// lessLoaded).
	MaxShardCapacity = 1_000_000_000
	// maxShardMembers bounds a registration: Raft groups are 1, 3 or 5
	// nodes, and a few more while one is replaced.
	maxShardMembers = 9
	maxVersionLen   = 64
)

// RegisterShard records a shard cluster, or refreshes its record, so new
// namespaces may be placed on it. It validates the registration (a bad one
// is a 400 naming the field) and defaults a zero capacity.
func (s *Service) RegisterShard(ctx context.Context, reg state.ShardRegistration) (state.RegisteredShard, error) {
	if err := ValidateRegistration(&reg); err != nil {
		return state.RegisteredShard{}, err
	}
	return propose(ctx, s, state.OpRegisterShard, &state.RegisterShardCmd{Shard: reg})
}

func ValidateRegistration(reg *state.ShardRegistration) error {
	if !ShardIDRE.MatchString(reg.ShardID) {
		return apierr.Field("shard_id", "shard_id %q must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit", reg.ShardID)
	}
	if len(reg.Members) == 0 || len(reg.Members) > maxShardMembers {
		return apierr.Field("members", "members must list 1 to %d nodes, not %d", maxShardMembers, len(reg.Members))
	}
	ids, addrs := map[string]bool{}, map[string]bool{}
	for i, m := range reg.Members {
		field := fmt.Sprintf("members[%d].", i)
		if !ShardIDRE.MatchString(m.NodeID) {
			return apierr.Field(field+"node_id", "node_id %q must be 1-63 letters, digits, '.', '_' or '-'", m.NodeID)
		}
		if err := checkHTTPAddr(m.HTTPAddr); err != nil {
			return apierr.Field(field+"http_addr", "http_addr %q: %v", m.HTTPAddr, err)
		}
		if m.RaftAddr != "" {
			if _, _, err := net.SplitHostPort(m.RaftAddr); err != nil {
				return apierr.Field(field+"raft_addr", "raft_addr %q must be host:port", m.RaftAddr)
			}
		}
		if ids[m.NodeID] || addrs[m.HTTPAddr] {
			return apierr.Field("members", "node %q or its http_addr %q is listed twice", m.NodeID, m.HTTPAddr)
		}
		ids[m.NodeID], addrs[m.HTTPAddr] = true, true
	}
	if reg.Capacity == 0 {
		reg.Capacity = DefaultShardCapacity
	}
	if reg.Capacity > MaxShardCapacity {
		return apierr.Field("capacity", "capacity must be 1 to %d namespaces", MaxShardCapacity)
	}
	if len(reg.Version) > maxVersionLen || strings.ContainsFunc(reg.Version, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return apierr.Field("version", "version must be at most %d printable characters", maxVersionLen)
	}
	return nil
}

// checkHTTPAddr accepts what a gateway can dial: host:port, an http(s)
// URL with a host, or unix:<socket path> for a gateway on the same host.
func checkHTTPAddr(addr string) error {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		if path == "" {
			return fmt.Errorf("no socket path")
		}
		return nil
	}
	host := addr
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("must be host:port, an http(s) URL or unix:<path>")
		}
		if u.Port() == "" {
			return nil // the scheme's port
		}
		host = u.Host
	}
	if h, _, err := net.SplitHostPort(host); err != nil || h == "" {
		return fmt.Errorf("must be host:port, an http(s) URL or unix:<path>")
	}
	return nil
}

// Shards lists every shard namespaces are or may be placed on, by id: the
// configured ones, the registered ones, and any other that still holds
// namespaces.
func (s *Service) Shards(ctx context.Context) ([]wire.ShardLoad, error) {
	out, err := ViewValue(s, s.listShards)
	if err != nil || s.cfg.Gossip == nil {
		return out, err
	}
	for i := range out {
		if m, ok := s.cfg.Gossip.Leader(out[i].ID); ok {
			out[i].Leader = &wire.ShardLeader{NodeID: m.Meta.NodeID, HTTPAddr: m.Meta.HTTPAddr, Term: m.Meta.Term}
		}
	}
	return out, nil
}

func (s *Service) listShards(r pebble.Reader) ([]wire.ShardLoad, error) {
	byID := map[string]*wire.ShardLoad{}
	get := func(id string) *wire.ShardLoad {
		if sl, ok := byID[id]; ok {
			return sl
		}
		sl := &wire.ShardLoad{ID: id, Members: []state.ShardMember{}}
		byID[id] = sl
		return sl
	}
	for _, sh := range s.cfg.Shards {
		sl := get(sh.ID)
		sl.Addr, sl.Static, sl.Capacity = sh.Addr, true, DefaultShardCapacity
	}
	reg, err := state.ListRegisteredShards(r)
	if err != nil {
		return nil, err
	}
	for _, rs := range reg {
		sl := get(rs.ID)
		sl.Members, sl.Capacity, sl.Version = rs.Members, rs.Capacity, rs.Version
		sl.RegisteredAt, sl.LastRegisteredAt = &rs.RegisteredAt, &rs.LastRegisteredAt
		if sl.Addr == "" {
			sl.Addr = rs.Members[0].HTTPAddr
		}
	}
	ids, loads, err := state.ShardLoads(r)
	if err != nil {
		return nil, err
	}
	for i, id := range ids {
		get(id).Namespaces = loads[i]
	}
	out := make([]wire.ShardLoad, 0, len(byID))
	for _, sl := range byID {
		out = append(out, *sl)
	}
	slices.SortFunc(out, func(a, b wire.ShardLoad) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// shardAddrs is where to reach shard id: the configured address of a
// static shard, else the first registered member's, and every registered
// member's HTTP address.
func (s *Service) shardAddrs(r pebble.Reader, id string) (string, []string, error) {
	if tunnels, ok, err := ownedShardAddrs(r, id); err != nil || ok {
		if len(tunnels) == 0 {
			return "", tunnels, err
		}
		return tunnels[0], tunnels, err
	}
	rs, ok, err := state.LoadRegisteredShard(r, id)
	if err != nil {
		return "", nil, err
	}
	var members []string
	if ok {
		for _, m := range rs.Members {
			members = append(members, m.HTTPAddr)
		}
	}
	if sh, ok := s.staticShard(id); ok {
		return sh.Addr, members, nil
	}
	if len(members) > 0 {
		return members[0], members, nil
	}
	return "", nil, nil
}

// ownedShardAddrs are the tunnel addresses of a self-hosted shard's
// joined nodes (ok false for a hosted shard).
func ownedShardAddrs(r pebble.Reader, id string) ([]string, bool, error) {
	tid, err := state.ShardOwner(r, id)
	if err != nil || tid == "" {
		return nil, false, err
	}
	sh, _, err := state.SelfHostedShard(r, tid, id)
	if err != nil {
		return nil, false, err
	}
	out := make([]string, 0, len(sh.Nodes))
	for _, n := range sh.Nodes {
		out = append(out, tunnel.Addr(id, n))
	}
	return out, true, nil
}
