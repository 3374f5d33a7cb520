package service

import (
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/oklog/ulid/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/envelope"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/shard/live"
	"github.com/jobbie/jobbie/shard/schema"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Config configures a Service. Zero values take the defaults in comments.
type Config struct {
	SearchBudget time.Duration   // scanning time of one search page or bulk step; default 1s
	BulkSyncMax  int             // a bulk by filter matching more runs in the background; default wire.MaxBulkSync
	BulkChunk    int             // jobs per Raft command of a bulk; default 1,000
	Clock        clockwork.Clock // default the real clock
	Logger       *slog.Logger    // default slog.Default()
	// Outbound is the node's caller of tenants' endpoints: a push URL is
	// checked by its rules. Nil: push queues cannot be configured.
	Outbound *outbound.Client
	// MasterKey wraps the namespaces' keys for encryption at rest
	// (encryption.go). Nil: no namespace can encrypt, and values sealed
	// elsewhere cannot be opened here.
	MasterKey *envelope.Key
}

func (c Config) withDefaults() Config {
	if c.SearchBudget == 0 {
		c.SearchBudget = DefaultSearchBudget
	}
	if c.BulkSyncMax == 0 {
		c.BulkSyncMax = wire.MaxBulkSync
	}
	if c.BulkChunk == 0 {
		c.BulkChunk = defaultBulkChunk
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Service runs a shard node's operations.
type Service struct {
	cfg     Config
	eng     *engine.Engine
	node    *replica.Node
	waiters *live.Waiters

	idMu    sync.Mutex
	entropy io.Reader

	bulkKick chan struct{} // tells the leader's bulk loop of a new operation
	driving  sync.Map      // tokens of the restores this node's Restore is writing
	moves    moveSessions  // the leader's live move sessions (move.go)
	// retention is what each namespace's plan last said of its event log
	// (eventretention.go).
	retention retentionWants
	alerts    alertMemory   // the leader's evaluation of alert rules (alerts_eval.go)
	keys      keyring       // the data keys this node opened (sealing.go)
	schemas   schema.Cache  // queues' payload schemas, compiled once per version (schemas.go)
	stop      chan struct{} // closed by Close: parked fetches give up
	stopOnce  sync.Once
}

// New returns a service over the engine, its node and the node's waiters.
func New(cfg Config, eng *engine.Engine, node *replica.Node, waiters *live.Waiters) *Service {
	return &Service{cfg: cfg.withDefaults(), eng: eng, node: node, waiters: waiters,
		entropy: ulid.Monotonic(rand.Reader, 0), bulkKick: make(chan struct{}, 1), stop: make(chan struct{})}
}

// Close releases every parked fetch (they answer "no job") and refuses
// new waits; call it before closing the node.
func (s *Service) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.DropMoveSessions(time.Time{})
}

// Stopping is closed once Close was called.
func (s *Service) Stopping() <-chan struct{} { return s.stop }

// NewID returns a new, time-ordered id with prefix. Ids are made by the
// proposer, never in apply, so every replica stores the same id.
func (s *Service) NewID(prefix string) string {
	s.idMu.Lock()
	id := ulid.MustNew(ulid.Timestamp(s.cfg.Clock.Now()), s.entropy)
	s.idMu.Unlock()
	var b strings.Builder // one allocation: prefix + id.String() makes two
	b.Grow(len(prefix) + ulid.EncodedSize)
	b.WriteString(prefix)
	var text [ulid.EncodedSize]byte
	_ = id.MarshalTextTo(text[:])
	b.Write(text[:])
	return b.String()
}

// now is the proposer's clock in unix nanoseconds.
func (s *Service) now() int64 { return s.cfg.Clock.Now().UnixNano() }

// CheckNamespace validates a shard namespace key: every key the engine
// writes starts with it, so it must have the one shape tenancy defines.
func CheckNamespace(ns string) error { return namespaceOK(ns) }

// NamespaceOK refuses a missing or malformed shard namespace (400).
func NamespaceOK(ns string) error { return namespaceOK(ns) }

func namespaceOK(ns string) error {
	if _, _, err := tenancy.ParseShardNamespace(ns); err != nil {
		return apierr.Field(wire.ShardNamespaceHeader, "missing or malformed shard namespace: %v", err)
	}
	return nil
}

// jobIDOK says a job id of the wrong shape is simply not found.
func jobIDOK(id string) error {
	if len(id) != keys.JobIDLen || id[:4] != "job_" {
		return apierr.New(apierr.NotFound, "job %q not found", id)
	}
	return nil
}

// must panics on a storage error while reading the state: keys and
// records the engine wrote always decode, so a failure is corruption.
func must(err error) {
	if err != nil {
		panic(fmt.Sprintf("shard: read state: %v", err))
	}
}
