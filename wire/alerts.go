package wire

import "time"

// Alert rules (docs/api/alerts.md): a namespace's conditions on its
// queues, evaluated by the shard leader from replicated counts; firing
// and resolving are the lifecycle events alert.firing and alert.resolved,
// delivered by the namespace's webhooks.

// The kinds of rule. Threshold and For mean, per kind:
//
//	queue_depth_above     pending jobs above Threshold for For
//	oldest_pending_above  the oldest pending job older than For
//	dead_increase         at least Threshold jobs died within For
//	failure_rate_above    above Threshold % of the jobs that finished
//	                      within For died, once at least MinCount finished
//	no_worker             no fetch from the queue for For while jobs pend
const (
	AlertQueueDepth  = "queue_depth_above"
	AlertOldest      = "oldest_pending_above"
	AlertDead        = "dead_increase"
	AlertFailureRate = "failure_rate_above"
	AlertNoWorker    = "no_worker"
)

// AlertKinds are the kinds a rule may have.
var AlertKinds = []string{AlertQueueDepth, AlertOldest, AlertDead, AlertFailureRate, AlertNoWorker}

// The states of a rule on a queue.
const (
	AlertOK     = "ok"
	AlertFiring = "firing"
)

// Limits of alert rules.
const (
	MaxAlertRules        = 100 // per namespace
	MaxAlertFor          = 7 * 24 * time.Hour
	MaxAlertThreshold    = 1e9
	DefaultAlertMinCount = 10 // failure_rate_above's default MinCount
	MaxAlertMinCount     = 1_000_000
)

// AlertRuleRequest is POST /api/v1/alerts (Name required) and PUT
// /api/v1/alerts/{name} (the whole rule; Name, if given, must be the
// path's). Queue empty: every queue of the namespace, each on its own.
// For is a duration ("30s", "5m"). Enabled defaults to true.
type AlertRuleRequest struct {
	Name      string  `json:"name,omitempty"`
	Kind      string  `json:"kind"`
	Queue     string  `json:"queue,omitempty"`
	Threshold float64 `json:"threshold,omitempty"`
	For       string  `json:"for"`
	MinCount  int     `json:"min_count,omitempty"`
	Enabled   *bool   `json:"enabled,omitempty"`
}

// AlertRule is one rule as read, with its state: Firing lists the queues
// it fires on (empty while it is ok); Values are the measures of its last
// evaluation per queue, EvaluatedAt when (both kept in the shard leader's
// memory: absent until it evaluates the rule after it took the lead).
type AlertRule struct {
	Name        string       `json:"name"`
	Kind        string       `json:"kind"`
	Queue       string       `json:"queue"`
	Threshold   float64      `json:"threshold"`
	For         string       `json:"for"`
	MinCount    int          `json:"min_count,omitempty"`
	Enabled     bool         `json:"enabled"`
	State       string       `json:"state"`
	Since       *time.Time   `json:"since,omitempty"` // when it began to fire (the earliest of its queues)
	Firing      []AlertQueue `json:"firing"`
	Values      []AlertValue `json:"values"`
	EvaluatedAt *time.Time   `json:"evaluated_at,omitempty"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
}

// AlertQueue is a rule firing on one queue: since when, and the value
// that made it fire.
type AlertQueue struct {
	Queue string    `json:"queue"`
	Since time.Time `json:"since"`
	Value float64   `json:"value"`
}

// AlertValue is a rule's measure on one queue at its last evaluation.
type AlertValue struct {
	Queue string  `json:"queue"`
	Value float64 `json:"value"`
}

// AlertRuleList is GET /api/v1/alerts.
type AlertRuleList struct {
	Alerts []AlertRule `json:"alerts"`
}

// WebhookAlertData is the CloudEvent data of alert.firing and
// alert.resolved; the CloudEvent's subject is the rule's name. Value is
// the rule's measure when it fired or resolved (jobs, seconds, or a
// percentage), Since when it began to fire.
type WebhookAlertData struct {
	Rule      string    `json:"rule"`
	Kind      string    `json:"kind"`
	Queue     string    `json:"queue"`
	Value     float64   `json:"value"`
	Threshold float64   `json:"threshold"`
	Since     time.Time `json:"since"`
}
