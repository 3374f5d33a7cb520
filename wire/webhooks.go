package wire

import (
	"encoding/json"
	"time"
)

// Lifecycle webhooks (docs/api/webhooks.md): a namespace's endpoints,
// each subscribed to some event types, optionally of some queues; the
// shard leader delivers the namespace's event log to them as signed
// CloudEvents.

// WebhookRequest is POST /api/v1/webhooks and PUT /api/v1/webhooks/{id}:
// the endpoint's whole settings (a PUT replaces them). Enabled defaults
// to true; setting it true again re-enables an endpoint disabled for
// failing. Secret asks for an endpoint secret ("whsec_…", shown in this
// answer and a rotation's only) to sign with beside the namespace's keys.
type WebhookRequest struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Queues      []string `json:"queues,omitempty"`
	Enabled     *bool    `json:"enabled,omitempty"`
	Description string   `json:"description,omitempty"`
	Secret      bool     `json:"secret,omitempty"`
}

// Webhook is one endpoint as read. Disabled says why and since when
// deliveries stopped (failing for WebhookDisableAfter, or by the
// namespace); FailingSince is the first failure of the current run.
type Webhook struct {
	ID           string           `json:"id"`
	URL          string           `json:"url"`
	Events       []string         `json:"events"`
	Queues       []string         `json:"queues"`
	Enabled      bool             `json:"enabled"`
	Description  string           `json:"description"`
	SecretIDs    []string         `json:"secret_ids"`
	Secret       string           `json:"secret,omitempty"` // only in a create's or a rotation's answer
	Disabled     *WebhookDisabled `json:"disabled,omitempty"`
	FailingSince *time.Time       `json:"failing_since,omitempty"`
	CreatedAt    time.Time        `json:"created_at"`
	UpdatedAt    time.Time        `json:"updated_at"`
}

// WebhookDisabled is why an endpoint no longer receives deliveries.
type WebhookDisabled struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// WebhookList is GET /api/v1/webhooks.
type WebhookList struct {
	Webhooks []Webhook `json:"webhooks"`
}

// WebhookDelivery is one attempt in an endpoint's delivery log.
type WebhookDelivery struct {
	EventID   string    `json:"event_id"`
	Type      string    `json:"type"`
	At        time.Time `json:"at"`
	Status    int       `json:"status"` // 0: no answer (see Error)
	LatencyMs float64   `json:"latency_ms"`
	Error     string    `json:"error,omitempty"`
	Attempt   int       `json:"attempt"`
	OK        bool      `json:"ok"`
}

// WebhookDeliveryList is GET /api/v1/webhooks/{id}/deliveries: the
// newest attempts first.
type WebhookDeliveryList struct {
	Deliveries []WebhookDelivery `json:"deliveries"`
}

// WebhookRedeliverRequest is POST /api/v1/webhooks/{id}/redeliver.
type WebhookRedeliverRequest struct {
	EventID string `json:"event_id"`
}

// CloudEvent is the body of a webhook delivery: a CloudEvents 1.0 JSON
// envelope.
type CloudEvent struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Time            time.Time       `json:"time"`
	Subject         string          `json:"subject,omitempty"`
	DataContentType string          `json:"datacontenttype"`
	Data            json.RawMessage `json:"data"`
}

// WebhookJobData is a job event's CloudEvent data.
type WebhookJobData struct {
	JobID    string `json:"job_id"`
	Queue    string `json:"queue"`
	State    string `json:"state"`
	From     string `json:"from,omitempty"`
	Attempt  int    `json:"attempt"`
	WorkerID string `json:"worker_id,omitempty"`
	// DeadReason is a job.dead event's dead_reason when the job's worker
	// failed it as non-retryable ("non_retryable").
	DeadReason string `json:"dead_reason,omitempty"`
}

// The CloudEvents type of an event is WebhookTypePrefix + its webhook
// event name ("job.completed" → "dev.jobbie.job.completed"); a test
// delivery's is WebhookTestType.
const (
	WebhookTypePrefix = "dev.jobbie."
	WebhookTestType   = "dev.jobbie.test"
)

// WebhookThingData is the CloudEvent data of an event about another
// thing than a job (the types after the job ones in WebhookEvents); the
// CloudEvent's subject is the thing's id (the queue's name for a queue).
//
//	batch.completed      batch_id, queue and job_id of its callback, status
//	                     "succeeded" or "failed" (a member failed), counts
//	chain.completed      chain_id, queue and job_id of the step that ended
//	                     it, status "succeeded", "exited", "failed" or
//	                     "cancelled" (a step cancelled, or deleted before
//	                     it finished)
//	schedule.fired       schedule_id, name, queue, job_id of the job it made
//	                     (or of the one holding its unique key)
//	queue.paused         queue
//	queue.push_disabled  queue, reason
//	webhook.disabled     webhook_id, reason
//
// alert.firing and alert.resolved carry WebhookAlertData.
type WebhookThingData struct {
	BatchID    string `json:"batch_id,omitempty"`
	ChainID    string `json:"chain_id,omitempty"`
	ScheduleID string `json:"schedule_id,omitempty"`
	WebhookID  string `json:"webhook_id,omitempty"`
	Name       string `json:"name,omitempty"`
	Queue      string `json:"queue,omitempty"`
	JobID      string `json:"job_id,omitempty"`
	Status     string `json:"status,omitempty"`
	Reason     string `json:"reason,omitempty"`
	// Counts are a batch's, on batch.completed (absent on one logged
	// before the shard carried them).
	Counts *WebhookBatchCounts `json:"counts,omitempty"`
}

// WebhookBatchCounts are a completed batch's members by outcome: Failed
// are the dead, Cancelled those cancelled or deleted before they
// finished.
type WebhookBatchCounts struct {
	Jobs      int `json:"jobs"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
}

// WebhookEvents are the event names an endpoint may subscribe to: one
// per event type of the event log. "*" subscribes to all.
var WebhookEvents = []string{
	"job.enqueued", "job.started", "job.completed", "job.failed", "job.lease_released",
	"job.dead", "job.cancelled", "job.pending", "job.retried",
	"batch.completed", "chain.completed", "schedule.fired", "queue.paused", "queue.push_disabled", "webhook.disabled",
	"alert.firing", "alert.resolved", "budget.exceeded",
}

// Limits of webhooks.
const (
	MaxWebhooks            = 20   // endpoints per namespace
	MaxWebhookURLBytes     = 2048 // an endpoint's URL
	MaxWebhookDescription  = 512  // bytes
	MaxWebhookQueues       = 20   // queue patterns per endpoint
	WebhookTimeout         = 10 * time.Second
	WebhookRetryWindow     = 24 * time.Hour    // an event is retried this long, then given up
	WebhookDisableAfter    = 72 * time.Hour    // an endpoint failing this long is disabled
	WebhookDeliveryLogSize = 50                // attempts kept per endpoint
	WebhookDeliveryError   = 1024              // bytes of an attempt's error its log keeps
	WebhookSecretOverlap   = SigningKeyOverlap // a rotated-out secret signs beside the new one
)
