package admission

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Rule is what a route asks of admission.
type Rule struct {
	Action    tenancy.Action // what RBAC must allow
	BodyLimit int            // the largest body, in bytes
	// Scoped marks a route about queues: a custom role needs the action
	// on some queue of the namespace, and the queues it may act on go to
	// the shard (admitted.Request.Scope). Any other route is about the
	// namespace as a whole.
	Scoped bool
	// QueueNamed marks a path that names a queue (:name): a custom role is
	// checked on it.
	QueueNamed bool
}

// Admit authenticates the caller (by API key, or by console session),
// checks the body, resolves the namespace and authorizes rule's action on
// it, in that order, so an anonymous caller learns nothing but that it
// needs a key. It fills r.
func (g *Gate) Admit(c *fiber.Ctx, rule *Rule, r *admitted.Request) error {
	key, err := g.caller(c)
	if err != nil {
		return err
	}
	r.Key, r.RequestID = key, apierr.RequestIDOf(c) // known from here, for a refusal's audit record
	if n := len(c.Request().Body()); n > rule.BodyLimit {
		return apierr.New(apierr.TooLarge, "request body is %d bytes, over this endpoint's limit of %d bytes", n, rule.BodyLimit)
	}
	if ce := c.Get(fiber.HeaderContentEncoding); ce != "" && !strings.EqualFold(ce, "identity") {
		// Decompressing here would let a small body expand past every limit.
		return apierr.New(apierr.BadRequest, "Content-Encoding %q is not supported: send the body uncompressed", ce)
	}
	if !canonicalPath(c.Request().URI().PathOriginal()) {
		return apierr.New(apierr.BadRequest, "request path must not contain '\\', dot segments, or an escaped '/', '\\', '.', '%%' or control character")
	}
	ns, err := NamespaceOf(key, c.Get(wire.NamespaceHeader))
	if err != nil {
		return err
	}
	r.Key, r.NS, r.RequestID = key, ns, apierr.RequestIDOf(c)
	if isCustomRole(key.Role) {
		set, err := g.roles.get(key.TenantID, r.RequestID, key.Role)
		if err != nil {
			return err
		}
		if _, ok := set.Permissions(key.Role); !ok {
			return apierr.New(apierr.Forbidden, "API key %s has role %q, which its tenant no longer defines", key.Subject, key.Role)
		}
		r.Roles = set
	}
	return g.authorizeRoute(c, rule, r)
}

// NamespaceOf is the namespace a request works in: the header's when
// set, else the key's default.
func NamespaceOf(key *tenancy.KeyClaims, header string) (string, error) {
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

// canonicalPath refuses dot segments, backslashes and every escape that
// could change how a path splits into segments (%2F, %5C, %2E, %25) or
// hide a control character, so the path a shard routes on is exactly
// the one the gateway authorized (no "/jobs/..%2f"). Other escapes
// stay: a schedule is named in its path, and its name may hold spaces.
func canonicalPath(p []byte) bool {
	for i, ch := range p {
		switch ch {
		case '\\':
			return false
		case '%':
			if i+2 >= len(p) || !safeEscape(unhex(p[i+1]), unhex(p[i+2])) {
				return false
			}
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

// safeEscape reports whether %hi lo decodes to a byte a path may carry
// escaped: printable or part of a UTF-8 sequence, and none of / \ . %.
func safeEscape(hi, lo int) bool {
	if hi < 0 || lo < 0 {
		return false
	}
	b := byte(hi<<4 | lo)
	if b < 0x20 || b == 0x7f {
		return false
	}
	switch b {
	case '/', '\\', '.', '%':
		return false
	}
	return true
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
