package control

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gofiber/fiber/v2"
	"github.com/hashicorp/go-hclog"
	"github.com/oklog/ulid/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
)

// Server is a control plane node: the replicated state and its HTTP API.
type Server struct {
	cfg Config
	log *slog.Logger
	reg *replica.Registry
	app *fiber.App

	lifecycle sync.Mutex // serializes Start and Stop
	started   bool
	ln        net.Listener
	addr      atomic.Value // string: ln's address while serving, read without the lifecycle lock
	served    chan error   // app.Listener's result

	// The usage puller's loop (usage_pull.go), while started; onPull, set
	// by tests before Start, runs after each of its rounds.
	puller     *puller
	pullCancel context.CancelFunc
	pullDone   chan struct{}
	onPull     func()

	// backups takes and restores backups and runs the leader's backup
	// loop (backup_run.go); backupDone is closed when the loop ends.
	backups      *backupRunner
	backupCancel context.CancelFunc
	backupDone   chan struct{}

	// moves runs live namespace moves and the leader's move loop
	// (move_run.go); moveDone is closed when the loop ends.
	moves      *moveRunner
	moveCancel context.CancelFunc
	moveDone   chan struct{}

	fwd        *fasthttp.Client // to the leader (forward.go)
	streamFwd  *http.Client     // to the leader, for answers streamed back (forward_stream.go)
	dutyCancel context.CancelFunc
	dutyDone   chan struct{}

	// mu guards node: operations hold it shared, Stop exclusively, so Stop
	// waits for operations in flight and none starts on a closed node.
	mu   sync.RWMutex
	node *replica.Node // nil before Start and after Stop
}

// New checks cfg and builds a Server; Start brings it up.
func New(cfg Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger.With("role", "control"), reg: state.NewRegistry(), fwd: newForwarder(cfg.TLS),
		streamFwd: newStreamForwarder(cfg.TLS)}
	store := cfg.BackupStore
	if store == nil {
		ds, err := backup.NewDirStore(filepath.Join(cfg.DataDir, "backups"))
		if err != nil {
			return nil, fmt.Errorf("control: backup store: %w", err)
		}
		store = ds
	}
	s.backups = newBackupRunner(s, store)
	s.moves = newMoveRunner(s)
	s.app = s.newApp()
	return s, nil
}

// Start opens the replicated state and starts serving HTTP. A node that
// is its group's only voter waits until it leads and makes sure a signing
// key exists, so the Go API works once Start returns; a node of a larger
// group serves at once (forwarding to the leader, or 503 while there is
// none), and a node with no state and Config.Join first asks to be added.
func (s *Server) Start(ctx context.Context) error {
	s.lifecycle.Lock()
	defer s.lifecycle.Unlock()
	if s.started {
		return errors.New("control: server already started")
	}
	s.started = true
	node, err := replica.Open(s.replicaConfig(), s.reg)
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	s.mu.Lock()
	s.node = node
	s.mu.Unlock()
	ln, err := net.Listen("tcp", s.cfg.HTTPAddr)
	if err != nil {
		return errors.Join(fmt.Errorf("control: listen: %w", err), s.closeNode())
	}
	// Certificates are optional on the handshake: the operator API takes
	// operator keys; every internal route requires its callers' roles.
	// A connection that sends nothing is closed without an answer.
	ln = apierr.QuietListener(tls.NewListener(ln, s.cfg.TLS.ServerCertOptional()))
	s.ln = ln
	s.addr.Store(ln.Addr().String())
	s.served = make(chan error, 1)
	go func() { s.served <- s.app.Listener(ln) }()
	if !node.HasState() && len(s.cfg.Join) > 0 {
		if err := s.join(ctx, node); err != nil {
			return errors.Join(err, s.stopLocked())
		}
	}
	if s.alone(node) {
		if err := node.WaitLeader(ctx); err != nil {
			return errors.Join(fmt.Errorf("control: wait for leadership: %w", err), s.stopLocked())
		}
		if err := s.ensureSigningKey(ctx); err != nil {
			return errors.Join(err, s.stopLocked())
		}
		if err := s.recordMemberHTTP(ctx, s.cfg.NodeID, s.AdvertisedHTTP()); err != nil {
			return errors.Join(err, s.stopLocked())
		}
	}
	dctx, cancel := context.WithCancel(context.Background())
	s.dutyCancel, s.dutyDone = cancel, make(chan struct{})
	go func() { defer close(s.dutyDone); s.leaderDuties(dctx, node) }()
	s.startPuller()
	bctx, bcancel := context.WithCancel(context.Background())
	s.backupCancel, s.backupDone = bcancel, make(chan struct{})
	go func() { defer close(s.backupDone); s.backups.runLoop(bctx) }()
	mctx, mcancel := context.WithCancel(context.Background())
	s.moveCancel, s.moveDone = mcancel, make(chan struct{})
	go func() { defer close(s.moveDone); s.moves.runLoop(mctx) }()
	s.log.Info("control plane started", "http", ln.Addr().String(), "raft", node.RaftAddr(), "node", s.cfg.NodeID)
	return nil
}

// alone reports whether this node is its group's only voter (or bootstraps
// one), so nothing but it can lead.
func (s *Server) alone(node *replica.Node) bool {
	ms, err := node.Members()
	if err != nil || len(ms) == 0 {
		return len(s.cfg.Join) == 0
	}
	voters := 0
	for _, m := range ms {
		if m.Voter {
			voters++
		}
	}
	return voters == 1 && ms[0].ID == s.cfg.NodeID
}

func (s *Server) replicaConfig() replica.Config {
	raftLog := slog.NewLogLogger(s.log.With("component", "raft").Handler(), slog.LevelWarn)
	return replica.Config{
		Dir:               s.cfg.DataDir,
		Name:              "control",
		Subject:           "the control plane",
		Clock:             s.cfg.Clock,
		NodeID:            s.cfg.NodeID,
		RaftAddr:          s.cfg.RaftAddr,
		RaftAdvertise:     s.cfg.RaftAdvertise,
		Bootstrap:         len(s.cfg.Join) == 0,
		SnapshotThreshold: s.cfg.SnapshotThreshold,
		TrailingLogs:      s.cfg.TrailingLogs,
		Logger:            hclog.FromStandardLogger(raftLog, &hclog.LoggerOptions{Name: "raft", Level: hclog.Warn}),
		HeartbeatTimeout:  s.cfg.RaftTimeout,
		ElectionTimeout:   s.cfg.RaftTimeout,
		RaftTLS:           s.raftTLS(),
	}
}

// raftTLS is mutual TLS between control nodes.
func (s *Server) raftTLS() *replica.RaftTLS {
	members := pki.Roles(pki.RoleControl)
	return &replica.RaftTLS{Server: s.cfg.TLS.Server(members), Client: s.cfg.TLS.Client(members)}
}

// Stop stops serving (letting requests in flight finish, up to
// ShutdownTimeout) and closes the state. Safe to call more than once.
func (s *Server) Stop() error {
	s.lifecycle.Lock()
	defer s.lifecycle.Unlock()
	return s.stopLocked()
}

// stopLocked is Stop with the lifecycle lock held. A leader hands its lead
// over first, so its group does not wait out an election timeout.
func (s *Server) stopLocked() error {
	s.stopPuller()
	if s.moveCancel != nil {
		s.moveCancel()
		<-s.moveDone
		s.moveCancel = nil
	}
	s.moves.stop() // before the backups' shard clients close
	if s.backupCancel != nil {
		s.backupCancel()
		<-s.backupDone
		s.backupCancel = nil
	}
	s.backups.stop()
	defer s.streamFwd.CloseIdleConnections()
	if s.dutyCancel != nil {
		s.dutyCancel()
		<-s.dutyDone
		s.dutyCancel = nil
	}
	if node, release, err := s.acquire(); err == nil {
		if err := node.TransferLeadership(); err != nil {
			s.log.Warn("control: hand over the lead", "err", err)
		}
		release()
	}
	var errs []error
	if s.ln != nil {
		if err := s.app.ShutdownWithTimeout(s.cfg.ShutdownTimeout); err != nil {
			errs = append(errs, fmt.Errorf("control: http shutdown: %w", err))
		}
		// Shutdown misses a listener that Listener had not registered yet;
		// closing it ourselves makes Listener return either way.
		if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, fmt.Errorf("control: close listener: %w", err))
		}
		if err := <-s.served; err != nil {
			errs = append(errs, fmt.Errorf("control: http: %w", err))
		}
		s.ln = nil
		s.addr.Store("")
	}
	errs = append(errs, s.closeNode())
	return errors.Join(errs...)
}

// startPuller starts the usage pull loop, which acts only while this node
// leads; a negative PullInterval meters nothing.
func (s *Server) startPuller() {
	if s.cfg.PullInterval < 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.puller, s.pullCancel, s.pullDone = newPuller(s), cancel, make(chan struct{})
	go func() {
		defer close(s.pullDone)
		s.puller.run(ctx, s.cfg.PullInterval, s.onPull)
	}()
}

// stopPuller ends the pull loop and waits for it, so no pull proposes to
// a closing node.
func (s *Server) stopPuller() {
	if s.pullCancel == nil {
		return
	}
	s.pullCancel()
	<-s.pullDone
	s.puller.close()
	s.pullCancel = nil
}

func (s *Server) closeNode() error {
	s.mu.Lock()
	node := s.node
	s.node = nil
	s.mu.Unlock()
	if node == nil {
		return nil
	}
	if err := node.Close(); err != nil {
		return fmt.Errorf("control: close state: %w", err)
	}
	return nil
}

// acquire returns the running node and a release function, or an error if
// the server is not running.
func (s *Server) acquire() (*replica.Node, func(), error) {
	s.mu.RLock()
	if s.node == nil {
		s.mu.RUnlock()
		return nil, nil, apierr.Retry(apierr.Unavailable, 1, "the control plane is not running")
	}
	return s.node, s.mu.RUnlock, nil
}

// Addr is the address the HTTP API listens on, once started.
func (s *Server) Addr() string {
	a, _ := s.addr.Load().(string)
	return a
}

// IsLeader reports whether this node leads the control plane's Raft group,
// for what it advertises in gossip.
// leadingTerm is the Raft term this node leads in, 0 when it does not lead.
func (s *Server) leadingTerm() uint64 {
	node, release, err := s.acquire()
	if err != nil {
		return 0
	}
	defer release()
	if !node.IsLeader() {
		return 0
	}
	return node.Term()
}

func (s *Server) IsLeader() bool {
	node, release, err := s.acquire()
	if err != nil {
		return false
	}
	defer release()
	return node.IsLeader()
}

// RaftAddr is the Raft transport's address, once started.
func (s *Server) RaftAddr() string {
	node, release, err := s.acquire()
	if err != nil {
		return ""
	}
	defer release()
	return node.RaftAddr()
}

// Placement is how create commands proposed now choose a shard: the
// configured shards with DefaultShardCapacity each, and every registered
// shard.
func (s *Server) placement() state.Placement {
	ids := make([]string, len(s.cfg.Shards))
	for i, sh := range s.cfg.Shards {
		ids[i] = sh.ID
	}
	return state.Placement{Shards: ids, StaticCapacity: DefaultShardCapacity}
}

// staticShard returns the configured shard with this id.
func (s *Server) staticShard(id string) (ShardInfo, bool) {
	for _, sh := range s.cfg.Shards {
		if sh.ID == id {
			return sh, true
		}
	}
	return ShardInfo{}, false
}

// newID makes an id: prefix and a lowercase ULID, so ids sort by creation.
func newID(prefix string) string {
	return prefix + strings.ToLower(ulid.Make().String())
}
