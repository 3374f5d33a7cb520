package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// The fake control's self-hosted shards: per tenant, as control keeps
// them, minted and revoked without more checks than gateway tests need.
type fakeShards struct {
	byTenant     map[string][]wire.OwnedShard
	lastToken    wire.CreateJoinTokenRequest
	lastPlacedOn string // the shard the last namespace creation named
	calls        int
	selfHosted   []wire.SelfHostedShard      // every tenant's, as the tunnel listener reads them
	trust        map[string]wire.TrustBundle // by shard id; none: control answers 404
	trustAsked   int                         // trust bundles asked for
	lastAdd      wire.AddNodesRequest        // the last token for more nodes
}

func (fc *fakeControl) shardRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /internal/v1/shards/self-hosted", fc.internal(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, wire.SelfHostedShards{Shards: append([]wire.SelfHostedShard{}, fc.shards.selfHosted...)})
	}))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/shards", fc.internal(fc.listOwnedShards))
	mux.HandleFunc("POST /internal/v1/tenants/{tid}/shards/join-tokens", fc.internal(fc.postJoinToken))
	mux.HandleFunc("DELETE /internal/v1/tenants/{tid}/shards/{id}", fc.internal(fc.deleteOwnedShard))
	mux.HandleFunc("POST /internal/v1/tenants/{tid}/shards/{id}/join-tokens", fc.internal(fc.postNodeJoinToken))
	mux.HandleFunc("DELETE /internal/v1/tenants/{tid}/shards/{id}/nodes/{node}", fc.internal(fc.deleteShardNode))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/shards/{id}/trust", fc.internal(func(w http.ResponseWriter, r *http.Request) {
		fc.shards.trustAsked++
		b, ok := fc.shards.trust[r.PathValue("id")]
		if !ok || b.TenantID != r.PathValue("tid") {
			writeErr(w, apierr.New(apierr.NotFound, "shard %q not found", r.PathValue("id")))
			return
		}
		writeJSON(w, http.StatusOK, b)
	}))
}

func (fc *fakeControl) listOwnedShards(w http.ResponseWriter, r *http.Request) {
	fc.shards.calls++
	out := wire.OwnedShardList{Shards: append([]wire.OwnedShard{}, fc.shards.byTenant[r.PathValue("tid")]...)}
	writeJSON(w, http.StatusOK, out)
}

func (fc *fakeControl) postJoinToken(w http.ResponseWriter, r *http.Request) {
	fc.shards.calls++
	var in wire.CreateJoinTokenRequest
	_ = json.NewDecoder(r.Body).Decode(&in)
	fc.shards.lastToken = in
	if fc.shards.byTenant == nil {
		fc.shards.byTenant = map[string][]wire.OwnedShard{}
	}
	tid := r.PathValue("tid")
	sh := wire.OwnedShard{ID: "sh_" + tid[len(tid)-4:], Name: in.Name, Nodes: []string{}, CreatedAt: jan(3)}
	fc.shards.byTenant[tid] = append(fc.shards.byTenant[tid], sh)
	writeJSON(w, http.StatusCreated, wire.JoinToken{Token: "jst_secret", ShardID: sh.ID, Name: in.Name, Nodes: 1, ExpiresAt: jan(4)})
}

func (fc *fakeControl) deleteOwnedShard(w http.ResponseWriter, r *http.Request) {
	fc.shards.calls++
	tid, id := r.PathValue("tid"), r.PathValue("id")
	for i, sh := range fc.shards.byTenant[tid] {
		if sh.ID == id {
			fc.shards.byTenant[tid] = append(fc.shards.byTenant[tid][:i], fc.shards.byTenant[tid][i+1:]...)
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	writeErr(w, apierr.New(apierr.NotFound, "shard %q not found", id))
}

// ownedShard is tid's shard id, or nil.
func (fc *fakeControl) ownedShard(tid, id string) *wire.OwnedShard {
	for i := range fc.shards.byTenant[tid] {
		if fc.shards.byTenant[tid][i].ID == id {
			return &fc.shards.byTenant[tid][i]
		}
	}
	return nil
}

func (fc *fakeControl) postNodeJoinToken(w http.ResponseWriter, r *http.Request) {
	fc.shards.calls++
	var in wire.AddNodesRequest
	body, _ := io.ReadAll(r.Body)
	if err := apierr.DecodeJSON(body, &in, true); err != nil {
		writeErr(w, apierr.From(err))
		return
	}
	fc.shards.lastAdd = in
	sh := fc.ownedShard(r.PathValue("tid"), r.PathValue("id"))
	switch {
	case sh == nil:
		writeErr(w, apierr.New(apierr.NotFound, "shard %q not found", r.PathValue("id")))
		return
	case len(sh.Nodes)+max(in.Nodes, 1) > 7:
		writeErr(w, apierr.New(apierr.Conflict, "shard %q has %d nodes; with %d more it would pass 7: remove nodes first", sh.ID, len(sh.Nodes), in.Nodes))
		return
	}
	writeJSON(w, http.StatusCreated, wire.JoinToken{Token: "jst_more", ShardID: sh.ID, Name: sh.Name, Nodes: max(in.Nodes, 1), ExpiresAt: jan(4)})
}

// deleteShardNode drops the node from the tenant's shard and from the
// list the tunnel listeners read, as control does.
func (fc *fakeControl) deleteShardNode(w http.ResponseWriter, r *http.Request) {
	fc.shards.calls++
	id, node := r.PathValue("id"), r.PathValue("node")
	sh := fc.ownedShard(r.PathValue("tid"), id)
	switch {
	case sh == nil:
		writeErr(w, apierr.New(apierr.NotFound, "shard %q not found", id))
		return
	case !slices.Contains(sh.Nodes, node):
		writeErr(w, apierr.New(apierr.NotFound, "node %q of shard %q not found", node, id))
		return
	case len(sh.Nodes) == 1:
		writeErr(w, apierr.New(apierr.Conflict, "node %q is shard %q's last: join another node first, or revoke the shard", node, id))
		return
	}
	sh.Nodes = slices.DeleteFunc(slices.Clone(sh.Nodes), func(n string) bool { return n == node })
	for i, l := range fc.shards.selfHosted {
		if l.ID == id {
			fc.shards.selfHosted[i].Nodes = slices.DeleteFunc(slices.Clone(l.Nodes), func(n string) bool { return n == node })
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
