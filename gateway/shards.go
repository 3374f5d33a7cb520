package gateway

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
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
)

var shardRoutes = []route{
	{fiber.MethodGet, "/api/v1/shards", tenancy.ActNamespaceRead, listShards},
	{fiber.MethodPost, "/api/v1/shards/join-tokens", tenancy.ActKeyManage, createJoinToken},
	{fiber.MethodDelete, "/api/v1/shards/:id", tenancy.ActKeyManage, revokeShard},
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
	return c.JSON(out)
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
