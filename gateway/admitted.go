package gateway

import (
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/gateway/limits"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/fairshare"
	"github.com/jobbie/jobbie/internal/idemkey"
	"github.com/jobbie/jobbie/internal/tracing"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// register mounts the route table, each route behind its chain. A local
// API serves only the shard's routes, and says of the others that the
// hosted gateway serves them. Every row is mounted, so that a path asked
// with a method it has none of is 405 with the methods it has in Allow
// (fiber answers so for a mounted path), on both.
func (s *Server) register(app *fiber.App) {
	for _, rt := range routeTable {
		if rt.checks&public != 0 && s.cfg.Local == nil {
			app.Add(rt.method, rt.path, func(c *fiber.Ctx) error { return rt.serve(s, c, nil) })
			continue
		}
		if s.cfg.Local == nil || rt.checks&local != 0 {
			app.Add(rt.method, rt.path, s.admitted(rt))
		} else {
			app.Add(rt.method, rt.path, notServedLocally)
		}
	}
}

func notServedLocally(c *fiber.Ctx) error {
	return apierr.New(apierr.NotFound, "%s %s is not served by a self-hosted shard's local API, which serves the job, queue, schedule, worker and event endpoints of the namespaces on its shard: use the hosted gateway",
		c.Method(), c.Path())
}

// admitted is rt's handler, its whole chain: admission (authentication,
// the body's limit, the namespace, RBAC: admission.Gate.Admit), the
// tenant's rate limits (limits.Plans.Limit), a work slot of the tenant's
// share (workslots.go), the api_requests meter, then rt's checks (check)
// and what serves it; last, an audited route's record (audit.go).
func (s *Server) admitted(rt route) fiber.Handler {
	rule := admission.Rule{Action: rt.action, BodyLimit: s.cfg.BodyLimit, Scoped: rt.checks&scoped != 0, QueueNamed: rt.checks&queueNamed != 0}
	if rt.checks&batchBody != 0 {
		rule.BodyLimit = s.cfg.BatchBodyLimit
	}
	jobs := limits.NoJobs
	switch {
	case rt.checks&enqueueOne != 0:
		jobs = limits.OneJob
	case rt.checks&enqueueBatch != 0:
		jobs = limits.BatchOfJobs
	}
	m := newRouteMetrics(rt)
	audited := auditedRoute(rt)
	spanName := "gateway " + rt.method + " " + rt.path
	return func(c *fiber.Ctx) error {
		start := s.cfg.Clock.Now()
		var r admitted.Request
		var sp tracing.SystemSpan
		if s.tr != nil {
			// The gateway's own span (the operator's trace); the shard's
			// span of the request is its child (proxy's headers).
			sp = s.tr.System(spanName, trace.SpanKindServer, time.Now(), "", c.Get(wire.TraceParentHeader), c.Get(wire.TraceStateHeader), "")
			r.SystemTrace = sp.TraceParent()
		}
		err := s.gate.Admit(c, &rule, &r)
		if err == nil {
			r.IdempotencyKey, err = idempotencyKey(c, rt)
		}
		if err == nil {
			r.CreatesJobs = rt.checks&createsJobs != 0
			err = s.plans.Limit(c, &r, jobs)
		}
		var slot *fairshare.Slot
		if err == nil {
			slot, err = s.workSlot(c, &r)
		}
		if err == nil {
			s.meter.Add(r.Key.TenantID, start) // the api_requests meter
			err = s.check(c, rt, &r, slot, audited)
		}
		slot.Release()
		if audited {
			s.recordAudit(c, rt, &r, err)
		}
		status, code := c.Response().StatusCode(), apierr.Code("")
		if err != nil {
			code = apierr.From(err).Code
			status = apierr.Status(code)
		}
		took := s.cfg.Clock.Since(start)
		m.observe(status, took)
		s.logRequest(c, rt, &r, status, took)
		sp.End("", status, string(code))
		return err
	}
}

// idempotencyKey refuses an Idempotency-Key on a route that does not
// take one (wire.IdempotentRoutes: the creating POSTs) rather than ignore
// it, and a bad one on a route that does, before anything is counted, and
// returns the key ("" for none). The shard keeps the record of a key sent
// to one of its routes; control, of a key admin sends it with a create.
func idempotencyKey(c *fiber.Ctx, rt route) (string, error) {
	return idemkey.Read(c, rt.method == post && wire.IdempotentRoutes[rt.path],
		"only the creates of jobs, batches, schedules, webhooks, namespaces, keys, roles and backups do")
}

// check applies rt's checks that follow admission, in order, then gives
// back the work slot and serves the request (an audited request to a
// shard with its audit context, audit.go).
func (s *Server) check(c *fiber.Ctx, rt route, r *admitted.Request, slot *fairshare.Slot, audited bool) error {
	switch {
	case rt.checks&enqueueOne != 0:
		if err := s.quotas.CheckPayloads(c, r, false); err != nil {
			return err
		}
	case rt.checks&enqueueBatch != 0:
		if err := s.quotas.CheckPayloads(c, r, true); err != nil {
			return err
		}
	}
	if rt.checks&executionCap != 0 {
		if err := s.quotas.CheckExecutions(r); err != nil {
			return err
		}
		defer func() { s.quotas.Leased(r) }() // what the answer leased, once served
	}
	if rt.checks&longPollCap != 0 {
		if err := s.polls.Acquire(r.Key.TenantID, r.Key.Subject); err != nil {
			return err
		}
		defer s.polls.Release(r.Key.TenantID, r.Key.Subject)
	}
	slot.Release()
	if audited && rt.checks&local != 0 {
		s.auditFor(c, rt, r)
	}
	switch {
	case rt.checks&scheduleQuota != 0:
		return s.schedules.Create(r, func() error { return rt.serve(s, c, r) })
	case rt.checks&scheduleForget != 0:
		defer s.schedules.Forget(r.Key.TenantID)
	}
	return rt.serve(s, c, r)
}

// limitSession holds a console session request (sign-in, reading the
// session) to its tenant's rate limits, as any request of the tenant.
func (s *Server) limitSession(c *fiber.Ctx, k *tenancy.KeyClaims) error {
	r := admitted.Request{Key: k}
	return s.plans.Limit(c, &r, limits.NoJobs)
}
