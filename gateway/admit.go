package gateway

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// call is an admitted request: who is calling and in which namespace,
// and for a key of a custom role, its tenant's roles and the queues the
// request may act on. Its strings may alias request memory and must not
// outlive the handler.
type call struct {
	key       *tenancy.KeyClaims
	ns        string
	requestID string
	roles     *roleSet   // nil for a built-in role
	scope     queueScope // sent to the shard as wire.QueueScopeHeader when limited
	plan      *planEntry // the tenant's plan (limits.go), set by limitRate
	// createsJobs: the route can create jobs, so the plan's
	// max_pending_jobs goes with it to the shard (shardheaders.go).
	createsJobs bool
}

// admit authenticates the caller (by API key, or by console session:
// session.go), checks the body, resolves the namespace
// and authorizes the route's action on it, in that order, so an anonymous
// caller learns nothing but that it needs a key; then it applies the
// tenant's rate limits (ratelimit.go).
func (s *Server) admit(c *fiber.Ctx, rt route, bodyLimit int, r *call) error {
	key, err := s.caller(c)
	if err != nil {
		return err
	}
	if n := len(c.Request().Body()); n > bodyLimit {
		return apierr.New(apierr.TooLarge, "request body is %d bytes, over this endpoint's limit of %d bytes", n, bodyLimit)
	}
	if ce := c.Get(fiber.HeaderContentEncoding); ce != "" && !strings.EqualFold(ce, "identity") {
		// Decompressing here would let a small body expand past every limit.
		return apierr.New(apierr.BadRequest, "Content-Encoding %q is not supported: send the body uncompressed", ce)
	}
	if !canonicalPath(c.Request().URI().PathOriginal()) {
		return apierr.New(apierr.BadRequest, "request path must not contain '%%', '\\' or dot segments")
	}
	ns, err := namespaceOf(key, c.Get(wire.NamespaceHeader))
	if err != nil {
		return err
	}
	r.key, r.ns, r.requestID, r.createsJobs = key, ns, apierr.RequestIDOf(c), rt.serve.createsJobs
	if isCustomRole(key.Role) {
		if r.roles, err = s.roles.get(key.TenantID, r.requestID, key.Role); err != nil {
			return err
		}
		if _, ok := r.roles.permissions(key.Role); !ok {
			return apierr.New(apierr.Forbidden, "API key %s has role %q, which its tenant no longer defines", key.Subject, key.Role)
		}
	}
	if err := s.authorizeRoute(c, rt, r); err != nil {
		return err
	}
	return s.limitRate(c, rt, r)
}

// namespaceOf is the namespace a request works in: the header's when set,
// else the key's default.
func namespaceOf(key *tenancy.KeyClaims, header string) (string, error) {
	if header == "" {
		return key.DefaultNamespace, nil
	}
	if err := tenancy.ValidateNamespace(header); err != nil {
		return "", apierr.Field(wire.NamespaceHeader, "%v", err)
	}
	if !key.AllowsNamespace(header) {
		return "", apierr.New(apierr.Forbidden, "API key %s may not use namespace %q", key.Subject, header)
	}
	return header, nil
}

// canonicalPath refuses escapes and dot segments, so the path a shard
// routes on is exactly the one the gateway authorized (no "/jobs/..%2f").
func canonicalPath(p []byte) bool {
	for i, ch := range p {
		switch ch {
		case '%', '\\':
			return false
		case '.':
			if i == 0 {
				return false
			}
			if p[i-1] != '/' {
				continue
			}
			rest := p[i+1:]
			if len(rest) == 0 || rest[0] == '/' || (rest[0] == '.' && (len(rest) == 1 || rest[1] == '/')) {
				return false
			}
		}
	}
	return true
}
