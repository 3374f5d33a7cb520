package api

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// auditTimeout bounds the proposal of one audit record, made after the
// request was served and whatever its caller did meanwhile.
const auditTimeout = 10 * time.Second

// audit records the outcome of a request the gateway marked as audited
// (wire.AuditHeader): after the route has served it, whether it was
// done or refused, as one record of the namespace's audit log. It runs
// on the node that serves the request (after the edge forwarded a
// follower's), once per request. A record that cannot be written is
// logged and leaves the answer as it was: the action happened.
func (s *Server) audit(c *fiber.Ctx) error {
	h := c.Request().Header.Peek(wire.AuditHeader)
	if len(h) == 0 || s.svc == nil {
		return c.Next()
	}
	var ac wire.AuditContext
	if err := json.Unmarshal(h, &ac); err != nil {
		return apierr.New(apierr.BadRequest, "header %s must be the gateway's audit context", wire.AuditHeader)
	}
	n := ns(c)
	err := c.Next()
	status, body := c.Response().StatusCode(), c.Response().Body()
	result := wire.AuditResult(status, body)
	if err != nil {
		code := apierr.From(err).Code
		status, result = apierr.Status(code), string(code)
	}
	var objectID string
	if err == nil && status < 300 && ac.ObjectID == "" {
		objectID = wire.AuditObjectID(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
	defer cancel()
	if aerr := s.svc.Audit(ctx, n, &ac, result, status, objectID); aerr != nil {
		s.cfg.Logger.Warn("shard: audit record not written", "namespace", n, "request_id", ac.RequestID, "err", aerr)
	}
	return err
}

// auditRoutes mounts GET /api/v1/audit: a page of the namespace's audit
// records, any node answering from its own store.
func (s *Server) auditRoutes(api fiber.Router) {
	api.Get("/audit", func(c *fiber.Ctx) error {
		f, limit, field, err := wire.ParseAuditFilter(func(k string) string { return c.Query(k) })
		if err != nil {
			return apierr.Field(field, "%v", err)
		}
		p, err := s.svc.AuditRecords(ns(c), &f, c.Query("after"), limit)
		return reply(c, p, err)
	})
}
