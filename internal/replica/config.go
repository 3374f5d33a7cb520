package replica

import (
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/internal/listen"
)

// Config configures a Node. Zero values take the defaults in comments.
type Config struct {
	Dir  string // required: holds raft/ and state/
	Name string // the group's name in metrics, e.g. "shard s1"; default "default"
	// Subject names the group in the errors callers see, e.g. "this shard";
	// default "this group".
	Subject  string
	NodeID   string // default "node1"
	RaftAddr string // address to bind for Raft; default 127.0.0.1:0
	// RaftAdvertise is the address other members dial to reach this node,
	// when it differs from RaftAddr (a 0.0.0.0 bind, NAT). Default: the
	// bound address.
	RaftAdvertise string
	// RaftTLS, when set, makes the Raft transport mutual TLS.
	RaftTLS *RaftTLS
	// Listeners is told while the Raft listener cannot accept (the
	// process's /readyz asks it); nil: no one.
	Listeners *listen.Group
	// Bootstrap makes a node with no Raft state the single voter of a new
	// group. A node without it waits to be added by the leader (AddVoter).
	// Either way a node with state resumes from it and ignores the flag.
	Bootstrap bool
	BatchMax  int // most commands in one Raft entry; default 512
	// EntryBytes bounds the command bytes of one Raft entry (an entry
	// holds at least one command, however large); default 32 KiB. With
	// Inflight it bounds what a proposal can find ahead of it in the
	// pipeline, so a flood waits in admission, where keys take turns,
	// and not in Raft, where a quiet key's command would wait behind
	// all of it (node.go, batchLoop).
	EntryBytes int
	CacheSize  int64 // Pebble block cache in bytes, beside the memtables (StateCache); default 128 MiB
	// Inflight is how many entries may be in Raft at once; default 1: the
	// next entry is made while the one before commits, from whatever
	// came meanwhile, in turns (docs/BENCHMARKS.md, "Noisy neighbour").
	Inflight int
	// Fast skips the fsync of the Raft log on every append (see fastlog.go):
	// an acknowledged write survives a process crash, and the loss of a
	// minority of machines, but not a power cut that takes down a majority
	// at once. Default false: durable, one fsync per group commit.
	Fast bool
	// Effects makes the leader run each entry's commands before it
	// proposes it and propose what they wrote (effects.go), so that the
	// other members apply a batch instead of running the commands. It
	// needs Inflight 1. Default false: entries carry the commands. Either
	// way every member applies entries of both kinds. Even with it the
	// leader proposes commands while it has no other member (a lone
	// member's log is only replayed, and commands are smaller) or while
	// EffectsReader doubts one.
	Effects bool
	// EffectsReader reports whether the member nodeID is known to run a
	// build that applies effects entries (one that advertises EntryFormat
	// 2 or more): a member that cannot stops at the first one. Nil: every
	// member can (a group whose members all run one build).
	EffectsReader func(nodeID string) bool

	Logger hclog.Logger
	// Clock stamps every entry the leader proposes (the time handlers
	// see as Tx.Now); default the real clock. Tests replace it.
	Clock clockwork.Clock
	// Observe, if set, is told each applied group's command count and time.
	Observe func(cmds int, d time.Duration)
	// Timings; defaults suit a LAN: 500ms heartbeat and election, 250ms lease.
	HeartbeatTimeout  time.Duration
	ElectionTimeout   time.Duration
	SnapshotInterval  time.Duration // how often to check whether to snapshot; default 2m
	SnapshotThreshold uint64        // log entries since the last snapshot that make a new one; default 8192
	// TrailingLogs is how many entries the log keeps behind a snapshot, so
	// a follower that is only a little behind catches up from the log
	// instead of a whole snapshot; default 10240.
	TrailingLogs uint64

	// Admission of proposals into Raft entries (admit.go). Proposals wait
	// in one queue per fairness key (WithFairKey) and entries take from
	// the keys in turn. MaxPending bounds the proposals waiting in all
	// (default 4096), MaxPendingPerKey those of one key of weight 1
	// (default MaxPending/4); a proposal that finds its key's share or the
	// whole queue full waits up to AdmitWait for room (default 1s;
	// negative: not at all), then gets ErrKeyBusy or ErrBusy.
	MaxPending       int
	MaxPendingPerKey int
	AdmitWait        time.Duration
	// FairWeight, if set, is a key's weight (default 1; at most 1000): a
	// key of weight w is admitted w times the bytes of a key of weight 1
	// per turn and may hold w times MaxPendingPerKey. It is called with
	// the queue locked when a key starts waiting, so it must be quick and
	// must not propose.
	FairWeight func(key string) int
	// UnfairAdmission puts every proposal in one FIFO queue whatever its
	// key, as before fair admission: for measuring what fairness changes.
	UnfairAdmission bool
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = "default"
	}
	if c.Subject == "" {
		c.Subject = "this group"
	}
	if c.NodeID == "" {
		c.NodeID = "node1"
	}
	if c.RaftAddr == "" {
		c.RaftAddr = "127.0.0.1:0"
	}
	if c.BatchMax <= 0 {
		c.BatchMax = 512
	}
	if c.EntryBytes <= 0 {
		c.EntryBytes = 32 << 10
	}
	if c.Inflight <= 0 {
		c.Inflight = 1
	}
	if c.CacheSize <= 0 {
		c.CacheSize = 128 << 20
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	if c.Logger == nil {
		c.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: os.Stderr})
	}
	if c.HeartbeatTimeout == 0 {
		c.HeartbeatTimeout = 500 * time.Millisecond
	}
	if c.ElectionTimeout == 0 {
		c.ElectionTimeout = 500 * time.Millisecond
	}
	if c.SnapshotInterval == 0 {
		c.SnapshotInterval = 2 * time.Minute
	}
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = 8192
	}
	if c.TrailingLogs == 0 {
		c.TrailingLogs = 10240
	}
	if c.MaxPending <= 0 {
		c.MaxPending = 4096 // the depth of the single queue before fair admission
	}
	if c.MaxPendingPerKey <= 0 {
		c.MaxPendingPerKey = max(c.MaxPending/4, 1)
	}
	if c.AdmitWait == 0 {
		c.AdmitWait = time.Second
	}
	return c
}
