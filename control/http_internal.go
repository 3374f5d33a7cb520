package control

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
)

// Internal endpoints: /internal/v1, behind clusterOnly, called by gateways
// that have already authorized the tenant's request.

func (s *Server) getRevocations(c *fiber.Ctx) error {
	rev, err := s.Revocations(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(rev)
}

func (s *Server) getNamespaces(c *fiber.Ctx) error {
	list, err := s.Namespaces(c.UserContext(), c.Params("tid"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"namespaces": list})
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
		Name string `json:"name"`
	}
	if err := decode(c, &req); err != nil {
		return err
	}
	ns, err := s.CreateNamespace(c.UserContext(), c.Params("tid"), req.Name)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(ns)
}

func (s *Server) getKeys(c *fiber.Ctx) error {
	list, err := s.Keys(c.UserContext(), c.Params("tid"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"keys": list})
}

func (s *Server) postKey(c *fiber.Ctx) error {
	var req struct {
		KeyRequest
		// Shadows KeyRequest.ExpiresAt so that a malformed time is a 400
		// naming the field rather than an undecodable body.
		ExpiresAt json.RawMessage `json:"expires_at"`
	}
	if err := decode(c, &req); err != nil {
		return err
	}
	exp, err := parseExpiresAt(req.ExpiresAt)
	if err != nil {
		return err
	}
	req.KeyRequest.ExpiresAt = exp
	k, err := s.CreateKey(c.UserContext(), c.Params("tid"), req.KeyRequest)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(k)
}

func (s *Server) deleteKey(c *fiber.Ctx) error {
	if err := s.RevokeKey(c.UserContext(), c.Params("tid"), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// parseExpiresAt decodes an optional RFC 3339 expires_at; absent or null is
// nil (the key never expires).
func parseExpiresAt(raw json.RawMessage) (*time.Time, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var t time.Time
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, apierr.Field("expires_at", "expires_at must be an RFC 3339 time like 2026-02-11T10:00:00Z")
	}
	return &t, nil
}
