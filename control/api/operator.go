package api

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/wire"
)

// Operator endpoints: /control/v1, behind operatorOnly (the tenant's
// namespaces with their placement share getNamespaces with the internal
// API), and the shard registration, which takes a shard's certificate.

func (s *Server) postTenant(c *fiber.Ctx) error {
	var req wire.CreateTenantRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := s.CreateTenantOnPlan(c.UserContext(), req.Name, req.Plan)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(state.CreatedTenantView(res))
}

func (s *Server) getTenants(c *fiber.Ctx) error {
	list, err := s.Tenants(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(wire.TenantList{Tenants: state.Each(list, state.TenantView)})
}

// getShards answers control's own ShardLoad: only the operator reads it.
func (s *Server) getShards(c *fiber.Ctx) error {
	list, err := s.Shards(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"shards": list})
}

func (s *Server) getSigningKeys(c *fiber.Ctx) error {
	list, err := s.SigningKeys(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(list)
}

// postSigningKeyRotation rotates the signing key and answers the keys
// with the caller's operator key signed again by the new one.
func (s *Server) postSigningKeyRotation(c *fiber.Ctx) error {
	var req wire.RotateSigningKeyRequest
	if err := apierr.DecodeJSON(c.Body(), &req, true); err != nil {
		return err
	}
	op, _ := c.Locals(operatorKeyLocal).(string)
	out, err := s.RotateSigningKey(c.UserContext(), req, op)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// postShardRegistration records a shard cluster (ShardRegistration as
// JSON) and answers its stored record.
func (s *Server) postShardRegistration(c *fiber.Ctx) error {
	var req struct {
		state.ShardRegistration
		// Shadows Capacity so that a negative, fractional or string
		// capacity is a 400 naming the field, not an undecodable body.
		Capacity json.RawMessage `json:"capacity"`
	}
	if err := decode(c, &req); err != nil {
		return err
	}
	reg := req.ShardRegistration
	if raw := bytes.TrimSpace(req.Capacity); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		n, err := strconv.ParseUint(string(raw), 10, 64)
		if err != nil {
			return apierr.Field("capacity", "capacity must be a whole number of namespaces up to %d (0 or none for %d)", service.MaxShardCapacity, service.DefaultShardCapacity)
		}
		reg.Capacity = n
	}
	// A malformed registration is a 400 whoever sends it; a well-formed
	// one is taken only from a member of the shard it names.
	if err := service.ValidateRegistration(&reg); err != nil {
		return err
	}
	if peer := edge.Caller(c); peer.Shard != reg.ShardID {
		return apierr.New(apierr.Forbidden, "%s may register shard %s only, not %q", peer, peer.Shard, reg.ShardID)
	}
	rec, err := s.RegisterShard(c.UserContext(), reg)
	if err != nil {
		return err
	}
	return c.JSON(rec)
}
