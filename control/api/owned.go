package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/wire"
)

// ownedShardRoutes are the gateways' internal routes for a tenant's
// self-hosted shards (the gateway admits only the tenant's owner to
// them), and the join endpoint, which takes no client certificate: a
// joining node has none yet, its join token is its credential.
func (s *Server) ownedShardRoutes(app *fiber.App, gw fiber.Handler) {
	app.Get("/internal/v1/shards/self-hosted", gw, s.getSelfHostedShards)
	app.Get("/internal/v1/tenants/:tid/shards", gw, s.getOwnedShards)
	app.Post("/internal/v1/tenants/:tid/shards/join-tokens", gw, s.postJoinToken)
	app.Delete("/internal/v1/tenants/:tid/shards/:id", gw, s.deleteOwnedShard)
	app.Post("/internal/v1/tenants/:tid/shards/:id/join-tokens", gw, s.postNodeJoinToken)
	app.Delete("/internal/v1/tenants/:tid/shards/:id/nodes/:node", gw, s.deleteShardNode)
	app.Get("/internal/v1/tenants/:tid/shards/:sid/trust", gw, s.getTrustBundle)
	app.Post("/control/v1/join", s.group.Gate(nil, edge.ByLeader), s.postJoin)
	// Renewal takes no client certificate either: the node's certificate
	// is from the self-hosted CA, which this listener does not trust at
	// the handshake; it travels in the body and is checked there (renew.go).
	app.Post("/control/v1/join/renew", s.group.Gate(nil, edge.ByLeader), s.postRenew)
}

func (s *Server) getOwnedShards(c *fiber.Ctx) error {
	shards, err := s.OwnedShards(c.UserContext(), c.Params("tid"))
	if err != nil {
		return err
	}
	return c.JSON(wire.OwnedShardList{Shards: shards})
}

func (s *Server) postJoinToken(c *fiber.Ctx) error {
	var req wire.CreateJoinTokenRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	tok, err := s.CreateJoinToken(c.UserContext(), c.Params("tid"), req)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(tok)
}

func (s *Server) deleteOwnedShard(c *fiber.Ctx) error {
	if err := s.RevokeShard(c.UserContext(), c.Params("tid"), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) postNodeJoinToken(c *fiber.Ctx) error {
	var req wire.AddNodesRequest // every field optional: no body is fine
	if err := apierr.DecodeJSON(c.Body(), &req, true); err != nil {
		return err
	}
	tok, err := s.CreateNodeJoinToken(c.UserContext(), c.Params("tid"), c.Params("id"), req)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(tok)
}

func (s *Server) deleteShardNode(c *fiber.Ctx) error {
	if err := s.RemoveShardNode(c.UserContext(), c.Params("tid"), c.Params("id"), c.Params("node")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) postJoin(c *fiber.Ctx) error {
	var req wire.JoinRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	out, err := s.Join(c.UserContext(), req)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

func (s *Server) postRenew(c *fiber.Ctx) error {
	var req wire.RenewRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	out, err := s.Renew(c.UserContext(), req)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (s *Server) getSelfHostedShards(c *fiber.Ctx) error {
	shards, err := s.SelfHostedShards(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(wire.SelfHostedShards{Shards: shards})
}

func (s *Server) getTrustBundle(c *fiber.Ctx) error {
	b, err := s.TrustBundle(c.UserContext(), c.Params("tid"), c.Params("sid"))
	if err != nil {
		return err
	}
	return c.JSON(b)
}
