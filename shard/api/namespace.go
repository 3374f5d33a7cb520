package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"

	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// namespaceRoutes mounts what the gateway asks of a namespace as a whole
// on this shard: GET /api/v1/namespace counts what it holds
// (wire.NamespaceUsage), PUT /api/v1/namespace changes its settings
// (wire.NamespaceSettings: its retention, its egress allow-list, its
// OTLP endpoint; answers the usage), GET and PUT /api/v1/tracing read and
// set its OTLP endpoint alone (a tenant's own route), DELETE
// /api/v1/namespace removes all of it, settings included (204). All need
// every queue: a limited scope is 403.
func (s *Server) namespaceRoutes(api fiber.Router) {
	whole := func(c *fiber.Ctx) error {
		if err := service.WholeNamespace(scope(c)); err != nil {
			return err
		}
		return c.Next()
	}
	api.Get("/namespace", whole, s.namespaceUsage)
	api.Put("/namespace", whole, s.configureNamespace)
	api.Delete("/namespace", whole, s.deleteNamespace)
	api.Get("/tracing", whole, s.namespaceTracing)
	api.Put("/tracing", whole, s.configureTracing)
}

// namespaceTracing is GET /api/v1/tracing: the namespace's OTLP endpoint
// (wire.NamespaceTracing).
func (s *Server) namespaceTracing(c *fiber.Ctx) error {
	u, err := s.svc.NamespaceUsage(ns(c))
	if err != nil {
		return err
	}
	return c.JSON(wire.NamespaceTracing{OTLPEndpoint: u.OTLPEndpoint})
}

// configureTracing is PUT /api/v1/tracing (wire.NamespaceTracingRequest):
// the namespace's OTLP endpoint, its other settings kept.
func (s *Server) configureTracing(c *fiber.Ctx) error {
	var req wire.NamespaceTracingRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if req.OTLPEndpoint == nil {
		return apierr.Field("otlp_endpoint", "otlp_endpoint is required: an https URL taking OTLP traces, or null for none")
	}
	u, err := s.svc.ConfigureNamespace(c.UserContext(), ns(c), &wire.NamespaceSettings{OTLPEndpoint: req.OTLPEndpoint})
	s.tr.NamespaceChanged(ns(c))
	if err != nil {
		return err
	}
	return c.JSON(wire.NamespaceTracing{OTLPEndpoint: u.OTLPEndpoint})
}

func (s *Server) configureNamespace(c *fiber.Ctx) error {
	var req wire.NamespaceSettings
	if err := decode(c, &req); err != nil {
		return err
	}
	u, err := s.svc.ConfigureNamespace(c.UserContext(), ns(c), &req)
	s.tr.NamespaceChanged(ns(c))
	return reply(c, u, err)
}

func (s *Server) namespaceUsage(c *fiber.Ctx) error {
	u, err := s.svc.NamespaceUsage(ns(c))
	return reply(c, u, err)
}

func (s *Server) deleteNamespace(c *fiber.Ctx) error {
	if err := s.svc.DeleteNamespace(c.UserContext(), ns(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
