package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Internal endpoints: /internal/v1, for gateways only (by their client
// certificates), which have already authorized the tenant's request.

func (s *Server) getRevocations(c *fiber.Ctx) error {
	rev, err := s.Revocations(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(rev)
}

// getNamespaces lists the namespaces with their shard_id: the operator
// reads placement from it, and gateways keep only wire.Namespace's fields
// (shard among them, named only for the tenant's own self-hosted shards).
func (s *Server) getNamespaces(c *fiber.Ctx) error {
	list, err := s.Namespaces(c.UserContext(), c.Params("tid"))
	if err != nil {
		return err
	}
	views, err := s.TenantNamespaceViews(c.Params("tid"), list...)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"namespaces": views})
}

func (s *Server) getNamespace(c *fiber.Ctx) error {
	ns, err := s.Namespace(c.UserContext(), c.Params("tid"), c.Params("ns"))
	if err != nil {
		return err
	}
	return c.JSON(ns)
}

func (s *Server) postNamespace(c *fiber.Ctx) error {
	var req struct {
		service.NamespaceRequest
		Shard string `json:"shard,omitempty"` // the tenant's own self-hosted shard
	}
	if err := decode(c, &req); err != nil {
		return err
	}
	ns, err := s.CreateNamespaceOn(c.UserContext(), c.Params("tid"), req.NamespaceRequest, req.Shard)
	if err != nil {
		return err
	}
	views, err := s.TenantNamespaceViews(c.Params("tid"), ns)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(views[0])
}

func (s *Server) patchNamespace(c *fiber.Ctx) error {
	var req service.NamespaceUpdate
	if err := decode(c, &req); err != nil {
		return err
	}
	ns, err := s.UpdateNamespace(c.UserContext(), c.Params("tid"), c.Params("ns"), req)
	if err != nil {
		return err
	}
	views, err := s.TenantNamespaceViews(c.Params("tid"), ns)
	if err != nil {
		return err
	}
	return c.JSON(views[0])
}

func (s *Server) deleteNamespace(c *fiber.Ctx) error {
	if err := s.DeleteNamespace(c.UserContext(), c.Params("tid"), c.Params("ns")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) getKeys(c *fiber.Ctx) error {
	list, err := s.Keys(c.UserContext(), c.Params("tid"))
	if err != nil {
		return err
	}
	return c.JSON(wire.KeyList{Keys: state.Each(list, state.KeyView)})
}

func (s *Server) postKey(c *fiber.Ctx) error {
	var req wire.CreateKeyRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	k, err := s.CreateKey(c.UserContext(), c.Params("tid"), req)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(state.CreatedKeyView(k))
}

func (s *Server) getKey(c *fiber.Ctx) error {
	k, err := s.Key(c.UserContext(), c.Params("tid"), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(state.KeyView(k))
}

func (s *Server) postKeyRotation(c *fiber.Ctx) error {
	var req wire.RotateKeyRequest
	if err := apierr.DecodeJSON(c.Body(), &req, true); err != nil {
		return err
	}
	k, err := s.RotateKey(c.UserContext(), c.Params("tid"), c.Params("id"), req)
	if err != nil {
		return err
	}
	return c.JSON(state.RotatedKeyView(k.KeyRotated, k.Key))
}

func (s *Server) postKeyUsage(c *fiber.Ctx) error {
	var req wire.KeyUsage
	if err := decode(c, &req); err != nil {
		return err
	}
	if err := s.RecordKeyUse(c.UserContext(), req); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) deleteKey(c *fiber.Ctx) error {
	if err := s.RevokeKey(c.UserContext(), c.Params("tid"), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
