package api

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/idemkey"
	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/tenancy"
)

// MaxBody caps request bodies; every control request is small.
const MaxBody = 64 << 10

func (s *Server) newApp() *fiber.App {
	app := fiber.New(fiber.Config{
		AppName:               "jobbie-control",
		ErrorHandler:          apierr.Handler,
		BodyLimit:             MaxBody,
		DisableStartupMessage: true,
		Immutable:             true, // params and bodies outlive the handler in commands and errors
		ReadTimeout:           10 * time.Second,
		WriteTimeout:          10 * time.Second,
		IdleTimeout:           60 * time.Second,
	})
	app.Use(apierr.RequestID, idempotencyKey)
	// A backup download streams for as long as the backup takes to send;
	// every other answer is small and keeps the short write timeout.
	app.Server().HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if isDownload(h) {
			return fasthttp.RequestConfig{WriteTimeout: downloadWriteTimeout}
		}
		return fasthttp.RequestConfig{}
	}

	app.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	app.Get("/readyz", s.readyz)
	app.Get("/metrics", pki.Require(pki.Scrapers, nil), obs.Serve())
	app.Get("/control/v1/jwks", s.getJWKS)
	s.clusterRoutes(app)

	// Every other route is the leader's (forward.go): operator routes are
	// forwarded before their key is checked, since the leader checks it.
	op := s.group.Gate(nil, edge.ByLeader)

	app.Post("/control/v1/tenants", op, s.operatorOnly, s.postTenant)
	app.Get("/control/v1/tenants", op, s.operatorOnly, s.getTenants)
	app.Get("/control/v1/shards", op, s.operatorOnly, s.getShards)
	app.Get("/control/v1/tenants/:tid/namespaces", op, s.operatorOnly, s.getNamespaces)
	app.Get("/control/v1/signing-keys", op, s.operatorOnly, s.getSigningKeys)
	app.Post("/control/v1/signing-keys/rotate", op, s.operatorOnly, s.postSigningKeyRotation)
	app.Get("/control/v1/plans", op, s.operatorOnly, s.getPlans)
	app.Post("/control/v1/plans", op, s.operatorOnly, s.postPlan)
	app.Get("/control/v1/plans/:name", op, s.operatorOnly, s.getPlan)
	app.Put("/control/v1/plans/:name", op, s.operatorOnly, s.putPlan)
	app.Get("/control/v1/tenants/:tid/plan", op, s.operatorOnly, s.getTenantPlan)
	app.Put("/control/v1/tenants/:tid/plan", op, s.operatorOnly, s.putTenantPlan)
	app.Get("/control/v1/tenants/:tid/invoices", op, s.operatorOnly, s.getInvoices)
	app.Get("/control/v1/tenants/:tid/invoices/upcoming", op, s.operatorOnly, s.getUpcomingInvoice)
	app.Get("/control/v1/tenants/:tid/invoices/:id", op, s.operatorOnly, s.getInvoice)
	s.moveRoutes(app, op)
	// Shard clusters register with their own certificates, as they hold
	// no operator key; the path sits with the shard list it feeds.
	app.Post("/control/v1/shards/register", s.group.Gate(pki.Roles(pki.RoleShard), edge.ByLeader), s.postShardRegistration)

	// The tenant-facing internal API is the gateways' alone: a shard's
	// certificate cannot mint keys or read another tenant's namespaces.
	gw := s.group.Gate(pki.Roles(pki.RoleGateway), edge.ByLeader)
	app.Get("/internal/v1/revocations", s.group.Gate(pki.Roles(pki.RoleGateway), edge.ByFollower), s.getRevocations)
	app.Get("/internal/v1/tenants/:tid/namespaces", gw, s.getNamespaces)
	app.Get("/internal/v1/tenants/:tid/namespaces/:ns", gw, s.getNamespace)
	app.Patch("/internal/v1/tenants/:tid/namespaces/:ns", gw, s.patchNamespace)
	app.Delete("/internal/v1/tenants/:tid/namespaces/:ns", gw, s.deleteNamespace)
	app.Post("/internal/v1/tenants/:tid/namespaces", gw, s.postNamespace)
	app.Get("/internal/v1/tenants/:tid/keys", gw, s.getKeys)
	app.Post("/internal/v1/tenants/:tid/keys", gw, s.postKey)
	app.Get("/internal/v1/tenants/:tid/keys/:id", gw, s.getKey)
	app.Delete("/internal/v1/tenants/:tid/keys/:id", gw, s.deleteKey)
	app.Post("/internal/v1/tenants/:tid/keys/:id/rotate", gw, s.postKeyRotation)
	app.Post("/internal/v1/keys/used", gw, s.postKeyUsage)
	app.Get("/internal/v1/tenants/:tid/roles", gw, s.getRoles)
	app.Post("/internal/v1/tenants/:tid/roles", gw, s.postRole)
	app.Get("/internal/v1/tenants/:tid/roles/:name", gw, s.getRole)
	app.Put("/internal/v1/tenants/:tid/roles/:name", gw, s.putRole)
	app.Delete("/internal/v1/tenants/:tid/roles/:name", gw, s.deleteRole)
	app.Get("/internal/v1/tenants/:tid/usage", gw, s.getUsage)
	app.Post("/internal/v1/usage/api-requests", gw, s.postAPIRequests)
	app.Get("/internal/v1/tenants/:tid/plan", gw, s.getTenantPlan)
	app.Get("/internal/v1/tenants/:tid/quota", gw, s.getQuota)
	app.Get("/internal/v1/tenants/:tid/invoices", gw, s.getInvoices)
	app.Get("/internal/v1/tenants/:tid/invoices/upcoming", gw, s.getUpcomingInvoice)
	app.Get("/internal/v1/tenants/:tid/invoices/:id", gw, s.getInvoice)
	app.Post("/internal/v1/tenants/:tid/audit", gw, s.postAudit)
	app.Get("/internal/v1/tenants/:tid/audit", gw, s.getAudit)
	s.backupRoutes(app, gw)
	s.ownedShardRoutes(app, gw)
	return app
}

// readyz answers 200 while this node can serve the API: it leads the
// control plane's Raft group and has applied its log, or it follows a
// leader whose address it knows (it forwards to it), and every listener
// of its process accepts; 503 otherwise, naming a listener that cannot.
func (s *Server) readyz(c *fiber.Ctx) error {
	if s.cfg.Listening != nil {
		if err := s.cfg.Listening(); err != nil {
			return apierr.Retry(apierr.Unavailable, 1, "not ready: %v", err)
		}
	}
	node, release, err := s.Acquire()
	if err != nil {
		return err
	}
	defer release()
	if node.IsLeader() {
		return c.JSON(fiber.Map{"status": "ready", "role": "leader"})
	}
	if _, ok := s.group.LeaderHTTP(node); ok && node.State() == replica.StateFollower {
		return c.JSON(fiber.Map{"status": "ready", "role": "follower"})
	}
	return apierr.Retry(apierr.NoLeader, 1, "this control node knows no leader")
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(c *fiber.Ctx) string {
	scheme, tok, ok := strings.Cut(c.Get(fiber.HeaderAuthorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// operatorOnly admits requests carrying a valid, unrevoked operator key:
// 401 for anything else that is not a valid key, 403 for a tenant's key.
func (s *Server) operatorOnly(c *fiber.Ctx) error {
	tok := bearer(c)
	if tok == "" {
		return apierr.New(apierr.Unauthenticated, "an operator key is required (Authorization: Bearer <key>)")
	}
	claims, err := s.VerifyKey(c.UserContext(), tok)
	if err != nil {
		return err
	}
	if claims.Role != tenancy.RoleOperator {
		return apierr.New(apierr.Forbidden, "this endpoint needs an operator key")
	}
	c.Locals(operatorKeyLocal, claims.Subject)
	return c.Next()
}

// operatorKeyLocal holds the id of the operator key operatorOnly admitted.
const operatorKeyLocal = "jobbie.operator_key"

// decode parses a JSON request body into v strictly (apierr.DecodeJSON):
// unknown fields are refused, as everywhere in the API.
func decode(c *fiber.Ctx, v any) error { return apierr.DecodeJSON(c.Body(), v, false) }

func (s *Server) getJWKS(c *fiber.Ctx) error {
	set, err := s.JWKS(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(set)
}

// idempotencyKey reads an Idempotency-Key (docs/api/README.md,
// "Idempotency"). On the tenant creates that take one (a gateway's POST
// of a tenant's namespace, key, role or backup) it hands the key and the
// request's hash to the service, which wraps the create under it, and
// answers a replay 200 with Idempotency-Replayed; every other route
// refuses the header rather than ignore it. A follower forwards the
// request as it came, so the leader reads the same bytes.
func idempotencyKey(c *fiber.Ctx) error {
	tid, takes := idempotentCreate(c.Method(), c.Path())
	k, err := idemkey.Read(c, takes, "only a tenant's namespace, key, role and backup creates do")
	if err != nil || k == "" {
		if err != nil {
			return err
		}
		return c.Next()
	}
	idem := &service.Idempotency{Tenant: tid, Key: k, Hash: idemkey.Hash(c)}
	c.SetUserContext(service.WithIdempotency(c.UserContext(), idem))
	if err := c.Next(); err != nil {
		return err
	}
	if idem.Replayed() {
		idemkey.Replayed(c)
	}
	return nil
}

// idempotentCreate reports whether method and path are a tenant's create
// that takes an Idempotency-Key (POST /internal/v1/tenants/{tid}/ and
// one of idempotentCollections), and its tenant.
func idempotentCreate(method, path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/internal/v1/tenants/")
	if method != fiber.MethodPost || !ok {
		return "", false
	}
	tid, coll, ok := strings.Cut(rest, "/")
	return tid, ok && tid != "" && idempotentCollections[coll]
}

// idempotentCollections are the collections of a tenant whose creates
// take an Idempotency-Key: those the gateway's public routes
// (wire.IdempotentRoutes) send here.
var idempotentCollections = map[string]bool{"namespaces": true, "keys": true, "roles": true, "backups": true}
