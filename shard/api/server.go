package api

import (
	"context"
	"log/slog"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/internal/shardlink"
	"github.com/jobbie/jobbie/internal/tracing"
	"github.com/jobbie/jobbie/shard/live"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/shard/trust"
	"github.com/jobbie/jobbie/wire"
)

// MaxRequestBody bounds any request to a shard (a batch of 1,000 jobs).
const MaxRequestBody = 16 << 20

// readBuffer holds a request's headers: a queue scope of
// wire.MaxQueueScopeHeader beside the others (fasthttp's default of 4 KiB
// would not).
const readBuffer = 2*wire.MaxQueueScopeHeader + 4<<10

// Config is what the HTTP layer needs to know of its node.
type Config struct {
	ShardID string
	NodeID  string
	Gossip  *gossip.Pool // maps the leader's Raft id to its HTTP address; nil: no forwarding
	// AdvertiseHTTP is the address peers reach this node's HTTP API on;
	// Advertised falls back to it when the listener is not known.
	AdvertiseHTTP string
	Version       string
	Logger        *slog.Logger
	// Tenant owns this self-hosted shard (its certificate names it); ""
	// for a hosted shard, whose nodes take no trust bundles.
	Tenant string
	// Listening is the first of the process's listeners that cannot
	// accept connections, nil while all can (/readyz fails meanwhile);
	// nil: not asked.
	Listening func() error
}

// Deps are the parts of the node the handlers call.
type Deps struct {
	Service *service.Service
	Node    *replica.Node
	Workers *live.Workers
	Events  *live.Events
	Shards  *shardclient.Client // forwards a follower's writes, with this node's own certificate
	Weights *Weights            // the namespaces' fair weights (weights.go); nil: not recorded
	Trust   *trust.Store        // where a self-hosted node keeps the trust bundle pushed to it (trust.go); nil: none taken
	Hooks   Webhooks            // the leader's webhook delivery (webhooks.go); nil: its routes answer 404
	Tracer  *tracing.Tracer     // the node's spans (tracing.go); nil: tracing off
}

// Server is the HTTP API of one shard node.
type Server struct {
	cfg     Config
	app     *fiber.App
	svc     *service.Service
	node    *replica.Node
	workers *live.Workers
	events  *live.Events
	fwd     *shardclient.Client
	group   *edge.Group // forwarding, status, members, joining (forward.go)
	last    lastReports // each member's last status (health.go)
	weights *Weights
	trust   *trust.Store
	hooks   Webhooks
	tr      *tracing.Tracer
	pools   pools             // the work slots (sched.go)
	links   *shardlink.Server // the callers' links (link.go)
	addr    func() string     // the bound address, once listening
}

// New builds the API; the node serves it with App.
func New(cfg Config, d Deps, boundAddr func() string) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, svc: d.Service, node: d.Node, workers: d.Workers, events: d.Events, fwd: d.Shards, weights: d.Weights, trust: d.Trust, hooks: d.Hooks, tr: d.Tracer, addr: boundAddr}
	s.group = s.newGroup(d.Shards)
	s.pools = newPools()
	s.app = fiber.New(fiber.Config{
		ErrorHandler:          apierr.Handler,
		JSONEncoder:           gojson.Marshal, // encoding/json-compatible, faster on the fetch answers
		BodyLimit:             MaxRequestBody,
		StreamRequestBody:     true, // a restore's body may be larger; streamedBodies refuses it elsewhere
		ReadBufferSize:        readBuffer,
		DisableStartupMessage: true,
		ReadTimeout:           2 * time.Minute,
		IdleTimeout:           2 * time.Minute,
	})
	s.routes()
	return s
}

// App is the fiber app the node serves.
func (s *Server) App() *fiber.App { return s.app }

// Shutdown stops serving, letting requests in flight finish until ctx
// ends, on connections and on links alike.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.app.ShutdownWithContext(ctx)
	s.shutdownLinks(ctx)
	return err
}

func (s *Server) routes() {
	s.app.Use(apierr.RequestID, streamedBodies)
	health := pki.Require(s.nodeCallers(), &localGateway)
	s.app.Get("/healthz", health, func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	s.app.Get("/readyz", health, s.readyz)
	s.app.Get("/metrics", pki.Require(pki.Scrapers, nil), obs.Serve())
	api := s.app.Group("/api/v1", pki.Require(s.jobCallers(), &localGateway), s.systemSpan, s.restoreGate, s.group.Forward(servedLocally), s.audit, s.fairKey, s.slot, idempotency)
	s.flowRoutes(api)
	s.jobRoutes(api)
	s.scheduleRoutes(api)
	s.queueRoutes(api)
	s.namespaceRoutes(api)
	s.encryptionRoutes(api)
	s.signingRoutes(api)
	s.webhookRoutes(api)
	s.alertRoutes(api)
	s.liveRoutes(api)
	s.searchRoutes(api)
	s.healthRoutes(api)
	s.auditRoutes(api)
	s.aiRoutes(api)
	s.clusterRoutes()
	s.usageRoutes()
	s.backupRoutes()
	s.moveRoutes()
	s.trustRoutes()
	s.linkRoutes()
}

// Who may call a shard node. The TLS handshake admits Callers; each
// route group then narrows it:
//   - /api/v1 (tenants' jobs): gateways, this shard's members (a
//     follower forwarding a write it was sent) and operators (tools such
//     as `jobbie bench --direct`);
//   - /internal/v1 (membership, snapshots): this shard's members and
//     operators;
//   - /internal/v1/link (a link carrying many requests, link.go): as
//     /api/v1, and each request on it is judged again by its route;
//   - /internal/v1/usage (metering): control and operators;
//   - /internal/v1/backup, /internal/v1/restore and /internal/v1/move:
//     control alone;
//   - /internal/v1/trust (a self-hosted node's trust bundle): gateways
//     over TLS or the tunnel alone, not the local gateway;
//   - /metrics: scrapers (pki.Scrapers);
//   - /healthz and /readyz: any caller the handshake admitted but control.
//
// A node of another shard is refused at the handshake: nothing of this
// shard's tenants is its to read. Control is admitted for usage and
// backups alone: every other route refuses it (403).
//
// A self-hosted node's own listener admits its cluster's nodes alone:
// the hosted roles reach it only over its tunnel (Node.Serve), whose
// streams carry the gateway's TLS identity, so a hosted certificate
// (which cannot be revoked) opens no tenant's node it can reach.

// Callers is who may connect to a node of shard over its own listener;
// tenant is the owner the node's certificate names ("" for a hosted
// shard).
func Callers(shard, tenant string) pki.Policy {
	if tenant != "" {
		return pki.OwnedShardMember(shard, tenant)
	}
	return pki.Either(pki.Roles(pki.RoleControl), nodeCallers(shard))
}

// nodeCallers is who the handshake admits but control.
func nodeCallers(shard string) pki.Policy {
	return pki.Either(pki.Roles(pki.RoleGateway, pki.RoleOperator, pki.RoleMetrics), pki.ShardMember(shard))
}

func (s *Server) nodeCallers() pki.Policy { return nodeCallers(s.cfg.ShardID) }

func (s *Server) jobCallers() pki.Policy {
	return pki.Either(pki.Roles(pki.RoleGateway, pki.RoleOperator), pki.ShardMember(s.cfg.ShardID))
}

func (s *Server) memberCallers() pki.Policy {
	return pki.Either(pki.Roles(pki.RoleOperator), pki.ShardMember(s.cfg.ShardID))
}

// localGateway is who a request over the node's Unix socket comes from:
// only this host's processes that may open the socket file reach it, and
// that is the gateway beside the node.
var localGateway = pki.Identity{Role: pki.RoleGateway, Node: "local"}

// readyz answers 200 on the leader, and on a follower that knows a leader
// and has applied nearly all it knows committed (it serves reads and
// forwards writes), while every listener of its process accepts; 503
// otherwise.
func (s *Server) readyz(c *fiber.Ctx) error {
	if err := s.listening(); err != nil {
		return err
	}
	st := s.node.Status()
	if !st.Ready && (st.LeaderID == "" || st.State != replica.StateFollower || st.CommitIndex > st.AppliedIndex+readyLag) {
		return apierr.Retry(apierr.NoLeader, 1, "this node has no leader or is catching up")
	}
	return c.JSON(fiber.Map{"status": "ready", "shard_id": s.cfg.ShardID, "node_id": s.cfg.NodeID, "state": st.State})
}

// readyLag is how many committed entries a ready follower may not have
// applied yet.
const readyLag = 1024

// ns is the shard namespace a request works in (set by the gateway).
func ns(c *fiber.Ctx) string { return string(c.Request().Header.Peek(wire.ShardNamespaceHeader)) }

// decode decodes a request body strictly (apierr.DecodeJSON).
func decode(c *fiber.Ctx, v any) error { return apierr.DecodeJSON(c.Body(), v, false) }

// decodeOptional is decode for a body that may be empty.
func decodeOptional(c *fiber.Ctx, v any) error { return apierr.DecodeJSON(c.Body(), v, true) }
