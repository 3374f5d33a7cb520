package shard

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/envelope"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// Config configures a shard node. Zero values take the defaults in comments.
type Config struct {
	DataDir    string // required
	ShardID    string // default "s1"
	NodeID     string // default "n1"
	HTTPAddr   string // default 127.0.0.1:7101; "127.0.0.1:0" picks a port
	SocketPath string // if set, the API is also served on this Unix socket (for a gateway on the same host)
	RaftAddr   string // default 127.0.0.1:0
	Bootstrap  bool   // bootstrap a single-voter cluster when there is no state
	// TLS is this node's identity (required): a shard certificate of
	// ShardID. Its HTTP API and Raft are mutual TLS; see api.Config for
	// who may call what. A request over SocketPath is the local gateway's.
	TLS *pki.Credentials

	SweepInterval time.Duration   // leader sweep period; default 100ms
	Retention     time.Duration   // completed/cancelled jobs kept unless their queue says otherwise; default 7 days (applies read it: one value per cluster)
	Clock         clockwork.Clock // the node's clock, replaceable in tests; default the real one
	Logger        *slog.Logger    // default slog.Default()
	// Listeners is the group /readyz asks: it fails while any listener
	// of the group (this node's HTTP, socket and Raft ones among them)
	// cannot accept. A process running several roles passes them one
	// (`jobbie dev`). Default: the node's own.
	Listeners *listen.Group
	// UsageInterval is how often the leader sweeps usage (engine.UsageSweep:
	// idle namespaces' storage accrues, an ended hour closes, old hours are
	// pruned); default 10s. Control sees an hour closed at most this long
	// after it ends.
	UsageInterval time.Duration
	// EventTrimInterval is how often the leader trims each namespace's
	// event log to its plan's retention; default 10s.
	EventTrimInterval time.Duration
	// EventRetention is what the event log of a namespace whose plan
	// never said (wire.EventRetentionHeader) keeps; default
	// engine.DefaultEventRetention, the plans' default (tests lower it).
	EventRetention engine.EventRetention
	// AlertInterval is how often the leader evaluates the namespaces'
	// alert rules; default 15s (leader.DefaultAlertInterval). A rule
	// fires or resolves within one interval of its condition.
	AlertInterval time.Duration

	// Cluster. Gossip, if set, is this process's pool: the node advertises
	// itself in it and finds its leader's HTTP address in it to forward
	// writes. Without it a follower answers writes with 503.
	Gossip        *gossip.Pool
	AdvertiseHTTP string // HTTP address peers should use; default the bound one
	RaftAdvertise string // Raft address peers should use; default the bound one
	Version       string // advertised in gossip
	// Replication (replica.Config): Fast skips the Raft log's fsync per
	// append (see internal/replica/fastlog.go); RaftTimeout is the
	// heartbeat and election timeout (default 500ms); the snapshot knobs
	// default to replica's (8192 entries; 10240 trailing).
	Fast        bool
	RaftTimeout time.Duration
	// UnfairAdmission admits proposals first come, first served instead of
	// in turn per namespace (replica.Config.UnfairAdmission): for
	// measuring what fair admission buys.
	UnfairAdmission bool
	// ReplicateCommands has the leader propose each entry's commands,
	// which every member runs, instead of what they wrote (the default,
	// replica.Config.Effects: the other members apply the leader's batch
	// and run no handler). Even without it a leader proposes commands while
	// it has no other member, or while gossip has not shown every other
	// member advertising a build that applies such batches
	// (gossip.Meta.EntryFormat); without Gossip every member is taken to
	// run this build. docs/BENCHMARKS.md, "Followers applying the leader's
	// batches", says what it saves and what a follower then does not keep.
	ReplicateCommands bool
	SnapshotThreshold uint64
	TrailingLogs      uint64

	// Push delivery (shard/push) and webhooks (shard/webhooks):
	// PushAllowPrivate lets their URLs reach loopback and private
	// addresses (--push-allow-private: tests and a local dev); PushRootCAs
	// verifies handlers' certificates (nil: the system's roots; tests pass
	// their receiver's).
	PushAllowPrivate bool
	PushRootCAs      *x509.CertPool
	// WebhookRetryBase is the first wait before a failed webhook delivery
	// is retried, and WebhookDisableAfter how long an endpoint fails
	// before it is disabled (shard/webhooks; 0: its defaults, 5 s and
	// 72 h), for tests.
	WebhookRetryBase, WebhookDisableAfter time.Duration

	// Tracing: spans are exported when the OTEL_* variables name an OTLP
	// endpoint (internal/tracing.FromEnv), and each namespace's also to
	// the endpoint its settings name, through the same egress guard as
	// push. TraceShareSystem puts the node's own spans in the tenant's
	// trace and sends them to its endpoint too (--trace-share-system).
	TraceShareSystem bool

	// MasterKey is the operator's key that wraps every namespace's keys
	// for encryption at rest (shard/envelope; the key file of the
	// setting shard.encryption_master_key_file). Every node of every
	// shard cluster a namespace may be moved or restored to needs the
	// same one. Nil: namespaces on this node cannot encrypt.
	MasterKey *envelope.Key

	SearchBudget time.Duration // scanning time of one search page or bulk step; default 1s
	BulkSyncMax  int           // a bulk by filter matching more runs in the background; default 10,000
	BulkChunk    int           // jobs per Raft command of a bulk; default 1,000
}

// WithDefaults returns c with defaults filled in.
func (c Config) WithDefaults() Config {
	if c.ShardID == "" {
		c.ShardID = "s1"
	}
	if c.NodeID == "" {
		c.NodeID = "n1"
	}
	if c.HTTPAddr == "" {
		c.HTTPAddr = "127.0.0.1:7101"
	}
	if c.Listeners == nil {
		c.Listeners = listen.NewGroup()
	}
	if c.SweepInterval == 0 {
		c.SweepInterval = 100 * time.Millisecond
	}
	if c.Retention == 0 {
		c.Retention = engine.DefaultRetention
	}
	if c.SearchBudget == 0 {
		c.SearchBudget = service.DefaultSearchBudget
	}
	if c.BulkSyncMax == 0 {
		c.BulkSyncMax = wire.MaxBulkSync
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports a config that cannot run.
func (c Config) Validate() error {
	if c.DataDir == "" {
		return errors.New("shard: DataDir is required")
	}
	if c.TLS == nil {
		return errors.New("shard: TLS is required: every internal channel is mutual TLS (a shard certificate from `jobbie certs issue`)")
	}
	if id := c.TLS.Identity(); id.Role != pki.RoleShard || id.Shard != c.ShardID {
		return fmt.Errorf("shard: TLS is the certificate of %s, not of a node of shard %s", id, c.ShardID)
	}
	if c.BulkSyncMax < 0 {
		return fmt.Errorf("shard: BulkSyncMax must be at least 1 (0: the default of %d), not %d", wire.MaxBulkSync, c.BulkSyncMax)
	}
	return nil
}
