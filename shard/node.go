package shard

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/internal/tracing"
	"github.com/jobbie/jobbie/shard/api"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/leader"
	"github.com/jobbie/jobbie/shard/live"
	"github.com/jobbie/jobbie/shard/push"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/shard/trust"
	"github.com/jobbie/jobbie/shard/webhooks"
	"github.com/jobbie/jobbie/wire"
)

// Node is one shard node: its replicated state machine, what it keeps in
// memory of its own (parked fetches, events, workers), its operations,
// its leader's loops and its HTTP API.
type Node struct {
	cfg     Config
	eng     *engine.Engine
	repl    *replica.Node
	waiters *live.Waiters
	events  *live.Events
	workers *live.Workers
	svc     *service.Service
	loops   *leader.Loops
	push    *push.Dispatcher
	hooks   *webhooks.Deliverer
	out     *outbound.Client // calls tenants' endpoints: push deliveries
	tr      *tracing.Tracer  // the node's spans; nil: tracing off
	api     *api.Server
	shards  *shardclient.Client // to the other members: forwarded writes, join requests
	control controlLink         // to the control plane: registration (register.go)
	weights *api.Weights        // the namespaces' fair weights, from the gateway's requests
	trust   *trust.Store        // the newest trust bundle a gateway pushed (a self-hosted node's)
	tenant  string              // the owner its certificate names; "" on a hosted shard
	ln      net.Listener
	unix    net.Listener
	meta    metaLoop // cluster.go
	formats formats  // cluster.go
}

// New opens the node's state, starts Raft and the leader's loops, and
// builds the HTTP API; Start serves it.
func New(cfg Config) (*Node, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, waiters: live.NewWaiters(cfg.Clock), events: live.NewEvents(), workers: live.NewWorkers(cfg.Clock),
		weights: api.NewWeights()}
	n.eng = engine.New(engine.Options{Retention: cfg.Retention, Waker: n.waiters,
		Observers:  []engine.Observer{n.events.Observer(), n.workers.Observer(), live.CountEvents()},
		Cancelling: []engine.CancelObserver{n.workers.CancelObserver()}})
	// Raft talks to this shard's nodes only, of the same owner: a
	// self-hosted shard's peers must name its tenant, a hosted shard's
	// none.
	n.tenant = cfg.TLS.Identity().Tenant
	members := pki.OwnedShardMember(cfg.ShardID, n.tenant)
	// Every node opens its trust store (nothing to read on a hosted one):
	// a self-hosted node finds the bundle its last run was pushed, with
	// its age.
	ts, err := trust.Open(filepath.Join(cfg.DataDir, trust.FileName))
	if err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	if err := ts.Discarded(); err != nil {
		cfg.Logger.Warn("shard: the trust bundle kept by the last run is unreadable; waiting for the next push", "err", err)
	}
	n.trust = ts
	raftLog := slog.NewLogLogger(cfg.Logger.With("component", "raft", "shard", cfg.ShardID).Handler(), slog.LevelWarn)
	repl, err := replica.Open(replica.Config{
		Dir:       cfg.DataDir,
		Name:      "shard " + cfg.ShardID,
		Subject:   "this shard",
		NodeID:    cfg.NodeID,
		RaftAddr:  cfg.RaftAddr,
		Bootstrap: cfg.Bootstrap,
		Clock:     cfg.Clock,
		Logger:    hclog.FromStandardLogger(raftLog, &hclog.LoggerOptions{Name: "raft", Level: hclog.Warn}),

		RaftTLS:       &replica.RaftTLS{Server: cfg.TLS.Server(members), Client: cfg.TLS.Client(members)},
		RaftAdvertise: cfg.RaftAdvertise, Fast: cfg.Fast, HeartbeatTimeout: cfg.RaftTimeout, ElectionTimeout: cfg.RaftTimeout,
		SnapshotThreshold: cfg.SnapshotThreshold, TrailingLogs: cfg.TrailingLogs, UnfairAdmission: cfg.UnfairAdmission,
		FairWeight: n.weights.Of, Listeners: cfg.Listeners, Effects: !cfg.ReplicateCommands,
		EffectsReader: n.effectsReader(),
	}, n.registry())
	if err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	n.repl = repl
	n.events.Open(n.eng, repl.DB())
	live.Track(n.eng)
	out, err := outbound.New(outbound.Config{AllowPrivate: cfg.PushAllowPrivate, RootCAs: cfg.PushRootCAs})
	if err != nil {
		_ = repl.Close()
		return nil, fmt.Errorf("shard: %w", err)
	}
	n.out = out
	n.svc = service.New(service.Config{SearchBudget: cfg.SearchBudget, BulkSyncMax: cfg.BulkSyncMax, BulkChunk: cfg.BulkChunk,
		Clock: cfg.Clock, Logger: cfg.Logger, Outbound: out, MasterKey: cfg.MasterKey}, n.eng, repl, n.waiters)
	n.push = push.Start(push.Config{Client: out, Clock: cfg.Clock, Logger: cfg.Logger}, repl, n.svc, n.workers)
	n.hooks = webhooks.Start(webhooks.Config{Client: out, ShardID: cfg.ShardID, Clock: cfg.Clock, Logger: cfg.Logger, RetryBase: cfg.WebhookRetryBase,
		DisableAfter: cfg.WebhookDisableAfter},
		repl, n.svc, n.events)
	n.loops = leader.Start(leader.Config{SweepInterval: cfg.SweepInterval, UsageInterval: cfg.UsageInterval,
		EventTrimInterval: cfg.EventTrimInterval, EventRetention: cfg.EventRetention, AlertInterval: cfg.AlertInterval,
		LastFetch: n.workers.LastFetch, Clock: cfg.Clock, Logger: cfg.Logger}, n.eng, repl, n.svc)
	// A node calls its own group only (forwarded writes, joins): whatever
	// address gossip gives, the peer must show a certificate of this shard.
	tr, err := tracing.FromEnv(context.Background(), tracing.Config{Service: "jobbie-shard", ShareSystem: cfg.TraceShareSystem,
		Namespaces: tracing.NewNamespaces(out, n.namespaceOTLP)})
	if err != nil {
		n.push.Stop()
		n.hooks.Stop()
		n.svc.Close()
		n.loops.Stop()
		live.Untrack(n.eng)
		_ = repl.Close()
		out.Close()
		return nil, fmt.Errorf("shard: %w", err)
	}
	n.tr = tr
	n.shards = shardclient.New(shardclient.Config{Name: "jobbie-shard", MaxConns: 4096, MaxResponseBody: 4 * api.MaxRequestBody,
		TLS: cfg.TLS, NodePolicy: members, Logger: cfg.Logger})
	n.api = api.New(api.Config{ShardID: cfg.ShardID, NodeID: cfg.NodeID, Gossip: cfg.Gossip,
		AdvertiseHTTP: cfg.AdvertiseHTTP, Version: cfg.Version, Logger: cfg.Logger, Tenant: n.tenant, Listening: n.listening},
		api.Deps{Service: n.svc, Node: repl, Workers: n.workers, Events: n.events, Shards: n.shards, Weights: n.weights, Trust: n.trust,
			Hooks: n.hooks, Tracer: n.tr}, n.boundAddr)
	return n, nil
}

// Start listens on the configured address and serves until Stop. Its
// listeners retry failed accepts (fasthttp's Serve would return at the
// first EMFILE and the node never accept again) and fail /readyz
// meanwhile.
func (n *Node) Start() error {
	tcp, err := net.Listen("tcp", n.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("shard: listen: %w", err)
	}
	ln := listen.New(tcp, listen.Config{Name: "internal", Group: n.cfg.Listeners, Logger: n.cfg.Logger})
	n.ln = ln
	// A connection that sends nothing is closed without an answer
	// (apierr.QuietListener). A self-hosted node admits its own cluster's
	// nodes here and no hosted role (api.Callers): those come over Serve.
	tl := apierr.QuietListener(tls.NewListener(ln, n.cfg.TLS.Server(api.Callers(n.cfg.ShardID, n.tenant))))
	go func() { _ = n.api.App().Listener(tl) }()
	if p := n.cfg.SocketPath; p != "" {
		_ = os.Remove(p) // a socket left by a crash
		us, err := net.Listen("unix", p)
		if err != nil {
			return fmt.Errorf("shard: listen on %s: %w", p, err)
		}
		ul := listen.New(us, listen.Config{Name: "socket", Group: n.cfg.Listeners, Logger: n.cfg.Logger})
		n.unix = ul
		go func() { _ = n.api.App().Listener(apierr.QuietListener(ul)) }()
	}
	n.startMeta()
	return nil
}

// Serve serves the node's API on ln as well, until Stop: a self-hosted
// node's tunnel (tunnel.Agent.Listener), whose streams carry the hosted
// gateway's TLS identity, which the routes judge as on a TLS connection.
// It is the hosted side's only way in: the node's own listener admits
// its cluster's nodes alone.
func (n *Node) Serve(ln net.Listener) {
	go func() { _ = n.api.App().Listener(apierr.QuietListener(ln)) }()
}

// Stop hands the lead over if it has it (a planned stop then costs no
// election timeout), ends long-polls and streams, stops serving and
// closes the state.
func (n *Node) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n.stopMeta()
	// Release parked fetches first, so the HTTP shutdown does not wait out
	// their timeouts; then stop the loops, the server and the state.
	n.push.Stop()  // gives back what it holds while it still can
	n.hooks.Stop() // records its progress while it still can
	n.svc.Close()
	n.loops.Stop()
	live.Untrack(n.eng)
	err := n.repl.Close()
	if n.ln != nil {
		_ = n.api.Shutdown(ctx)
	}
	n.shards.Close()
	_ = n.tr.Shutdown(ctx) // sends the spans it holds
	n.out.Close()
	n.control.close()
	n.waitMeta()
	return err
}

// listening is the first of the group's listeners that cannot accept,
// for /readyz; nil while all can.
func (n *Node) listening() error {
	if f := n.cfg.Listeners.Failing(); f != nil {
		return f
	}
	return nil
}

// Listeners is the group /readyz asks (Config.Listeners): a listener
// serving beside the node (a self-hosted node's local API) joins it.
func (n *Node) Listeners() *listen.Group { return n.cfg.Listeners }

// Addr is the bound HTTP address.
func (n *Node) Addr() string { return n.ln.Addr().String() }

func (n *Node) boundAddr() string {
	if n.ln != nil {
		return n.ln.Addr().String()
	}
	return n.cfg.HTTPAddr
}

// Service is the node's operations as Go calls.
func (n *Node) Service() *service.Service { return n.svc }

// WaitLeader blocks until this node leads and has applied its log.
func (n *Node) WaitLeader(ctx context.Context) error { return n.repl.WaitLeader(ctx) }

// IsLeader reports whether this node leads its shard now.
func (n *Node) IsLeader() bool { return n.repl.IsLeader() }

// HasState reports whether the node found Raft state when it opened; one
// without (and without Bootstrap) must JoinCluster.
func (n *Node) HasState() bool { return n.repl.HasState() }

// Membership reports whether this node is in the latest configuration it
// knows, whether it knows one, and whether Raft stopped itself on
// applying its removal (replica.Node.Membership).
func (n *Node) Membership() (member, known, stopped bool) { return n.repl.Membership() }

// Subscribe tells of leadership changes (replica.Node.Subscribe).
func (n *Node) Subscribe() (<-chan struct{}, func()) { return n.repl.Subscribe() }

// Status is this node's view of its group.
func (n *Node) Status() edge.NodeStatus { return n.api.Status() }

// TrustBundle is the newest trust bundle a hosted gateway pushed to this
// node (POST /internal/v1/trust), kept across restarts, and when it was
// received (wall clock); ok is false before the first, and always on a
// hosted node. A bundle left by a run under another certificate (of
// another tenant or shard) is not this node's and is not answered. An
// atomic load: cheap enough for every request. The bundle is shared:
// read it, never change it.
func (n *Node) TrustBundle() (wire.TrustBundle, time.Time, bool) {
	b, at, ok := n.trust.Latest()
	if !ok || b.TenantID != n.tenant || b.ShardID != n.cfg.ShardID {
		return wire.TrustBundle{}, time.Time{}, false
	}
	return b, at, true
}

// Members lists the group's members with the HTTP address each advertises.
func (n *Node) Members() ([]wire.Member, error) { return n.api.Members() }

// namespaceOTLP is where ns's spans go, as the node last applied its
// settings (tracing.Namespaces reads it at most once a second).
func (n *Node) namespaceOTLP(ns string) tracing.Endpoint {
	u, allow := n.svc.NamespaceOTLP(ns)
	return tracing.Endpoint{URL: u, Allow: allow}
}

// registry is the engine's handlers, and what an entry applied as the
// leader's effects does here, where none of them ran: the engine's views
// for readers are dropped and the node's event streams are nudged.
func (n *Node) registry() *replica.Registry {
	reg := n.eng.Registry()
	reg.OnEffectsApplied(n.eng.DropCommittedViews)
	reg.OnEffectsApplied(n.events.NudgeAll)
	return reg
}
