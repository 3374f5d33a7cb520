package leader

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/service"
)

// Config configures the loops. Zero values take the defaults in comments.
type Config struct {
	SweepInterval time.Duration // default 100ms
	UsageInterval time.Duration // how often usage is swept (engine.UsageSweep); default 10s
	BulkInterval  time.Duration // how often running bulk operations are looked for; default 1s
	// EventTrimInterval is how often each namespace's event log is
	// trimmed to its plan's retention (engine.EventTrim); default 10s.
	EventTrimInterval time.Duration
	// EventRetention is the retention of a namespace whose plan never
	// said one (service.EventRetention); default
	// engine.DefaultEventRetention.
	EventRetention engine.EventRetention
	// HistoryInterval is how often the busy queues' depth and oldest age
	// are recorded in their history (engine.HistorySample); default 15s,
	// so a minute bucket's sample is at most that far from its end.
	HistoryInterval time.Duration
	// HistoryTrimInterval is how often old history buckets are trimmed
	// (engine.HistoryTrim); default 10m.
	HistoryTrimInterval time.Duration
	RestoreIdle         time.Duration // a restore nothing drives is aborted after this long without a chunk; default 10m
	// AlertInterval is how often the alert rules are evaluated (alerts.go);
	// default DefaultAlertInterval.
	AlertInterval time.Duration
	// LastFetch is when this node last answered a pull fetch of a queue
	// (live.Workers.LastFetch): no_worker rules measure from it.
	LastFetch func(ns, queue string) time.Time
	Clock     clockwork.Clock // default the real clock
	Logger    *slog.Logger    // default slog.Default()
}

func (c Config) withDefaults() Config {
	if c.SweepInterval == 0 {
		c.SweepInterval = 100 * time.Millisecond
	}
	if c.UsageInterval == 0 {
		c.UsageInterval = 10 * time.Second
	}
	if c.EventTrimInterval == 0 {
		c.EventTrimInterval = 10 * time.Second
	}
	if c.EventRetention == (engine.EventRetention{}) {
		c.EventRetention = engine.DefaultEventRetention
	}
	if c.HistoryInterval == 0 {
		c.HistoryInterval = 15 * time.Second
	}
	if c.HistoryTrimInterval == 0 {
		c.HistoryTrimInterval = 10 * time.Minute
	}
	if c.BulkInterval == 0 {
		c.BulkInterval = time.Second
	}
	if c.AlertInterval == 0 {
		c.AlertInterval = DefaultAlertInterval
	}
	if c.RestoreIdle == 0 {
		c.RestoreIdle = DefaultRestoreIdle
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Loops are a node's leader-only loops. They run on every node and act
// only while it leads (replica.Node.IsLeader, true once the leader has
// applied every earlier entry).
type Loops struct {
	cfg  Config
	eng  *engine.Engine
	node *replica.Node
	svc  *service.Service

	swept   map[string]int64 // sweep loop only: live keys at or below are gone
	usageAt int64            // sweep loop only: when this node, leading, last swept usage (0: not since it leads)
	trimAt  int64            // sweep loop only: when this node, leading, last trimmed the event logs (0: not since it leads)

	sampleAt, historyTrimAt int64 // sweep loop only: when this node, leading, last sampled and trimmed history (0: not since it leads)

	stop chan struct{}
	wg   sync.WaitGroup
}

// Start starts the loops; Stop ends them.
func Start(cfg Config, eng *engine.Engine, node *replica.Node, svc *service.Service) *Loops {
	l := &Loops{cfg: cfg.withDefaults(), eng: eng, node: node, svc: svc, swept: map[string]int64{}, stop: make(chan struct{})}
	l.wg.Add(3)
	go l.sweepLoop()
	go l.bulkLoop()
	go l.alertLoop()
	return l
}

// Stop ends the loops and waits for them.
func (l *Loops) Stop() {
	select {
	case <-l.stop:
		return
	default:
	}
	close(l.stop)
	l.wg.Wait()
}

// sweepLoop sweeps every tick while this node leads.
func (l *Loops) sweepLoop() {
	defer l.wg.Done()
	t := l.cfg.Clock.NewTicker(l.cfg.SweepInterval)
	defer t.Stop()
	restores, term := l.node.Restores(), uint64(0)
	for {
		select {
		case <-l.stop:
			return
		case <-t.Chan():
		}
		if !l.node.IsLeader() {
			l.usageAt, l.trimAt, l.sampleAt, l.historyTrimAt = 0, 0, 0, 0
			l.svc.DropMoveSessions(time.Time{}) // a move's next delta goes to the new leader, and starts over
			continue
		}
		l.svc.DropMoveSessions(l.cfg.Clock.Now().Add(-service.MoveSessionIdle))
		if r := l.node.Restores(); r != restores {
			restores, l.swept = r, map[string]int64{} // a snapshot replaced the state: sweep from the bottom
		}
		if t := l.node.Term(); t != term {
			// A term of its own sweeps from the bottom too: while this node
			// followed, entries it applied as the leader's effects
			// (replica Config.Effects) ran no handler here and lowered none
			// of its floors.
			term, l.swept = t, map[string]int64{}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		now := l.cfg.Clock.Now().UnixNano()
		if err := l.sweepUsage(ctx, now); err != nil {
			l.cfg.Logger.Warn("shard usage sweep", "err", err)
		}
		if err := l.sweepEvents(ctx, now); err != nil {
			l.cfg.Logger.Warn("shard event log trim", "err", err)
		}
		if err := l.sweepHistory(ctx, now); err != nil {
			l.cfg.Logger.Warn("shard queue history", "err", err)
		}
		if err := l.sweepOnce(ctx, now); err != nil {
			l.cfg.Logger.Warn("shard sweep", "err", err)
		}
		l.sweepRestores(ctx, now)
		cancel()
	}
}

// sweepUsage proposes a usage sweep every UsageInterval, and at once when
// this node starts leading: the first on a new shard starts metering
// before anything the loops propose creates a job.
func (l *Loops) sweepUsage(ctx context.Context, now int64) error {
	if l.usageAt != 0 && now-l.usageAt < int64(l.cfg.UsageInterval) {
		return nil
	}
	if _, err := engine.UsageSweep.Propose(ctx, l.node, &engine.UsageSweepCmd{}); err != nil {
		return err
	}
	l.usageAt = now
	return nil
}

// bulkLoop runs the background bulk operations while this node leads, in
// rounds (bulkRound) until none is left running. Everything a step needs
// is in the operation's record, so a new leader resumes where the last
// committed step left off.
func (l *Loops) bulkLoop() {
	defer l.wg.Done()
	t := l.cfg.Clock.NewTicker(l.cfg.BulkInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.Chan():
		case <-l.svc.BulkKicks():
		}
		for l.node.IsLeader() && l.bulkRound() {
			select {
			case <-l.stop:
				return
			default:
			}
		}
	}
}

// bulkRound takes one step of each operation bulkTurns picks. It reports
// whether any operation is still running; false too when a step failed
// (this node stopped leading).
func (l *Loops) bulkRound() bool {
	running := l.svc.RunningBulkOps()
	turns := bulkTurns(running)
	more := len(turns) < len(running)
	for _, ref := range turns {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		done, err := l.svc.BulkStep(ctx, ref)
		cancel()
		if err != nil {
			l.cfg.Logger.Warn("shard bulk operation", "op", ref.ID, "err", err)
			if !l.node.IsLeader() {
				return false
			}
			continue
		}
		more = more || !done
	}
	return more
}

// bulkTurns picks the operations that take a step this round: one per
// tenant, the oldest of its first namespace that has one. Tenants take
// turns, so one tenant's operation delays another's by at most one step
// per step of its own, however big it is; a tenant's own operations run
// one after another.
func bulkTurns(running []service.BulkOpRef) []service.BulkOpRef {
	turn := map[string]bool{}
	var out []service.BulkOpRef
	for _, ref := range running {
		t := tenantOf(ref.NS)
		if !turn[t] {
			turn[t] = true
			out = append(out, ref)
		}
	}
	return out
}

// tenantOf is the tenant part of a shard namespace ("<tenant>/<name>").
func tenantOf(ns string) string {
	if i := strings.IndexByte(ns, '/'); i >= 0 {
		return ns[:i]
	}
	return ns
}
