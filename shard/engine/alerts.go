package engine

import (
	"cmp"
	"errors"
	"math"
	"slices"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// A namespace's alert rules (keys.AlertRule) and their firing state. The
// service validates the rules; the leader's evaluator (shard/alerts)
// decides when a rule fires or resolves on a queue and proposes
// AlertState, whose apply keeps the state and logs alert.firing or
// alert.resolved. The state is replicated so a new leader does not fire
// again what already fired: a firing proposed for a queue already firing
// changes nothing, and so does a resolve of one that is not.

// Alert events, in the namespace's event log: Subject the rule, Queue the
// queue, Detail the rule's kind, Counts its value and Limit (float64
// bits) and since when it fired (unix ns); see AlertEventData.
const (
	EvAlertFiring   = "alert.firing"
	EvAlertResolved = "alert.resolved"
)

// AlertRuleRecord is one rule and the queues it fires on.
type AlertRuleRecord struct {
	Name      string        `codec:"n"`
	Kind      string        `codec:"k"`
	Queue     string        `codec:"q,omitempty"` // "": every queue
	Threshold float64       `codec:"t,omitempty"`
	ForNs     int64         `codec:"f"`
	MinCount  int           `codec:"m,omitempty"`
	Enabled   bool          `codec:"e"`
	Firing    []AlertFiring `codec:"fi,omitempty"` // by queue name
	CreatedAt int64         `codec:"ca"`
	UpdatedAt int64         `codec:"ua"`
}

// AlertFiring is a rule firing on one queue since Since (unix ns), with
// the value that made it fire.
type AlertFiring struct {
	Queue string  `codec:"q"`
	Since int64   `codec:"s"`
	Value float64 `codec:"v"`
}

// FiringOn returns the rule's firing on queue, if it fires there.
func (r *AlertRuleRecord) FiringOn(queue string) (AlertFiring, bool) {
	for _, f := range r.Firing {
		if f.Queue == queue {
			return f, true
		}
	}
	return AlertFiring{}, false
}

// AlertRuleCmd creates or replaces a rule's settings (all of Rule but
// its state and times).
type AlertRuleCmd struct {
	NS   string          `codec:"ns"`
	Rule AlertRuleRecord `codec:"r"`
}

func (c *AlertRuleCmd) namespace() string { return c.NS }

// AlertNameCmd names one rule.
type AlertNameCmd struct {
	NS   string `codec:"ns"`
	Name string `codec:"n"`
}

func (c *AlertNameCmd) namespace() string { return c.NS }

// AlertStateCmd is the leader's evaluation of a rule whose settings were
// last changed at Updated: the queues it now fires on and those it no
// longer does. It applies only to those settings: a change meanwhile is
// evaluated again.
type AlertStateCmd struct {
	NS      string        `codec:"ns"`
	Name    string        `codec:"n"`
	Updated int64         `codec:"u"`
	Changes []AlertChange `codec:"c"`
}

func (c *AlertStateCmd) namespace() string { return c.NS }

// AlertChange fires (Fire) or resolves the rule on Queue, at Value.
type AlertChange struct {
	Queue string  `codec:"q"`
	Fire  bool    `codec:"f,omitempty"`
	Value float64 `codec:"v"`
}

func alertNotFound(name string) error {
	return apierr.New(apierr.NotFound, "alert rule %q not found", name)
}

func (e *Engine) applyAlertCreate(tx *replica.Tx, c *AlertRuleCmd) (*AlertRuleRecord, error) {
	if _, ok := ReadAlertRule(tx, c.NS, c.Rule.Name); ok {
		return nil, apierr.OfField(apierr.Conflict, "name", "alert rule %q exists", c.Rule.Name)
	}
	if n := len(ReadAlertRules(tx, c.NS)); n >= wire.MaxAlertRules {
		return nil, apierr.New(apierr.Conflict, "the namespace has %d alert rules; the limit is %d", n, wire.MaxAlertRules)
	}
	r := c.Rule
	r.Firing = nil
	r.CreatedAt, r.UpdatedAt = tx.Now.UnixNano(), tx.Now.UnixNano()
	registerNamespace(tx, c.NS)
	putAlertRule(tx, c.NS, &r)
	return &r, nil
}

// applyAlertUpdate replaces the settings; the firing state stays until
// the next evaluation of the new settings decides it.
func (e *Engine) applyAlertUpdate(tx *replica.Tx, c *AlertRuleCmd) (*AlertRuleRecord, error) {
	r, ok := ReadAlertRule(tx, c.NS, c.Rule.Name)
	if !ok {
		return nil, alertNotFound(c.Rule.Name)
	}
	r.Kind, r.Queue, r.Threshold, r.ForNs, r.MinCount, r.Enabled = c.Rule.Kind, c.Rule.Queue, c.Rule.Threshold, c.Rule.ForNs, c.Rule.MinCount, c.Rule.Enabled
	r.UpdatedAt = max(tx.Now.UnixNano(), r.UpdatedAt+1) // the evaluator's state commands name it
	putAlertRule(tx, c.NS, r)
	return r, nil
}

// applyAlertDelete removes a rule; each queue it fired on resolves.
func (e *Engine) applyAlertDelete(tx *replica.Tx, c *AlertNameCmd) (replica.None, error) {
	r, ok := ReadAlertRule(tx, c.NS, c.Name)
	if !ok {
		return replica.None{}, alertNotFound(c.Name)
	}
	for _, f := range r.Firing {
		e.logAlert(tx, c.NS, r, EvAlertResolved, f, f.Value)
	}
	must(tx.Delete(keys.AlertRule(c.NS, c.Name), nil))
	return replica.None{}, nil
}

// applyAlertState fires and resolves; it reports whether anything
// changed.
func (e *Engine) applyAlertState(tx *replica.Tx, c *AlertStateCmd) (bool, error) {
	r, ok := ReadAlertRule(tx, c.NS, c.Name)
	if !ok || r.UpdatedAt != c.Updated {
		return false, nil
	}
	changed := false
	for _, ch := range c.Changes {
		f, firing := r.FiringOn(ch.Queue)
		switch {
		case ch.Fire && !firing:
			f = AlertFiring{Queue: ch.Queue, Since: tx.Now.UnixNano(), Value: ch.Value}
			r.Firing = append(r.Firing, f)
			slices.SortFunc(r.Firing, func(a, b AlertFiring) int { return cmp.Compare(a.Queue, b.Queue) })
			e.logAlert(tx, c.NS, r, EvAlertFiring, f, ch.Value)
			changed = true
		case !ch.Fire && firing:
			r.Firing = slices.DeleteFunc(r.Firing, func(x AlertFiring) bool { return x.Queue == ch.Queue })
			e.logAlert(tx, c.NS, r, EvAlertResolved, f, ch.Value)
			changed = true
		}
	}
	if changed {
		putAlertRule(tx, c.NS, r)
	}
	return changed, nil
}

func (e *Engine) logAlert(tx *replica.Tx, ns string, r *AlertRuleRecord, typ string, f AlertFiring, value float64) {
	e.logEvent(tx, ns, Event{Type: typ, Subject: r.Name, Queue: f.Queue, Detail: r.Kind,
		Counts: []int{int(math.Float64bits(value)), int(math.Float64bits(r.Limit())), int(f.Since)}})
}

// Limit is what the rule's value is compared with: its threshold, or for
// the kinds measured in time, For in seconds.
func (r *AlertRuleRecord) Limit() float64 {
	if r.Kind == wire.AlertOldest || r.Kind == wire.AlertNoWorker {
		return float64(r.ForNs) / 1e9
	}
	return r.Threshold
}

// AlertEventData reads an alert event's value, threshold and since (unix
// ns); ok is false for another event.
func AlertEventData(ev *Event) (value, threshold float64, since int64, ok bool) {
	if (ev.Type != EvAlertFiring && ev.Type != EvAlertResolved) || len(ev.Counts) < 3 {
		return 0, 0, 0, false
	}
	return math.Float64frombits(uint64(ev.Counts[0])), math.Float64frombits(uint64(ev.Counts[1])), int64(ev.Counts[2]), true
}

func putAlertRule(tx *replica.Tx, ns string, r *AlertRuleRecord) {
	must(tx.Set(keys.AlertRule(ns, r.Name), replica.Encode(r), nil))
}

// ReadAlertRule returns one of ns's rules as last applied in rd.
func ReadAlertRule(rd pebble.Reader, ns, name string) (*AlertRuleRecord, bool) {
	v, closer, err := rd.Get(keys.AlertRule(ns, name))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false
	}
	must(err)
	defer closer.Close()
	r := &AlertRuleRecord{}
	must(replica.Decode(v, r))
	return r, true
}

// ReadAlertRules returns ns's rules in name order.
func ReadAlertRules(rd pebble.Reader, ns string) []*AlertRuleRecord {
	p := keys.AlertRulePrefix(ns)
	it, err := rd.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	defer it.Close()
	var out []*AlertRuleRecord
	for it.First(); it.Valid(); it.Next() {
		r := &AlertRuleRecord{}
		must(replica.Decode(it.Value(), r))
		out = append(out, r)
	}
	return out
}
