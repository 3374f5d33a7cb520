package controlfake

import (
	"context"
	"slices"
	"strings"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Shards is the fake control's self-hosted shards: per tenant, as control
// keeps them, minted and revoked without more checks than gateway tests
// need.
type Shards struct {
	ByTenant     map[string][]wire.OwnedShard
	LastToken    wire.CreateJoinTokenRequest
	LastPlacedOn string // the shard the last namespace creation named
	Calls        int
	SelfHosted   []wire.SelfHostedShard      // every tenant's, as the tunnel listener reads them
	Trust        map[string]wire.TrustBundle // by shard id; none: control answers 404
	TrustAsked   int                         // trust bundles asked for
	LastAdd      wire.AddNodesRequest        // the last token for more nodes
}

func (fc *Control) SelfHostedShards(context.Context) (wire.SelfHostedShards, error) {
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.SelfHostedShards{}, err
	}
	return clone(wire.SelfHostedShards{Shards: append([]wire.SelfHostedShard{}, fc.Shards.SelfHosted...)}), nil
}

func (fc *Control) TrustBundle(_ context.Context, tid, shard string) (wire.TrustBundle, error) {
	tid, shard = strings.Clone(tid), strings.Clone(shard)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.TrustBundle{}, err
	}
	fc.Shards.TrustAsked++
	b, ok := fc.Shards.Trust[shard]
	if !ok || b.TenantID != tid {
		return wire.TrustBundle{}, refuse(apierr.New(apierr.NotFound, "shard %q not found", shard))
	}
	return clone(b), nil
}

func (fc *Control) OwnedShards(_ context.Context, _, tid string) (wire.OwnedShardList, error) {
	tid = strings.Clone(tid)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.OwnedShardList{}, err
	}
	fc.Shards.Calls++
	return clone(wire.OwnedShardList{Shards: append([]wire.OwnedShard{}, fc.Shards.ByTenant[tid]...)}), nil
}

func (fc *Control) CreateJoinToken(_ context.Context, _, tid string, in wire.CreateJoinTokenRequest) (wire.JoinToken, error) {
	tid = strings.Clone(tid)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.JoinToken{}, err
	}
	fc.Shards.Calls++
	fc.Shards.LastToken = clone(in)
	if fc.Shards.ByTenant == nil {
		fc.Shards.ByTenant = map[string][]wire.OwnedShard{}
	}
	sh := wire.OwnedShard{ID: "sh_" + tid[len(tid)-4:], Name: in.Name, Nodes: []string{}, CreatedAt: Jan(3)}
	fc.Shards.ByTenant[tid] = append(fc.Shards.ByTenant[tid], sh)
	return wire.JoinToken{Token: "jst_secret", ShardID: sh.ID, Name: in.Name, Nodes: 1, ExpiresAt: Jan(4)}, nil
}

func (fc *Control) RevokeShard(_ context.Context, _, tid, id string) error {
	tid, id = strings.Clone(tid), strings.Clone(id)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return err
	}
	fc.Shards.Calls++
	for i, sh := range fc.Shards.ByTenant[tid] {
		if sh.ID == id {
			fc.Shards.ByTenant[tid] = append(fc.Shards.ByTenant[tid][:i], fc.Shards.ByTenant[tid][i+1:]...)
			return nil
		}
	}
	return refuse(apierr.New(apierr.NotFound, "shard %q not found", id))
}

// ownedShard is tid's shard id, or nil.
func (fc *Control) ownedShard(tid, id string) *wire.OwnedShard {
	for i := range fc.Shards.ByTenant[tid] {
		if fc.Shards.ByTenant[tid][i].ID == id {
			return &fc.Shards.ByTenant[tid][i]
		}
	}
	return nil
}

func (fc *Control) AddShardNodes(_ context.Context, _, tid, id string, in wire.AddNodesRequest) (wire.JoinToken, error) {
	tid, id = strings.Clone(tid), strings.Clone(id)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.JoinToken{}, err
	}
	fc.Shards.Calls++
	fc.Shards.LastAdd = clone(in)
	sh := fc.ownedShard(tid, id)
	switch {
	case sh == nil:
		return wire.JoinToken{}, refuse(apierr.New(apierr.NotFound, "shard %q not found", id))
	case len(sh.Nodes)+max(in.Nodes, 1) > 7:
		return wire.JoinToken{}, refuse(apierr.New(apierr.Conflict, "shard %q has %d nodes; with %d more it would pass 7: remove nodes first", sh.ID, len(sh.Nodes), in.Nodes))
	}
	return wire.JoinToken{Token: "jst_more", ShardID: sh.ID, Name: sh.Name, Nodes: max(in.Nodes, 1), ExpiresAt: Jan(4)}, nil
}

// RemoveShardNode drops the node from the tenant's shard and from the
// list the tunnel listeners read, as control does.
func (fc *Control) RemoveShardNode(_ context.Context, _, tid, id, node string) error {
	tid, id, node = strings.Clone(tid), strings.Clone(id), strings.Clone(node)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return err
	}
	fc.Shards.Calls++
	sh := fc.ownedShard(tid, id)
	switch {
	case sh == nil:
		return refuse(apierr.New(apierr.NotFound, "shard %q not found", id))
	case !slices.Contains(sh.Nodes, node):
		return refuse(apierr.New(apierr.NotFound, "node %q of shard %q not found", node, id))
	case len(sh.Nodes) == 1:
		return refuse(apierr.New(apierr.Conflict, "node %q is shard %q's last: join another node first, or revoke the shard", node, id))
	}
	sh.Nodes = slices.DeleteFunc(slices.Clone(sh.Nodes), func(n string) bool { return n == node })
	for i, l := range fc.Shards.SelfHosted {
		if l.ID == id {
			fc.Shards.SelfHosted[i].Nodes = slices.DeleteFunc(slices.Clone(l.Nodes), func(n string) bool { return n == node })
		}
	}
	return nil
}
