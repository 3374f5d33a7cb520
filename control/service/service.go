package service

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
)

// Config is what the service needs of the node's configuration (the root
// package's Config says what each field is).
type Config struct {
	NodeID                  string
	Shards                  []ShardInfo
	SelfHostedCA            *pki.CA
	SelfHostedCertValidity  time.Duration
	TunnelURLs              []string
	Gossip                  *gossip.Pool
	Logger                  *slog.Logger
	Clock                   clockwork.Clock
	BackupStore             backup.Store
	BackupPolicyMinInterval time.Duration
	// AdvertisedHTTP is where other nodes reach this node's HTTP API.
	AdvertisedHTTP func() string
}

// Runner runs, on this node, what a call started and what reaches shards
// (the leader package): a backup or a restore taken after the answer, a
// move driven after it starts. Hold marks ids as run by this node from
// before their records are proposed, so the leader's loops never take
// them for an earlier leader's; release lets go of them, and a runner
// that takes a held id over releases it when it ends.
type Runner interface {
	HoldBackups(ids ...string) (release func())
	TakeBackup(b state.BackupRecord, release func())
	Restore(st state.RestoreStarted, release func())
	HoldMove(id string) (release func())
	RunMove(m state.MoveRecord, release func())
	InterruptMove(id string)
	// ClearMoved clears shard's moved tombstone of namespace ns of tenant
	// tid (move_tombstone.go).
	ClearMoved(ctx context.Context, tid, ns, shard string) error
}

// Service is the control plane's operations as Go calls, and the only
// proposer of commands: each validates its input, builds a command,
// proposes it on the running node and answers. Reads come from a
// snapshot of the node's own state.
type Service struct {
	cfg    Config
	log    *slog.Logger
	runner Runner

	// mu guards node: operations hold it shared, Detach exclusively, so
	// Detach waits for operations in flight and none starts on a closed
	// node.
	mu   sync.RWMutex
	node *replica.Node // nil before Attach and after Detach
}

// New returns a service with no node yet; SetRunner and Attach complete it.
func New(cfg Config) (*Service, error) {
	if cfg.BackupStore == nil {
		return nil, fmt.Errorf("control: service: no backup store")
	}
	return &Service{cfg: cfg, log: cfg.Logger.With("role", "control")}, nil
}

// SetRunner gives the service what runs the work its calls start.
func (s *Service) SetRunner(r Runner) { s.runner = r }

// Attach makes node the running node.
func (s *Service) Attach(node *replica.Node) {
	s.mu.Lock()
	s.node = node
	s.mu.Unlock()
}

// Detach waits for the operations in flight and returns the node, which
// the caller closes; nil if none was attached.
func (s *Service) Detach() *replica.Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	node := s.node
	s.node = nil
	return node
}
