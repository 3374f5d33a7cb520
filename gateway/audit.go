package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// The audit log (docs/api/audit.md): every request to a mutating route
// (auditedRoute) leaves one record, written where it is applied. A
// namespace's shard records the requests it serves: the gateway sends
// the record's context with them (wire.AuditHeader) and the shard
// records the outcome right after serving, done or refused. Everything
// else the gateway records itself in control's log of the tenant, right
// after answering: what control serves (tenant administration), and
// what the gateway refused before any shard saw it (RBAC, a bad header,
// a quota) or could not get a shard to answer.
//
// Not recorded: a request without a valid key (no tenant to record it
// for; 401), and a rate-limited one (429), so a flood of refusals cannot
// fill a tenant's log.

// auditUnrecorded are the mutating routes not audited: the worker
// protocol (fetch, ack, fail, heartbeat, release) and enqueue, whose
// every job has its own timeline and events.
var auditUnrecorded = map[string]bool{
	"/api/v1/enqueue": true, "/api/v1/enqueue/batch": true,
	"/api/v1/fetch": true, "/api/v1/fetch/batch": true,
	"/api/v1/ack/batch": true, "/api/v1/ack/:id": true, "/api/v1/fail/:id": true,
	"/api/v1/heartbeat": true, "/api/v1/release": true,
}

// auditRecordTimeout bounds the gateway's write of one record to control.
const auditRecordTimeout = 10 * time.Second

// auditedRoute reports whether rt's requests are audited: a mutating
// method (a POST that only reads, a search or a preview, whose action is
// a read, is not), not the public document, not auditUnrecorded.
func auditedRoute(rt route) bool {
	return rt.method != get && rt.checks&public == 0 && !strings.HasSuffix(string(rt.action), ".read") && !auditUnrecorded[rt.path]
}

// auditObject is the type and id (or name) of what a request to rt acts
// on, from its path; the id is empty when the path names none (a
// create: the answer names it).
func auditObject(c *fiber.Ctx, rt route) (typ, id string) {
	segs := strings.Split(strings.TrimPrefix(rt.path, "/api/v1/"), "/")
	typ = strings.TrimSuffix(strings.ReplaceAll(segs[0], "-", "_"), "s")
	var params []string
	for _, s := range segs[1:] {
		if strings.HasPrefix(s, ":") {
			params = append(params, c.Params(s[1:]))
		}
	}
	last := segs[len(segs)-1]
	switch {
	case rt.path == "/api/v1/jobs/bulk":
		typ = "bulk"
	case segs[0] == "ai" && len(segs) > 1: // /ai/budgets...
		typ = strings.TrimSuffix(segs[1], "s")
	case last == "backup-policy":
		typ = "backup_policy"
	case last == "join-tokens" && len(params) == 0:
		typ = "join_token"
	case len(params) == 2:
		typ = "shard_node"
	}
	return typ, strings.Join(params, "/")
}

// auditNamespace is the namespace a request to rt is about: the
// request's for a shard's route, the path's for a namespace's own.
func auditNamespace(c *fiber.Ctx, rt route, r *admitted.Request) string {
	switch {
	case rt.checks&local != 0:
		return r.NS
	case strings.HasPrefix(rt.path, "/api/v1/namespaces/:name"):
		return c.Params("name")
	}
	return ""
}

// auditFor sets r.Audit, the context the shard records rt's request
// under, before the request is sent to the namespace's shard.
func (s *Server) auditFor(c *fiber.Ctx, rt route, r *admitted.Request) {
	typ, id := auditObject(c, rt)
	raw, err := json.Marshal(wire.AuditContext{KeyID: r.Key.KeyID(), Role: string(r.Key.Role), Action: string(rt.action),
		Route: rt.method + " " + rt.path, ObjectType: typ, ObjectID: id, SourceAddress: c.IP(), RequestID: r.RequestID,
		RetentionDays: r.ShardHeaders().AuditRetentionDays})
	if err == nil {
		r.Audit = raw
	}
}

// recordAudit writes the record of a request to rt that no shard
// recorded, once it was answered (err is what the chain returned, not
// yet written as the answer).
func (s *Server) recordAudit(c *fiber.Ctx, rt route, r *admitted.Request, err error) {
	if r.Key == nil || r.Key.TenantID == "" || (r.Audit != nil && err == nil) || s.cfg.Local != nil {
		// No tenant to record it for; or the shard served and recorded
		// it; or a self-hosted node's local API, which has no control to
		// record in (its shard records what it serves).
		return
	}
	status, body := c.Response().StatusCode(), c.Response().Body()
	result := wire.AuditResult(status, body)
	if err != nil {
		code := apierr.From(err).Code
		if code == apierr.RateLimited {
			return
		}
		status, result = apierr.Status(code), string(code)
	}
	typ, id := auditObject(c, rt)
	ns := auditNamespace(c, rt, r)
	if id == "" && err == nil && status < 300 {
		id = wire.AuditObjectID(body)
		if typ == "namespace" && ns == "" {
			ns = id
		}
	}
	rec := wire.AuditRecord{KeyID: r.Key.KeyID(), Role: string(r.Key.Role), Action: string(rt.action),
		Route: rt.method + " " + rt.path, ObjectType: typ, ObjectID: id, Namespace: ns, Result: result, Status: status,
		SourceAddress: c.IP(), RequestID: r.RequestID}
	ctx, cancel := context.WithTimeout(context.Background(), auditRecordTimeout)
	defer cancel()
	in := wire.AuditAppendRequest{Record: rec, RetentionDays: r.ShardHeaders().AuditRetentionDays}
	if aerr := s.control.AppendAudit(ctx, r.RequestID, r.Key.TenantID, in); aerr != nil {
		s.log.Warn("gateway: audit record not written", "tenant", r.Key.TenantID, "request_id", r.RequestID, "route", rec.Route, "err", aerr)
	}
}
