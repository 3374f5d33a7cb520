package leader

import (
	"context"
	"log/slog"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
)

// Config is what the runners need of the node's configuration (the root
// package's Config says what each field is).
type Config struct {
	NodeID            string
	TLS               *pki.Credentials
	Shards            []service.ShardInfo
	Clock             clockwork.Clock
	Logger            *slog.Logger
	PullInterval      time.Duration
	PullTimeout       time.Duration
	BackupOrphanAfter time.Duration
	BackupStore       backup.Store
	AdvertisedHTTP    func() string
	// OnPull, when set, runs after each round of the usage puller.
	OnPull func()
	// AuditTrimInterval is how often the leader trims the tenants' audit
	// logs to their retention; default a minute.
	AuditTrimInterval time.Duration
}

// Leader runs what only the leader does: the loops that decide when
// (usage pulls and invoice freezing, backup policies and orphans, moves
// left by an earlier leader, the signing key and this node's address) and
// the runners of what service calls started (backups, restores, moves).
// It reaches shards through internal/shardclient only (shards.go) and
// changes the state only through the service.
type Leader struct {
	*service.Service
	cfg Config
	log *slog.Logger

	shards  *shards
	backups *backupRunner
	moves   *moveRunner
	puller  *puller

	cancel context.CancelFunc
	done   chan struct{}
}

// New builds the runners over svc; Start starts the loops.
func New(svc *service.Service, cfg Config) *Leader {
	s := &Leader{Service: svc, cfg: cfg, log: cfg.Logger.With("role", "control")}
	s.shards = newShards(cfg)
	s.puller = newPuller(s)
	s.backups = newBackupRunner(s, cfg.BackupStore)
	s.moves = newMoveRunner(s)
	return s
}

// Start runs the loops on node until Stop; each acts only while this node
// leads.
func (s *Leader) Start(node *replica.Node) {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	loops := []func(context.Context){
		func(ctx context.Context) { s.leaderDuties(ctx, node) },
		s.backups.runLoop,
		s.moves.runLoop,
	}
	if s.cfg.PullInterval >= 0 { // negative: meter nothing
		loops = append(loops, func(ctx context.Context) { s.puller.run(ctx, s.cfg.PullInterval, s.cfg.OnPull) })
	}
	running := make(chan struct{}, len(loops))
	for _, loop := range loops {
		go func() { defer func() { running <- struct{}{} }(); loop(ctx) }()
	}
	go func() {
		for range loops {
			<-running
		}
		close(s.done)
	}()
}

// Stop ends the loops and the runs in flight and waits for them, so
// nothing proposes to a closing node: the moves first, whose cleanup
// still calls shards, then the backups.
func (s *Leader) Stop() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
		s.cancel = nil
	}
	s.moves.stop()
	s.backups.stop()
	s.shards.close()
}

// The service's Runner: what its calls start runs here.

func (s *Leader) HoldBackups(ids ...string) func() { return s.backups.hold(ids...) }

func (s *Leader) TakeBackup(b state.BackupRecord, release func()) {
	s.backups.launch(release, func(ctx context.Context) { s.backups.take(ctx, b) })
}

func (s *Leader) Restore(st state.RestoreStarted, release func()) {
	s.backups.launch(release, func(ctx context.Context) { s.backups.restore(ctx, st) })
}

func (s *Leader) HoldMove(id string) func() { return s.moves.hold(id) }

func (s *Leader) RunMove(m state.MoveRecord, release func()) {
	s.moves.launch(m.ID, release, func(ctx context.Context) { s.moves.run(ctx, m) })
}

func (s *Leader) InterruptMove(id string) { s.moves.interrupt(id) }

func (s *Leader) ClearMoved(ctx context.Context, tid, ns, shard string) error {
	return s.moves.clearMoved(ctx, tid, ns, shard)
}

// PullAll reads every shard's usage once, as a round of the pull loop
// does.
func (s *Leader) PullAll(ctx context.Context) { s.puller.pullAll(ctx) }

// PullShard reads one shard's usage from its cursor, from the addresses
// tg names.
func (s *Leader) PullShard(ctx context.Context, tg Target) error { return s.puller.pullShard(ctx, tg) }

// SetOnPull sets what runs after each round of the pull loop; before
// Start.
func (s *Leader) SetOnPull(f func()) { s.cfg.OnPull = f }

// SetMoveFence sets the fence moves ask of their source and the part of
// it the switch must leave (moveFenceTTL, moveFenceMargin); before the
// moves it applies to start.
func (s *Leader) SetMoveFence(ttl, margin time.Duration) {
	s.moves.fenceTTL, s.moves.fenceMargin = ttl, margin
}
