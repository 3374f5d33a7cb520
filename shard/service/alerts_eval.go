package service

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// The leader's evaluation of alert rules (leader/alerts.go calls it every
// interval). It reads the replicated queue records; what it remembers
// between evaluations is this node's alone and starts over when it takes
// the lead:
//
//   - samples of each queue's dead and completed counts, whose increases
//     within a rule's window are dead_increase's and failure_rate_above's
//     measures (an increase is counted at the evaluation that saw it; a
//     dead or completed job pruned, retried or deleted between two
//     evaluations hides as many new ones in that step);
//   - since when a queue_depth_above condition holds;
//   - no_worker's last fetch: the fetches this node answered, and none
//     before it led, so a new leader waits a whole For from its start
//     before it fires one that was not firing already (nor before the
//     oldest pending job has waited For);
//   - the values of the last evaluation, for the API.
//
// The firing state itself is replicated (engine.AlertState): a new leader
// resolves or keeps what fired, and fires it again only if it resolved.

// alertMemory is what the evaluation keeps between runs.
type alertMemory struct {
	mu       sync.Mutex
	leadFrom int64                     // when this node's lead began (the first evaluation of it)
	prev     int64                     // the previous evaluation (0: none of this lead)
	samples  map[nsQueue][]alertSample // per queue, oldest first
	breach   map[alertKey]int64        // queue_depth_above: since when the condition holds
	vals     map[nsRule]alertValues    // the last evaluation of each rule
	seen     map[alertKey]struct{}     // this run's keys of breach
}

type nsQueue struct{ ns, queue string }

type nsRule struct{ ns, rule string }

// alertKey is a rule's settings (by their time) on a queue.
type alertKey struct {
	ns, rule, queue string
	updated         int64
}

type alertSample struct {
	at              int64
	dead, completed int64
}

type alertValues struct {
	at     int64
	values []wire.AlertValue
}

// values returns a rule's last values and when they were measured (nil
// before any).
func (m *alertMemory) values(ns, rule string) ([]wire.AlertValue, *time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.vals[nsRule{ns, rule}]
	if !ok {
		return []wire.AlertValue{}, nil
	}
	at := time.Unix(0, v.at).UTC()
	return append([]wire.AlertValue{}, v.values...), &at
}

// AlertsLost forgets what the evaluation remembers: this node no longer
// leads.
func (s *Service) AlertsLost() {
	m := &s.alerts
	m.mu.Lock()
	defer m.mu.Unlock()
	m.leadFrom, m.prev, m.samples, m.breach, m.vals = 0, 0, nil, nil, nil
}

// EvaluateAlerts evaluates every enabled rule of every namespace at the
// clock's now and proposes the firings and resolutions; lastFetch is when
// this node last answered a fetch of a queue (zero: never).
func (s *Service) EvaluateAlerts(ctx context.Context, lastFetch func(ns, queue string) time.Time) error {
	m := &s.alerts
	now := s.now()
	db := s.node.DB()
	m.mu.Lock()
	if m.leadFrom == 0 {
		m.leadFrom, m.samples, m.breach, m.vals = now, map[nsQueue][]alertSample{}, map[alertKey]int64{}, map[nsRule]alertValues{}
	}
	m.seen = map[alertKey]struct{}{}
	m.mu.Unlock()
	var firstErr error
	for _, ns := range engine.Namespaces(db) {
		rules := engine.ReadAlertRules(db, ns)
		if len(rules) == 0 {
			continue
		}
		queues := s.sampleQueues(db, ns, rules, now)
		for _, r := range rules {
			cmd := s.evaluateRule(db, ns, r, queues, now, lastFetch)
			if len(cmd.Changes) == 0 {
				continue
			}
			if _, err := engine.AlertState.Propose(ctx, s.node, cmd); err != nil && firstErr == nil {
				firstErr = err
			}
		}
	}
	m.mu.Lock()
	for k := range m.breach {
		if _, ok := m.seen[k]; !ok {
			delete(m.breach, k) // the rule, its settings or its queue are gone
		}
	}
	m.prev = now
	m.mu.Unlock()
	return firstErr
}

// sampleQueues records a sample of each of ns's queues and returns their
// records; samples older than the longest window of ns's rules go.
func (s *Service) sampleQueues(db pebble.Reader, ns string, rules []*engine.AlertRuleRecord, now int64) map[string]*engine.QueueRecord {
	names, _ := queueNames(db, ns, tenancy.QueueScope{}, maxQueuesListed)
	var keep int64
	for _, r := range rules {
		keep = max(keep, r.ForNs)
	}
	m := &s.alerts
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]*engine.QueueRecord, len(names))
	for _, name := range names {
		q, ok := s.eng.Queue(db, ns, name)
		if !ok {
			continue
		}
		out[name] = q
		k := nsQueue{ns, name}
		ss := m.samples[k]
		if len(ss) == 0 && m.prev != 0 {
			ss = append(ss, alertSample{at: m.prev}) // a queue made since the last evaluation started from nothing
		}
		ss = append(ss, alertSample{at: now, dead: q.Count(job.Dead), completed: q.Count(job.Completed)})
		i := 0
		for i < len(ss)-1 && ss[i+1].at < now-keep {
			i++ // keep the sample before the window: the first step in it needs it
		}
		m.samples[k] = ss[i:]
	}
	for k := range m.samples {
		if _, ok := out[k.queue]; k.ns == ns && !ok {
			delete(m.samples, k)
		}
	}
	return out
}

// evaluateRule decides the changes of one rule's state.
func (s *Service) evaluateRule(db pebble.Reader, ns string, r *engine.AlertRuleRecord, queues map[string]*engine.QueueRecord,
	now int64, lastFetch func(ns, queue string) time.Time) *engine.AlertStateCmd {
	cmd := &engine.AlertStateCmd{NS: ns, Name: r.Name, Updated: r.UpdatedAt}
	judged := map[string]bool{}
	var values []wire.AlertValue
	if r.Enabled {
		var targets []string
		if r.Queue != "" {
			targets = []string{r.Queue}
		} else {
			for name := range queues {
				targets = append(targets, name)
			}
		}
		for _, queue := range targets {
			value, breach := s.measure(db, ns, r, queue, queues[queue], now, lastFetch)
			values = append(values, wire.AlertValue{Queue: queue, Value: value})
			judged[queue] = true
			_, firing := r.FiringOn(queue)
			switch {
			case breach && !firing:
				cmd.Changes = append(cmd.Changes, engine.AlertChange{Queue: queue, Fire: true, Value: value})
			case !breach && firing && !s.holding(ns, r, queue, queues[queue], now, lastFetch):
				cmd.Changes = append(cmd.Changes, engine.AlertChange{Queue: queue, Value: value})
			}
		}
	}
	for _, f := range r.Firing {
		if !judged[f.Queue] { // disabled, or the queue is gone or no longer the rule's
			cmd.Changes = append(cmd.Changes, engine.AlertChange{Queue: f.Queue, Value: f.Value})
		}
	}
	sortValues(values)
	m := &s.alerts
	m.mu.Lock()
	m.vals[nsRule{ns, r.Name}] = alertValues{at: now, values: values}
	m.mu.Unlock()
	return cmd
}

// holding reports whether a firing rule whose condition no longer seems
// met stays firing, because this leader cannot tell yet:
//
//   - queue_depth_above: the condition holds, though not for For yet (it
//     came back since it fired, or this node took the lead since);
//   - no_worker: jobs still pend and no fetch came since it fired (a new
//     leader knows of no fetch before its lead);
//   - dead_increase, failure_rate_above: this node has not led for a
//     whole window, so its samples miss part of it.
func (s *Service) holding(ns string, r *engine.AlertRuleRecord, queue string, q *engine.QueueRecord, now int64,
	lastFetch func(ns, queue string) time.Time) bool {
	m := &s.alerts
	m.mu.Lock()
	defer m.mu.Unlock()
	switch r.Kind {
	case wire.AlertQueueDepth:
		_, ok := m.breach[alertKey{ns, r.Name, queue, r.UpdatedAt}]
		return ok
	case wire.AlertNoWorker:
		f, _ := r.FiringOn(queue)
		t := lastFetch(ns, queue)
		return q != nil && q.Count(job.Pending) > 0 && (t.IsZero() || t.UnixNano() <= f.Since)
	case wire.AlertDead, wire.AlertFailureRate:
		return now-m.leadFrom < r.ForNs
	}
	return false
}

// measure is a rule's value on one queue (nil q: the queue does not
// exist) and whether its condition is met.
func (s *Service) measure(db pebble.Reader, ns string, r *engine.AlertRuleRecord, queue string, q *engine.QueueRecord,
	now int64, lastFetch func(ns, queue string) time.Time) (float64, bool) {
	var pending int64
	if q != nil {
		pending = q.Count(job.Pending)
	}
	m := &s.alerts
	switch r.Kind {
	case wire.AlertQueueDepth:
		above := float64(pending) > r.Threshold
		k := alertKey{ns, r.Name, queue, r.UpdatedAt}
		m.mu.Lock()
		defer m.mu.Unlock()
		if !above {
			delete(m.breach, k)
			return float64(pending), false
		}
		since, ok := m.breach[k]
		if !ok {
			since = now
			m.breach[k] = since
		}
		m.seen[k] = struct{}{}
		return float64(pending), now-since >= r.ForNs
	case wire.AlertOldest:
		if pending == 0 {
			return 0, false
		}
		at := oldestPending(db, ns, queue)
		if at == 0 || at >= now {
			return 0, false
		}
		return seconds(now - at), now-at > r.ForNs
	case wire.AlertNoWorker:
		if pending == 0 {
			return 0, false
		}
		m.mu.Lock()
		last := m.leadFrom
		m.mu.Unlock()
		if t := lastFetch(ns, queue); !t.IsZero() {
			last = max(last, t.UnixNano())
		}
		last = max(last, oldestPending(db, ns, queue)) // jobs pending for less than For have not waited long
		return seconds(now - last), now-last >= r.ForNs
	}
	dead, done := m.increases(ns, queue, now-r.ForNs)
	if r.Kind == wire.AlertDead {
		return float64(dead), float64(dead) >= r.Threshold
	}
	total := dead + done
	if total == 0 {
		return 0, false
	}
	rate := 100 * float64(dead) / float64(total)
	return rate, total >= int64(r.MinCount) && rate > r.Threshold
}

// increases sums a queue's increases of dead and completed jobs seen by
// the evaluations after from.
func (m *alertMemory) increases(ns, queue string, from int64) (dead, completed int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ss := m.samples[nsQueue{ns, queue}]
	for i := 1; i < len(ss); i++ {
		if ss[i].at <= from {
			continue
		}
		dead += max(ss[i].dead-ss[i-1].dead, 0)
		completed += max(ss[i].completed-ss[i-1].completed, 0)
	}
	return dead, completed
}

func seconds(ns int64) float64 { return time.Duration(ns).Seconds() }

func sortValues(vs []wire.AlertValue) {
	slices.SortFunc(vs, func(a, b wire.AlertValue) int { return cmp.Compare(a.Queue, b.Queue) })
}
