package control

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/jobbie/jobbie/control/api"
	"github.com/jobbie/jobbie/control/leader"
	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
)

// Server is a control plane node: the replicated state (state), the
// operations that propose to it (service, embedded: its Go methods are
// the node's), the leader's runners (leader) and the HTTP API (api).
type Server struct {
	*service.Service
	cfg    Config
	log    *slog.Logger
	reg    *replica.Registry
	api    *api.Server
	leader *leader.Leader

	lifecycle sync.Mutex // serializes Start and Stop
	started   bool
	ln        net.Listener
	addr      atomic.Value // string: ln's address while serving, read without the lifecycle lock
	served    chan error   // the API's Serve result
}

// New checks cfg and builds a Server; Start brings it up.
func New(cfg Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	store := cfg.BackupStore
	if store == nil {
		ds, err := backup.NewDirStore(filepath.Join(cfg.DataDir, "backups"))
		if err != nil {
			return nil, fmt.Errorf("control: backup store: %w", err)
		}
		store = ds
	}
	s := &Server{cfg: cfg, log: cfg.Logger.With("role", "control"), reg: state.NewRegistry()}
	svc, err := service.New(service.Config{NodeID: cfg.NodeID, Shards: cfg.Shards, SelfHostedCA: cfg.SelfHostedCA,
		SelfHostedCertValidity: cfg.SelfHostedCertValidity, TunnelURLs: cfg.TunnelURLs, Gossip: cfg.Gossip,
		Logger: cfg.Logger, Clock: cfg.Clock, BackupStore: store, BackupPolicyMinInterval: cfg.BackupPolicyMinInterval,
		AdvertisedHTTP: s.AdvertisedHTTP})
	if err != nil {
		return nil, err
	}
	s.Service = svc
	s.leader = leader.New(svc, leader.Config{NodeID: cfg.NodeID, TLS: cfg.TLS, Shards: cfg.Shards, Clock: cfg.Clock,
		Logger: cfg.Logger, PullInterval: cfg.PullInterval, PullTimeout: cfg.PullTimeout,
		BackupOrphanAfter: cfg.BackupOrphanAfter, BackupStore: store, AdvertisedHTTP: s.AdvertisedHTTP,
		AuditTrimInterval: cfg.AuditTrimInterval})
	svc.SetRunner(s.leader)
	s.api = api.New(svc, api.Config{NodeID: cfg.NodeID, TLS: cfg.TLS, Clock: cfg.Clock, Logger: cfg.Logger, AdvertisedHTTP: s.AdvertisedHTTP,
		Listening: s.listening})
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
	s.Attach(node)
	tcp, err := net.Listen("tcp", s.cfg.HTTPAddr)
	if err != nil {
		return errors.Join(fmt.Errorf("control: listen: %w", err), s.closeNode())
	}
	// Accept errors (EMFILE) are retried, and fail /readyz meanwhile:
	// fasthttp's Serve would return at the first and never accept again.
	// Certificates are optional on the handshake: the operator API takes
	// operator keys; every internal route requires its callers' roles.
	// A connection that sends nothing is closed without an answer.
	rl := listen.New(tcp, listen.Config{Name: "internal", Group: s.cfg.Listeners, Logger: s.log})
	ln := apierr.QuietListener(tls.NewListener(rl, s.cfg.TLS.ServerCertOptional()))
	s.ln = ln
	s.addr.Store(ln.Addr().String())
	s.served = make(chan error, 1)
	go func() { s.served <- s.api.Serve(ln) }()
	if !node.HasState() && len(s.cfg.Join) > 0 {
		if err := s.join(ctx, node); err != nil {
			return errors.Join(err, s.stopLocked())
		}
	}
	if s.alone(node) {
		if err := node.WaitLeader(ctx); err != nil {
			return errors.Join(fmt.Errorf("control: wait for leadership: %w", err), s.stopLocked())
		}
		if err := s.EnsureSigningKey(ctx); err != nil {
			return errors.Join(err, s.stopLocked())
		}
		if err := s.RecordMemberHTTP(ctx, s.cfg.NodeID, s.AdvertisedHTTP()); err != nil {
			return errors.Join(err, s.stopLocked())
		}
	}
	s.leader.Start(node)
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
		Listeners:         s.cfg.Listeners,
	}
}

// listening is the first of the group's listeners that cannot accept,
// for /readyz; nil while all can.
func (s *Server) listening() error {
	if f := s.cfg.Listeners.Failing(); f != nil {
		return f
	}
	return nil
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
	s.leader.Stop()
	if node, release, err := s.Acquire(); err == nil {
		if err := node.TransferLeadership(); err != nil {
			s.log.Warn("control: hand over the lead", "err", err)
		}
		release()
	}
	var errs []error
	if s.ln != nil {
		if err := s.api.Shutdown(s.cfg.ShutdownTimeout); err != nil {
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

func (s *Server) closeNode() error {
	node := s.Detach()
	if node == nil {
		return nil
	}
	if err := node.Close(); err != nil {
		return fmt.Errorf("control: close state: %w", err)
	}
	return nil
}

// Addr is the address the HTTP API listens on, once started.
func (s *Server) Addr() string {
	a, _ := s.addr.Load().(string)
	return a
}

// RaftAddr is the Raft transport's address, once started.
func (s *Server) RaftAddr() string {
	node, release, err := s.Acquire()
	if err != nil {
		return ""
	}
	defer release()
	return node.RaftAddr()
}

// Membership reports whether this node is a member of the latest
// configuration it knows, whether it knows one, and whether Raft stopped
// itself (a leader that applied its own removal); see replica.Node.
func (s *Server) Membership() (member, known, stopped bool) {
	node, release, err := s.Acquire()
	if err != nil {
		return false, false, false
	}
	defer release()
	return node.Membership()
}

// AdvertisedHTTP is the address other nodes reach this node's HTTP API on.
func (s *Server) AdvertisedHTTP() string {
	if s.cfg.AdvertiseHTTP != "" {
		return s.cfg.AdvertiseHTTP
	}
	return s.Addr()
}
