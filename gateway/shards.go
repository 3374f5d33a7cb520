package gateway

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/tunnel"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A tenant's self-hosted shards, through control. Minting a join token
// and revoking a shard are the tenant owner's alone (a key of role
// owner): a token makes machines outside the hosted service members of
// the tenant's data plane. Listing needs namespace.read. Control keeps
// every tenant's shards apart; a shard of another tenant is a 404.

var (
	listShards      = endpoint{handle: (*Server).listShards}
	createJoinToken = endpoint{handle: (*Server).createJoinToken}
	revokeShard     = endpoint{handle: (*Server).revokeShard}
	addShardNodes   = endpoint{handle: (*Server).addShardNodes}   // shardnodes.go
	removeShardNode = endpoint{handle: (*Server).removeShardNode} // shardnodes.go
)

var shardRoutes = []route{
	{fiber.MethodGet, "/api/v1/shards", tenancy.ActNamespaceRead, listShards},
	// Fixed paths before parameters: /shards/join-tokens mints a new
	// shard, /shards/:id/join-tokens (one segment more) nodes for one.
	{fiber.MethodPost, "/api/v1/shards/join-tokens", tenancy.ActKeyManage, createJoinToken},
	{fiber.MethodDelete, "/api/v1/shards/:id", tenancy.ActKeyManage, revokeShard},
	{fiber.MethodPost, "/api/v1/shards/:id/join-tokens", tenancy.ActKeyManage, addShardNodes},
	{fiber.MethodDelete, "/api/v1/shards/:id/nodes/:node", tenancy.ActKeyManage, removeShardNode},
}

func ownerOnly(r *call, what string) error {
	if r.key.Role != tenancy.RoleOwner {
		return apierr.New(apierr.Forbidden, "API key %s has role %q: only an owner key may %s", r.key.Subject, r.key.Role, what)
	}
	return nil
}

func (s *Server) listShards(c *fiber.Ctx, r *call) error {
	var out wire.OwnedShardList
	if err := s.controlJSON(r, http.MethodGet, tenantPath(r.key.TenantID, "/shards"), nil, http.StatusOK, &out); err != nil {
		return err
	}
	// Which nodes hold a tunnel to this gateway now (another gateway may
	// hold the others').
	for i, sh := range out.Shards {
		out.Shards[i].Connected = []string{}
		for _, n := range sh.Nodes {
			if s.tunnels != nil && s.tunnels.reg.Connected(sh.ID, n) {
				out.Shards[i].Connected = append(out.Shards[i].Connected, n)
			}
		}
	}
	s.shardsHealth(r, out.Shards)
	return c.JSON(out)
}

// shardHealthTimeout bounds asking a self-hosted shard for its health:
// the list waits for the slowest shard, and a shard that does not answer
// is listed without it.
const shardHealthTimeout = time.Second

// shardsHealth sets the Health of each shard with a node connected here,
// asking one such node over its tunnel, all shards at once. A shard that
// fails to answer is listed without it: the list never fails for it.
func (s *Server) shardsHealth(r *call, shards []wire.OwnedShard) {
	var wg sync.WaitGroup
	for i := range shards {
		if len(shards[i].Connected) > 0 {
			sh := &shards[i]
			wg.Go(func() { sh.Health = s.shardHealth(r.requestID, sh.ID, sh.Connected[0]) })
		}
	}
	wg.Wait()
}

// shardHealth is node's GET /api/v1/cluster of shard, or nil.
func (s *Server) shardHealth(requestID, shard, node string) *wire.ClusterHealth {
	// The pool checks the tunnel's peer is that node of that shard; the
	// tunnel listener admitted it as a node of the tenant's shard.
	n, err := s.shards.Node(tunnel.Addr(shard, node))
	if err != nil {
		s.log.Warn("gateway: no pool for a self-hosted node", "shard", shard, "node", node, "err", err)
		return nil
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(http.MethodGet)
	req.SetRequestURI("/api/v1/cluster")
	req.Header.Set(wire.RequestIDHeader, requestID)
	if err := n.Do(req, resp, time.Now().Add(shardHealthTimeout)); err != nil {
		s.log.Info("gateway: a self-hosted shard's health did not come", "shard", shard, "node", node, "request_id", requestID, "err", err)
		return nil
	}
	var h wire.ClusterHealth
	if resp.StatusCode() != http.StatusOK || json.Unmarshal(resp.Body(), &h) != nil || h.ShardID != shard {
		s.log.Info("gateway: a self-hosted shard answered no health", "shard", shard, "node", node, "request_id", requestID,
			"status", resp.StatusCode())
		return nil
	}
	return &h
}

func (s *Server) createJoinToken(c *fiber.Ctx, r *call) error {
	if err := ownerOnly(r, "mint shard join tokens"); err != nil {
		return err
	}
	var in wire.CreateJoinTokenRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	var out wire.JoinToken
	if err := s.controlJSON(r, http.MethodPost, tenantPath(r.key.TenantID, "/shards/join-tokens"), in, http.StatusCreated, &out); err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

func (s *Server) revokeShard(c *fiber.Ctx, r *call) error {
	if err := ownerOnly(r, "revoke shards"); err != nil {
		return err
	}
	id := strings.Clone(c.Params("id")) // params alias request memory
	if _, err := s.controlCall(r, http.MethodDelete, tenantPath(r.key.TenantID, "/shards/"+url.PathEscape(id)), nil, http.StatusNoContent); err != nil {
		return err
	}
	if s.tunnels != nil {
		s.tunnels.reg.Revoke(id) // here at once; other gateways within a poll
	}
	return c.SendStatus(fiber.StatusNoContent)
}
