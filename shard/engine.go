package shard

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/oklog/ulid/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/tenancy"
)

// Engine is the job engine of one shard node: its replicated state, its
// waiters and its leader loop.
type Engine struct {
	cfg     Config
	node    *replica.Node
	waiters *waiters
	heads   pendingHeads     // FSM goroutine only
	queues  *queueCache      // queue records, written once per batch
	jobs    *jobCache        // FSM goroutine only: recent job records
	floors  *timeFloors      // written by applies, taken by the sweep loop
	swept   map[string]int64 // sweep loop only: live keys at or below are gone

	observers []moveObserver // lifecycle observers, registered in registry()
	events    *eventHub      // recent lifecycle events per namespace (events.go)
	workers   *workerSet     // workers seen per namespace (workers.go)

	idMu    sync.Mutex
	entropy io.Reader

	bulkKick chan struct{} // wakes bulkLoop for a new operation

	stop chan struct{}
	wg   sync.WaitGroup
}

// OpenEngine opens the node's state and starts Raft and the sweep loop.
func OpenEngine(cfg Config) (*Engine, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:      cfg,
		waiters:  newWaiters(),
		entropy:  ulid.Monotonic(rand.Reader, 0),
		stop:     make(chan struct{}),
		bulkKick: make(chan struct{}, 1),
	}
	raftLog := slog.NewLogLogger(cfg.Logger.With("component", "raft", "shard", cfg.ShardID).Handler(), slog.LevelWarn)
	node, err := replica.Open(replica.Config{
		Dir:       cfg.DataDir,
		Name:      "shard " + cfg.ShardID,
		NodeID:    cfg.NodeID,
		RaftAddr:  cfg.RaftAddr,
		Bootstrap: cfg.Bootstrap,
		Logger:    hclog.FromStandardLogger(raftLog, &hclog.LoggerOptions{Name: "raft", Level: hclog.Warn}),

		RaftAdvertise: cfg.RaftAdvertise, Fast: cfg.Fast, HeartbeatTimeout: cfg.RaftTimeout, ElectionTimeout: cfg.RaftTimeout,
		SnapshotThreshold: cfg.SnapshotThreshold, TrailingLogs: cfg.TrailingLogs,
	}, e.registry())
	if err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	e.node = node
	e.events.startAt(node.AppliedIndex())
	engines.add(e)
	e.wg.Add(2)
	go e.sweepLoop()
	go e.bulkLoop()
	return e, nil
}

// WaitLeader blocks until this node leads and has applied its log.
func (e *Engine) WaitLeader(ctx context.Context) error { return e.node.WaitLeader(ctx) }

// IsLeader reports whether this node leads its shard now.
func (e *Engine) IsLeader() bool { return e.node.IsLeader() }

// Close stops the loop and closes the state.
func (e *Engine) Close() error {
	select {
	case <-e.stop:
		return nil
	default:
	}
	close(e.stop)
	e.wg.Wait()
	engines.remove(e)
	return e.node.Close()
}

// newID returns a new, time-ordered job id. Ids are made by the proposer,
// never in apply, so every replica stores the same id.
func (e *Engine) newID(prefix string) string {
	e.idMu.Lock()
	id := ulid.MustNew(ulid.Now(), e.entropy)
	e.idMu.Unlock()
	return prefix + id.String()
}

// propose replicates a command and returns its handler's result, turning a
// business failure returned by the handler into an error.
func (e *Engine) propose(ctx context.Context, t replica.CommandType, c any) (any, error) {
	res, err := e.node.Propose(ctx, replica.Command(t, encode(c)))
	if err != nil {
		return nil, proposeError(err)
	}
	return res, nil
}

func proposeError(err error) error {
	var ae *apierr.Error
	switch {
	case errors.As(err, &ae):
		return err
	case errors.Is(err, replica.ErrNotLeader):
		return apierr.Retry(apierr.NoLeader, 1, "this shard has no leader yet; retry shortly")
	case errors.Is(err, replica.ErrLeadershipLost):
		return apierr.Retry(apierr.Unavailable, 1, "the shard changed leader while this request was being replicated: it may or may not have been applied; check before sending it again")
	case errors.Is(err, replica.ErrClosed):
		return apierr.Retry(apierr.Unavailable, 1, "this shard node is shutting down")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierr.Retry(apierr.Unavailable, 1, "request ended before it was replicated")
	}
	return fmt.Errorf("shard: propose: %w", err)
}

// namespaceOK validates a shard namespace key: every key the engine writes
// starts with it, so it must have the one shape tenancy defines.
func namespaceOK(ns string) error {
	if _, _, err := tenancy.ParseShardNamespace(ns); err != nil {
		return apierr.Field(NamespaceHeader, "missing or malformed shard namespace: %v", err)
	}
	return nil
}
