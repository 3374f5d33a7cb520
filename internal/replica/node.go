package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
)

// logCacheEntries is how many of the last entries stored Raft reads from
// memory rather than the log (startRaft). Entries are mostly tens of KiB
// (Config.EntryBytes of commands, or their effects compressed), and a
// follower in step needs only the last few. The entries a follower
// received are its own copies: the transport decodes each into new bytes.
// On the leader a cached entry keeps its whole future (the commands'
// outcomes) alive: 64 held some 20 MB more at the peak of a one-node
// stream load than none, so a few more than a follower lags in step.
const logCacheEntries = 16

// ErrNotLeader is returned by Propose on a node that is not the leader:
// the command was not appended, so sending it again is safe.
var ErrNotLeader = errors.New("replica: not the leader")

// ErrLeadershipLost is returned by Propose when the leader lost its lead
// after appending the command: a new leader may still commit it, so the
// outcome is unknown and a blind retry could apply it twice.
var ErrLeadershipLost = errors.New("replica: leadership lost; the command may or may not be applied")

// ErrClosed is returned by Propose after Close.
var ErrClosed = errors.New("replica: closed")

// Node is one member of a replicated state machine.
type Node struct {
	cfg   Config
	db    *pebble.DB
	fsm   *fsm
	raft  *raft.Raft
	logs  *wal.WAL
	meta  *metadb.BoltMetaDB // WAL.Close leaves it open; we close it
	trans *raft.NetworkTransport
	snaps *raft.FileSnapshotStore

	hadState bool // Raft state existed when the node opened

	adm      *admission // admit.go
	inflight chan *flight
	slots    chan struct{} // one per entry in Raft (Config.Inflight)
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	closed   bool

	lead     leadership // leader.go
	contacts contacts   // contact.go

	tokens uint64 // the last evaluation's token (effects.go); batchLoop only

	logReads atomic.Uint64 // entries Raft read from the log, past its cache (logStore)
}

type proposal struct {
	cmd  []byte
	done chan result
}

type result struct {
	val any
	err error
}

type flight struct {
	f     raft.ApplyFuture
	batch []*proposal
	token uint64 // the evaluation of an effects entry (effects.go); 0 for commands
}

// Open opens (or creates) the node's state and starts Raft.
func Open(cfg Config, reg *Registry) (*Node, error) {
	cfg = cfg.withDefaults()
	if cfg.Dir == "" {
		return nil, errors.New("replica: Config.Dir is required")
	}
	if cfg.Effects && cfg.Inflight > 1 {
		// The next entry would have to be evaluated over the uncommitted
		// batch of the one before.
		return nil, errors.New("replica: Config.Effects needs Config.Inflight 1")
	}
	raftDir := filepath.Join(cfg.Dir, "raft")
	walDir := filepath.Join(raftDir, "wal")
	if err := os.MkdirAll(walDir, 0o755); err != nil {
		return nil, fmt.Errorf("replica: %w", err)
	}
	// Checkpoints and restores in progress when the process died are of no
	// use: a snapshot is taken again, a restore is sent again.
	if err := resetDir(filepath.Join(cfg.Dir, tmpDirName)); err != nil {
		return nil, fmt.Errorf("replica: %w", err)
	}
	cache := StateCache(cfg.CacheSize)
	defer cache.Unref() // the DB holds its own reference
	opts := StateOptions()
	opts.Cache = cache
	db, err := pebble.Open(filepath.Join(cfg.Dir, "state"), opts)
	if err != nil {
		return nil, fmt.Errorf("replica: open pebble: %w", err)
	}
	if err := upgradeStore(db, cfg.Dir, reg.format); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("replica: %w", err)
	}
	n := &Node{cfg: cfg, db: db, adm: newAdmission(cfg), inflight: make(chan *flight, cfg.Inflight), slots: make(chan struct{}, cfg.Inflight), stop: make(chan struct{})}
	n.lead.init()
	// Tokens tell this node's evaluations apart from any other node's and
	// from those of its earlier runs, whose entries may still be in the log.
	n.tokens = rand.Uint64()
	if err := n.startRaft(raftDir, walDir, reg); err != nil {
		n.closeStores(false)
		return nil, err
	}
	n.observeContacts()
	n.wg.Add(3)
	go n.batchLoop()
	go n.resolveLoop()
	go n.watchLeadership()
	return n, nil
}

func (n *Node) startRaft(raftDir, walDir string, reg *Registry) error {
	f, err := newFSM(n.db, reg, filepath.Join(n.cfg.Dir, tmpDirName))
	if err != nil {
		return err
	}
	f.observer = n.observeApply
	n.fsm = f
	n.meta = &metadb.BoltMetaDB{}
	var logs *wal.WAL
	if n.cfg.Fast {
		logs, err = wal.Open(walDir, wal.WithMetaStore(n.meta), wal.WithSegmentFiler(noSyncFiler(walDir)))
	} else {
		logs, err = wal.Open(walDir, wal.WithMetaStore(n.meta))
	}
	if err != nil {
		return fmt.Errorf("replica: open raft log: %w", err)
	}
	n.logs = logs
	snaps, err := raft.NewFileSnapshotStoreWithLogger(raftDir, 2, n.cfg.Logger)
	if err != nil {
		return fmt.Errorf("replica: snapshot store: %w", err)
	}
	n.snaps = snaps
	store := logStore{WAL: logs, reads: &n.logReads}
	if n.hadState, err = raft.HasExistingState(store, logs, snaps); err != nil {
		return fmt.Errorf("replica: check state: %w", err)
	}
	restore, err := needsRestore(store, snaps, f.applied.Load())
	if err != nil {
		return err
	}
	trans, err := n.transport()
	if err != nil {
		return err
	}
	n.trans = trans
	rc := n.raftConfig()
	// Pebble on disk already holds the state, unless a snapshot install
	// was cut short (see needsRestore).
	rc.NoSnapshotRestoreOnStart = !restore
	// The last entries stored are kept in memory: the leader sends each to
	// every follower and a follower applies each, and raft reads them back
	// from the store for both, which decodes and copies them out of the
	// log again (four times an entry on the leader of three).
	cached, err := raft.NewLogCache(logCacheEntries, store)
	if err != nil {
		return fmt.Errorf("replica: log cache: %w", err)
	}
	r, err := raft.NewRaft(rc, f, cached, logs, snaps, unpipelined{trans})
	if err != nil {
		return fmt.Errorf("replica: start raft: %w", err)
	}
	n.raft = r
	if n.cfg.Bootstrap && !n.hadState {
		cf := r.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: trans.LocalAddr()}}})
		if err := cf.Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			return fmt.Errorf("replica: bootstrap: %w", err)
		}
	}
	return nil
}

func hasZeroPort(hostport string) bool {
	_, p, err := net.SplitHostPort(hostport)
	return err == nil && p == "0"
}

func (n *Node) raftConfig() *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(n.cfg.NodeID)
	rc.Logger = n.cfg.Logger
	rc.HeartbeatTimeout = n.cfg.HeartbeatTimeout
	rc.ElectionTimeout = n.cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = n.cfg.HeartbeatTimeout / 2
	rc.SnapshotInterval = n.cfg.SnapshotInterval
	rc.SnapshotThreshold = n.cfg.SnapshotThreshold
	rc.TrailingLogs = n.cfg.TrailingLogs
	rc.BatchApplyCh = true
	rc.MaxAppendEntries = 256
	return rc
}

// Subject names the group in errors (Config.Subject).
func (n *Node) Subject() string { return n.cfg.Subject }

// ProposeError maps a replication failure of this node (from Propose,
// AddVoter, RemoveServer…) to the error catalog, as Op.Propose does.
func (n *Node) ProposeError(err error) error { return proposeError(n.cfg.Subject, err) }

// Restores is how many snapshots replaced the state since the node
// opened: a loop that keeps its own view of the state starts over when it
// moves.
func (n *Node) Restores() uint64 { return n.fsm.restores.Load() }

// Redos is how many groups were applied again because a refused command
// had already written (see fsm.applyGroup): a handler that should check
// before it writes.
func (n *Node) Redos() uint64 { return n.fsm.redos.Load() }

// HasState reports whether the node found Raft state on disk when it
// opened: a node without it and without Bootstrap must be added by the
// leader before it does anything.
func (n *Node) HasState() bool { return n.hadState }

// DB is the node's Pebble database, for reads. Never write to it directly.
func (n *Node) DB() *pebble.DB { return n.db }

// Raft exposes the Raft instance for membership and status.
func (n *Node) Raft() *raft.Raft { return n.raft }

// RaftAddr is the address the Raft transport listens on.
func (n *Node) RaftAddr() string { return string(n.trans.LocalAddr()) }

// AppliedIndex is the last log index applied to the state.
func (n *Node) AppliedIndex() uint64 { return n.fsm.applied.Load() }

// Propose replicates cmd and returns the handler's result or the business
// error that refused it; replication failures are ErrNotLeader,
// ErrLeadershipLost, ErrClosed, ErrKeyBusy, ErrBusy or the context's
// error. Concurrent proposals are packed into shared entries (group
// commit), taken from each fairness key in turn (WithFairKey, admit.go).
// Op.Propose is the typed way in.
func (n *Node) Propose(ctx context.Context, cmd []byte) (any, error) {
	if n.raft.State() != raft.Leader {
		return nil, ErrNotLeader
	}
	p := &proposal{cmd: cmd, done: make(chan result, 1)}
	if err := n.adm.add(ctx, FairKey(ctx), p, n.stop); err != nil {
		n.observeRefusal(err)
		return nil, err
	}
	// Once queued, the outcome is decided by the log, not by ctx: waiting
	// here keeps a caller from reporting failure for a write that commits.
	r := <-p.done
	return r.val, r.err
}

// batchLoop makes Raft entries of what waits in admission. It takes an
// entry's commands only once the entry can go into Raft (at most
// Config.Inflight entries are in it, each of at most Config.EntryBytes),
// so what a flood sends beyond that waits in admission, where the keys
// take turns, and a quiet key's command finds at most those few entries
// ahead of it rather than the whole flood.
func (n *Node) batchLoop() {
	defer n.wg.Done()
	defer close(n.inflight)
	cmds := make([][]byte, 0, n.cfg.BatchMax)
	pending := pendingProposals.WithLabelValues(n.cfg.Name)
	for {
		select {
		case n.slots <- struct{}{}:
		case <-n.stop:
			n.failPending()
			return
		}
		var batch []*proposal
		for {
			var left int
			batch, left = n.adm.take(n.cfg.BatchMax, n.cfg.EntryBytes)
			pending.Set(float64(left))
			if len(batch) > 0 {
				break
			}
			select {
			case <-n.adm.ready:
			case <-n.stop:
				n.failPending()
				return
			}
		}
		cmds = cmds[:0]
		for _, p := range batch {
			cmds = append(cmds, p.cmd)
		}
		now := n.cfg.Clock.Now().UnixNano()
		var entry []byte
		var token uint64
		if n.cfg.Effects && n.othersReadEffects() {
			n.tokens++
			if token = n.tokens; token == 0 {
				token, n.tokens = 1, 1
			}
			entry = n.evaluate(now, cmds, token)
		}
		if entry == nil { // commands, or a leader not yet ready to evaluate
			entry, token = encodeEntry(now, cmds), 0
		}
		f := n.raft.Apply(entry, 10*time.Second)
		n.inflight <- &flight{f: f, batch: batch, token: token}
	}
}

func (n *Node) resolveLoop() {
	defer n.wg.Done()
	for fl := range n.inflight {
		err := raftError(fl.f.Error())
		if err != nil && fl.token != 0 {
			n.fsm.discard(fl.token) // before the next entry is evaluated
		}
		<-n.slots // the entry is out of Raft: the next may go in
		if err == nil {
			switch v := fl.f.Response().(type) {
			case error:
				err = v // refused whole (effects.go)
			case []Outcome:
			default:
				if fl.token != 0 { // applied, but not as this node's evaluation: unknown
					err = ErrLeadershipLost
				}
			}
		}
		if err != nil {
			for _, p := range fl.batch {
				p.done <- result{err: err}
			}
			continue
		}
		outs, _ := fl.f.Response().([]Outcome)
		for i, p := range fl.batch {
			var r result
			if i < len(outs) {
				r = result{val: outs[i].Value, err: outs[i].Err}
			}
			p.done <- r
		}
	}
}

// failPending refuses what is still queued and whatever comes later.
func (n *Node) failPending() {
	for _, p := range n.adm.close() {
		p.done <- result{err: ErrClosed}
	}
}

// Snapshot asks Raft to take a snapshot now, which also compacts the log
// down to TrailingLogs entries. Nothing new since the last one is not an
// error.
func (n *Node) Snapshot() error {
	err := n.raft.Snapshot().Error()
	if errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil
	}
	return err
}

// Close stops Raft and closes the state. Safe to call twice.
func (n *Node) Close() error { return n.shutdown(true) }

// shutdown stops the node; without flush it leaves Pebble as a crash would.
func (n *Node) shutdown(flush bool) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.mu.Unlock()
	close(n.stop)
	n.wg.Wait()
	// The leadership loop's barriers end while Raft still runs: it
	// answers every barrier it took off its queue, but one still queued
	// when it shuts down is never answered, and waiting for it then hung
	// a closing node for good.
	n.lead.bg.Wait()
	return n.closeStores(flush)
}

// closeStores shuts down whatever Open got as far as starting.
func (n *Node) closeStores(flush bool) error {
	var errs []error
	if n.raft != nil {
		// Shutdown closes the transport, whose stream waits for the
		// handlers of inbound connections (stream.go): none is left inside
		// raft when the stores below close.
		if err := n.raft.Shutdown().Error(); err != nil {
			errs = append(errs, err)
		}
	}
	if n.trans != nil {
		// Close the pooled connections to peers too (the transport's Close
		// ends only what it accepted), so their handlers of our streams end
		// now. Without raft (Open failed before it started) this Close is
		// the first, and it too waits for the inbound handlers.
		n.trans.CloseStreams()
		if err := n.trans.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if n.logs != nil {
		if err := n.logs.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if n.meta != nil {
		if err := n.meta.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	// Raft has stopped applying: an evaluation still waiting for its entry
	// never applies here now.
	if n.fsm != nil {
		n.fsm.mu.Lock()
		n.fsm.closeOwn()
		n.fsm.mu.Unlock()
	}
	// Flushing the memtables spares the next start from applying them
	// again from the log.
	if flush {
		if err := n.db.Flush(); err != nil {
			errs = append(errs, fmt.Errorf("replica: flush state: %w", err))
		}
	}
	if err := n.db.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// StateOptions are the Pebble options of a node's state, for benchmarks
// of a state machine that want the node's behaviour (Open adds the block
// cache, StateCache). Large memtables let a job's short-lived keys (its pending and
// lease index entries, its record's rewrites) meet their deletion in
// memory, so far less reaches disk and compaction. What a flush still
// writes is mostly tombstones, and every flush spans the whole key range,
// so each compaction out of L0 rewrites the base level's kept records
// (finished jobs until retention) to drop them: compacting at 16 L0
// sublevels (16 such flushes) rather than Pebble's 4 rewrites those a
// quarter as often, and the apply's reads over the longer L0 measured no
// dearer (docs/BENCHMARKS.md, "A follower's cost" for 8, "Compacting L0
// at 16" for 16; 32 was cheaper still for writes, but every read that
// misses the memtables looks into each sublevel); writes stall at 48,
// three times that, as Pebble's defaults do. Blocks of 32 KiB rather than 4:
// a table's writer hands the file one block at a time, each a write
// call, and writing tables is most of what flushes and compactions cost
// past the merge itself (a member applying effects: 5.3 → 4.7 µs a job
// with the compaction that follows, docs/BENCHMARKS.md "The store's write path");
// a read that misses the cache decodes more. No Pebble WAL:
// the Raft log already holds every entry, and what a crash takes from the
// memtables is applied again from it (see doc.go).
func StateOptions() *pebble.Options {
	o := &pebble.Options{Logger: quietPebble{}, MemTableSize: 64 << 20, MemTableStopWritesThreshold: 4, DisableWAL: true,
		L0CompactionThreshold: 16, L0StopWritesThreshold: 48, Levels: []pebble.LevelOptions{{BlockSize: 32 << 10}}}
	o.Experimental.SingleDeleteInvariantViolationCallback = singleDeleteMetTwoSets
	return o
}

// StateCache is the cache a node's state opens with, to keep blocks
// (blockBytes of them) beside its memtables: Pebble reserves every
// memtable's memory from the cache it is given, and a node holds two at
// full size (the one written, and the last flushed, kept for reuse), so a
// cache of blockBytes alone was all reserved and kept no block (measured:
// 1.5 % of reads hit, docs/BENCHMARKS.md "The store's write path"). While
// flushes fall behind, the memtables queued take their memory from the
// blocks, so the node's peak is what it was.
func StateCache(blockBytes int64) *pebble.Cache {
	return pebble.NewCache(blockBytes + 2*int64(StateOptions().MemTableSize))
}

// quietPebble drops Pebble's informational logging.
type quietPebble struct{}

func (quietPebble) Infof(string, ...any) {}
func (quietPebble) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}
func (quietPebble) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
	os.Exit(1)
}

var _ io.Closer = (*Node)(nil)
