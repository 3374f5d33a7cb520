package webhooks

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/leader"
	"github.com/jobbie/jobbie/shard/live"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// Config configures the deliverer. Zero values take the defaults noted.
type Config struct {
	Client *outbound.Client // required
	// ShardID names the event ids, as the event stream does
	// ("<shard id>:<seq>").
	ShardID string
	// Scan is how often endpoints are looked for and an idle runner
	// looks for new events; default 100 ms.
	Scan time.Duration
	// RetryBase is the first retry's wait, doubled per attempt up to
	// RetryMax, each with ±25% jitter; defaults 5 s and 1 h.
	RetryBase, RetryMax time.Duration
	// RetryWindow is how long one event is retried before it is given
	// up (wire.WebhookRetryWindow); DisableAfter how long an endpoint
	// fails before it is disabled (wire.WebhookDisableAfter).
	RetryWindow, DisableAfter time.Duration
	// Timeout bounds one delivery (wire.WebhookTimeout).
	Timeout time.Duration
	// ProgressEvery is how often a runner records its cursor (one Raft
	// entry at most this often per endpoint); default 1 s.
	ProgressEvery time.Duration
	Clock         clockwork.Clock
	Logger        *slog.Logger
}

func (c Config) withDefaults() Config {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Scan, 100*time.Millisecond)
	def(&c.RetryBase, 5*time.Second)
	def(&c.RetryMax, time.Hour)
	def(&c.RetryWindow, wire.WebhookRetryWindow)
	def(&c.DisableAfter, wire.WebhookDisableAfter)
	def(&c.Timeout, wire.WebhookTimeout)
	def(&c.ProgressEvery, time.Second)
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Deliverer runs one runner per delivering endpoint while the node leads.
type Deliverer struct {
	cfg    Config
	node   *replica.Node
	svc    *service.Service
	events *live.Events

	stop chan struct{}
	wg   sync.WaitGroup

	mu     sync.Mutex
	egress map[string]egressRead // namespace → its allow-list as last read
}

type hkey struct{ ns, id string }

// Start starts the deliverer; Stop ends it.
func Start(cfg Config, node *replica.Node, svc *service.Service, events *live.Events) *Deliverer {
	d := &Deliverer{cfg: cfg.withDefaults(), node: node, svc: svc, events: events,
		stop: make(chan struct{}), egress: map[string]egressRead{}}
	d.wg.Add(1)
	go d.loop()
	return d
}

// Stop ends every runner (each records its progress if it still can)
// and waits for them.
func (d *Deliverer) Stop() {
	select {
	case <-d.stop:
		return
	default:
	}
	close(d.stop)
	d.wg.Wait()
}

// loop runs a runner per delivering endpoint while this node leads; a
// settings change restarts it (the old one records its progress first).
func (d *Deliverer) loop() {
	defer d.wg.Done()
	leader.Follow[hkey, *engine.WebhookRecord]{
		Every: d.cfg.Scan, Clock: d.cfg.Clock, Leads: d.node.IsLeader,
		Want: d.endpoints,
		Same: func(a, b *engine.WebhookRecord) bool { return a.UpdatedAt == b.UpdatedAt },
		Start: func(k hkey, w *engine.WebhookRecord) func() {
			return d.startRunner(k, w).close
		},
	}.Run(d.stop)
}

// endpoints reads every endpoint the leader delivers to.
func (d *Deliverer) endpoints() map[hkey]*engine.WebhookRecord {
	out := map[hkey]*engine.WebhookRecord{}
	db := d.node.DB()
	for _, ns := range engine.Namespaces(db) {
		for _, w := range engine.ReadWebhooks(db, ns) {
			if w.Delivering() {
				out[hkey{ns, w.ID}] = w
			}
		}
	}
	return out
}

// Test answers POST /api/v1/webhooks/{id}/test: one dev.jobbie.test
// event, sent now whatever the endpoint subscribes to; the attempt is
// logged (logNow) and answered.
func (d *Deliverer) Test(ctx context.Context, ns, id string) (*wire.WebhookDelivery, error) {
	w, err := d.svc.WebhookRecord(ns, id)
	if err != nil {
		return nil, err
	}
	now := d.cfg.Clock.Now()
	ce := &wire.CloudEvent{SpecVersion: "1.0", ID: d.svc.NewID("test_"), Source: sourceOf(ns), Type: wire.WebhookTestType,
		Time: now.UTC(), DataContentType: "application/json", Data: []byte(`{"message":"a test delivery from Jobbie"}`)}
	a := d.send(ctx, ns, w, ce, 1)
	d.logNow(ctx, ns, id, a)
	return &a, nil
}

// Redeliver answers POST /api/v1/webhooks/{id}/redeliver: the event, if
// the log still holds it, sent now once more (its cursor unchanged).
func (d *Deliverer) Redeliver(ctx context.Context, ns, id, eventID string) (*wire.WebhookDelivery, error) {
	w, err := d.svc.WebhookRecord(ns, id)
	if err != nil {
		return nil, err
	}
	// "<shard>:<seq>", as the stream and the deliveries name it, or a
	// bare seq; another shard's is from before the namespace moved here.
	shard, num, scoped := strings.Cut(eventID, ":")
	if !scoped {
		shard, num = d.cfg.ShardID, eventID
	}
	seq, err := strconv.ParseUint(num, 10, 64)
	if err != nil || seq == 0 || shard == "" {
		return nil, apierr.Field("event_id", "event_id %q is not an event id (\"<shard>:<seq>\", as a delivery names it)", eventID)
	}
	var evs []engine.Event
	if shard == d.cfg.ShardID {
		evs, _, _ = d.events.Read(ns, seq-1, 1, nil)
	}
	if len(evs) == 0 || evs[0].Seq != seq {
		return nil, apierr.New(apierr.NotFound, "event %s is not in the namespace's event log (never, or trimmed by retention)", eventID)
	}
	a := d.send(ctx, ns, w, d.cloudEvent(ns, &evs[0]), 1)
	d.logNow(ctx, ns, id, a)
	return &a, nil
}

// logNow adds a test's or a redelivery's attempt to the endpoint's
// delivery log before it is answered. If this node lost the lead
// meanwhile the attempt was made but stays out of the log; the answer
// still shows it.
func (d *Deliverer) logNow(ctx context.Context, ns, id string, a wire.WebhookDelivery) {
	// The attempt was made: log it even if the caller has gone.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	c := &engine.WebhookLogCmd{NS: ns, ID: id, Log: []engine.WebhookAttempt{attemptOf(&a)}}
	if _, err := engine.WebhookLog.Propose(ctx, d.node, c); err != nil {
		d.cfg.Logger.Warn("webhooks: delivery log", "namespace", ns, "webhook", id, "err", err)
	}
}

// attemptOf is a's delivery log record, its error cut to the bytes the
// log keeps.
func attemptOf(a *wire.WebhookDelivery) engine.WebhookAttempt {
	return engine.WebhookAttempt{EventID: a.EventID, Type: a.Type, At: a.At.UnixNano(), Attempt: a.Attempt, Status: a.Status,
		LatencyUs: int64(a.LatencyMs * 1000), Error: engine.CutDeliveryError(a.Error), OK: a.OK}
}
