package control

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/control/leader"
	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// DefaultPullInterval is Config.PullInterval's default.
const DefaultPullInterval = 2 * time.Second

// DefaultBackupPolicyMinInterval is jobbie control's default minimum time
// between two runs of a backup policy (Config.BackupPolicyMinInterval).
const DefaultBackupPolicyMinInterval = time.Hour

// DefaultSelfHostedCertValidity is Config.SelfHostedCertValidity's
// default: a year.
const DefaultSelfHostedCertValidity = 365 * 24 * time.Hour

// MinSelfHostedCertValidity is the shortest Config.SelfHostedCertValidity:
// a node renews once a third is left, checking a few times a second at
// this size, so shorter would leave no room for one failed attempt.
const MinSelfHostedCertValidity = 10 * time.Second

// ShardInfo names a shard cluster namespaces may be placed on.
type ShardInfo = service.ShardInfo

// KeyRequest asks for a new tenant API key; CreateKey parses and checks
// its expires_at.
type KeyRequest = wire.CreateKeyRequest

// Config configures a Server. Zero values take the defaults in comments.
type Config struct {
	// DataDir holds the Raft log and the Pebble state. Required.
	DataDir string
	// HTTPAddr is the address the HTTP API listens on; default
	// 127.0.0.1:8081. Port 0 picks a free port (see Server.Addr).
	HTTPAddr string
	// RaftAddr is the Raft transport's address; default 127.0.0.1:0, which
	// suits a single node (it never dials itself).
	RaftAddr string
	// NodeID is this node's Raft id; default "control1".
	NodeID string
	// RaftAdvertise is the Raft address other members dial, when it
	// differs from RaftAddr; AdvertiseHTTP likewise for the HTTP API
	// (what a follower forwards to). Default: the bound addresses.
	RaftAdvertise, AdvertiseHTTP string
	// Join lists HTTP addresses (host:port) of control nodes to ask to add
	// this node to their group, when it starts with no state; without it
	// such a node bootstraps a group of its own. A node with state resumes
	// from it either way (cluster.go).
	Join []string
	// SnapshotThreshold and TrailingLogs tune Raft snapshots (see
	// replica.Config); zero takes replica's defaults.
	SnapshotThreshold, TrailingLogs uint64
	// TLS is this node's identity, and is required: the control plane runs
	// only with mutual TLS between processes. The HTTP API is served over
	// TLS; the internal routes admit only callers whose certificates show
	// the roles allowed to call them (gateways; shards registering their
	// own shard), /metrics admits scrapers (pki.Scrapers), and Raft is
	// mutual TLS between control nodes. The operator API takes operator
	// keys, with or without a client certificate.
	TLS *pki.Credentials
	// Shards are shard clusters known from configuration, treated as
	// registered with DefaultShardCapacity: new namespaces are placed on
	// them and on every shard that registers itself. With neither, no
	// tenant or namespace can be created.
	Shards []ShardInfo
	// SelfHostedCA signs the certificates of self-hosted shards' nodes
	// when they join with a tenant's token (POST /control/v1/join). It is
	// a CA of its own, never the deployment's: what it signs is trusted
	// only where a self-hosted shard may speak (gateways' tunnel
	// listeners). Nil: joining answers 503.
	SelfHostedCA *pki.CA
	// SelfHostedCertValidity is how long a self-hosted node's certificate
	// lasts, from its join or its last renewal (POST /control/v1/join/renew;
	// nodes renew once a third of it is left); default
	// DefaultSelfHostedCertValidity, at least MinSelfHostedCertValidity
	// (short ones are for tests).
	SelfHostedCertValidity time.Duration
	// TunnelURLs are the gateways' tunnel listeners (host:port) a joined
	// node is told to dial.
	TunnelURLs []string
	// Gossip, when set, is the pool this node has joined; the shard list
	// then shows each shard's current leader. The caller owns the pool.
	Gossip *gossip.Pool
	// Logger receives the server's and Raft's warnings; default slog.Default().
	Logger *slog.Logger
	// Listeners is the group /readyz asks: it fails while any listener
	// of the group (this node's HTTP and Raft ones among them) cannot
	// accept. A process running several roles passes them one (`jobbie
	// dev`). Default: the node's own.
	Listeners *listen.Group
	// RaftTimeout is Raft's heartbeat and election timeout; default 500ms.
	// Tests shorten it so a single node elects itself quickly.
	RaftTimeout time.Duration
	// ShutdownTimeout bounds how long Stop waits for requests in flight;
	// default 5s.
	ShutdownTimeout time.Duration
	// PullInterval is how often the leader pulls every shard's usage into
	// the metering ledger; default 2s; negative: never (for tests and
	// embedders that meter nothing). Usage shows in GET /api/v1/usage at
	// most PullInterval plus one pull's requests after a shard applied it.
	PullInterval time.Duration
	// PullTimeout bounds each request of a usage pull; default 10s.
	PullTimeout time.Duration
	// BackupStore keeps namespace backups' streams; default a directory
	// store at DataDir/backups. A directory is local to one control node:
	// a group of several needs a store every node reaches (S3, or a
	// shared directory), since whichever node leads takes and restores.
	BackupStore backup.Store
	// BackupOrphanAfter is how long a new leader waits before it fails
	// the backups and restores an earlier leader left running (as
	// "interrupted"); default 10s.
	BackupOrphanAfter time.Duration
	// BackupPolicyMinInterval is the shortest time a backup policy's cron
	// may leave between two runs (checked on the next runs in the
	// policy's zone when it is set); 0: any (jobbie control's flag
	// defaults to DefaultBackupPolicyMinInterval).
	BackupPolicyMinInterval time.Duration
	// Clock stamps every command this node proposes as leader (the time
	// records carry: created_at, registered_at…); default the real clock.
	// Tests pass a fake one.
	Clock clockwork.Clock
	// AuditTrimInterval is how often the leader trims the tenants' audit
	// logs to their plans' retention; default a minute.
	AuditTrimInterval time.Duration
}

// WithDefaults returns a copy of c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.HTTPAddr == "" {
		c.HTTPAddr = "127.0.0.1:8081"
	}
	if c.Listeners == nil {
		c.Listeners = listen.NewGroup()
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	if c.RaftAddr == "" {
		c.RaftAddr = "127.0.0.1:0"
	}
	if c.NodeID == "" {
		c.NodeID = "control1"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.RaftTimeout == 0 {
		c.RaftTimeout = 500 * time.Millisecond
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 5 * time.Second
	}
	if c.PullInterval == 0 {
		c.PullInterval = DefaultPullInterval
	}
	if c.PullTimeout == 0 {
		c.PullTimeout = 10 * time.Second
	}
	if c.BackupOrphanAfter == 0 {
		c.BackupOrphanAfter = 10 * time.Second
	}
	if c.SelfHostedCertValidity == 0 {
		c.SelfHostedCertValidity = DefaultSelfHostedCertValidity
	}
	return c
}

// Validate reports what is missing or wrong in c (after WithDefaults).
func (c Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("DataDir is required"))
	}
	if c.TLS != nil && c.TLS.Identity().Role != pki.RoleControl {
		errs = append(errs, fmt.Errorf("TLS is the certificate of %s, not of a control node", c.TLS.Identity()))
	}
	if c.RaftTimeout < 10*time.Millisecond {
		errs = append(errs, fmt.Errorf("RaftTimeout %s is under 10ms", c.RaftTimeout))
	}
	if c.SelfHostedCertValidity < MinSelfHostedCertValidity {
		errs = append(errs, fmt.Errorf("SelfHostedCertValidity %s is under %s", c.SelfHostedCertValidity, MinSelfHostedCertValidity))
	}
	if c.PullTimeout < 0 {
		errs = append(errs, fmt.Errorf("PullTimeout %s is negative", c.PullTimeout))
	}
	seen := map[string]bool{}
	for i, s := range c.Shards {
		switch {
		case s.ID == "":
			errs = append(errs, fmt.Errorf("shard %d in Shards has no ID", i))
		case !service.ShardIDRE.MatchString(s.ID):
			errs = append(errs, fmt.Errorf("shard %d in Shards: id %q must be 1-63 letters, digits, '.', '_' or '-'", i, s.ID))
		case seen[s.ID]:
			errs = append(errs, fmt.Errorf("shard %d in Shards: id %q is listed twice", i, s.ID))
		case s.Addr == "":
			errs = append(errs, fmt.Errorf("shard %d in Shards (%s) has no Addr", i, s.ID))
		}
		for _, a := range s.UsageAddrs {
			if _, ok := leader.ShardURL(a); !ok {
				errs = append(errs, fmt.Errorf("shard %d in Shards (%s): usage address %q must be host:port or an http(s) URL", i, s.ID, a))
			}
		}
		seen[s.ID] = true
	}
	var err error
	if len(errs) > 0 {
		err = fmt.Errorf("control: config: %w", errors.Join(errs...))
	}
	if c.TLS == nil {
		return errors.Join(errTLSRequired, err)
	}
	return err
}

// errTLSRequired is Validate's answer to a config without TLS.
var errTLSRequired = errors.New("control: TLS is required: set Config.TLS to this node's credentials, " +
	"a certificate for the control role from the deployment's CA; the control plane accepts no shared secret")
