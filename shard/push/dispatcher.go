package push

import (
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/shard/leader"
	"github.com/jobbie/jobbie/shard/live"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// Config configures the dispatcher. Zero values take the defaults noted.
type Config struct {
	Client *outbound.Client // required
	// Scan is how often the push queues are looked for; default 200 ms.
	Scan time.Duration
	// Heartbeat is how often in-flight leases are extended, and a cancel
	// noticed; default 500 ms.
	Heartbeat time.Duration
	// RetryAfterCap bounds a 429/503's Retry-After wait; a job given back
	// this many times in a row (MaxGiveBacks) is failed instead.
	RetryAfterCap time.Duration // default 1 min
	MaxGiveBacks  int           // default 5
	Clock         clockwork.Clock
	Logger        *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Scan == 0 {
		c.Scan = 200 * time.Millisecond
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = 500 * time.Millisecond
	}
	if c.RetryAfterCap == 0 {
		c.RetryAfterCap = time.Minute
	}
	if c.MaxGiveBacks == 0 {
		c.MaxGiveBacks = 5
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Dispatcher runs one queue runner per push queue while the node leads.
type Dispatcher struct {
	cfg     Config
	node    *replica.Node
	svc     *service.Service
	workers *live.Workers

	stop chan struct{}
	wg   sync.WaitGroup
}

type qkey struct{ ns, queue string }

// Start starts the dispatcher; Stop ends it.
func Start(cfg Config, node *replica.Node, svc *service.Service, workers *live.Workers) *Dispatcher {
	d := &Dispatcher{cfg: cfg.withDefaults(), node: node, svc: svc, workers: workers, stop: make(chan struct{})}
	d.wg.Add(1)
	go d.loop()
	return d
}

// Stop ends every runner (their in-flight calls are aborted and their
// jobs released) and waits for them.
func (d *Dispatcher) Stop() {
	select {
	case <-d.stop:
		return
	default:
	}
	close(d.stop)
	d.wg.Wait()
}

// loop runs a runner per push queue while this node leads.
func (d *Dispatcher) loop() {
	defer d.wg.Done()
	leader.Follow[qkey, *engine.PushConfig]{
		Every: d.cfg.Scan, Clock: d.cfg.Clock, Leads: d.node.IsLeader,
		Want: func() map[qkey]*engine.PushConfig { return pushQueues(d.node.DB()) },
		Same: samePush,
		Start: func(k qkey, p *engine.PushConfig) func() {
			return d.startRunner(k, p).close
		},
	}.Run(d.stop)
}

// pushQueues reads every queue whose push is on.
func pushQueues(db pebble.Reader) map[qkey]*engine.PushConfig {
	out := map[qkey]*engine.PushConfig{}
	for _, ns := range engine.Namespaces(db) {
		p := keys.QueuePrefix(ns)
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
		if err != nil {
			continue
		}
		for it.First(); it.Valid(); it.Next() {
			var q engine.QueueRecord
			if replica.Decode(it.Value(), &q) == nil && q.Push.Active() {
				out[qkey{ns, q.Name}] = q.Push
			}
		}
		_ = it.Close()
	}
	return out
}

func samePush(a, b *engine.PushConfig) bool {
	if a.URL != b.URL || a.WhenNoWork != b.WhenNoWork || a.TimeoutNs != b.TimeoutNs || a.MaxInFlight != b.MaxInFlight ||
		len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i] != b.Headers[i] {
			return false
		}
	}
	return true
}

// pulling reports whether a when_no_workers queue has a pull worker now.
func (d *Dispatcher) pulling(k qkey, p *engine.PushConfig) bool {
	if !p.WhenNoWork {
		return false
	}
	last := d.workers.LastFetch(k.ns, k.queue)
	return !last.IsZero() && d.cfg.Clock.Since(last) < wire.PushWorkerWindow
}

// headersOf is the queue's own headers and the content type.
func headersOf(p *engine.PushConfig) map[string]string {
	h := map[string]string{"Content-Type": "application/json"}
	for _, x := range p.Headers {
		h[x.Name] = x.Value
	}
	return h
}
