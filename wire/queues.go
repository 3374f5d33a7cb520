package wire

import (
	"encoding/json"
	"time"
)

// Queue is a queue of a namespace: GET /api/v1/queues/{name}, each queue
// of GET /api/v1/queues, and the answer to every queue setting. Its
// settings (description, paused, concurrency, throttle, defaults) are
// exactly the fields of a QueueSpec, written the way a read writes them
// (durations in FormatDuration's form), so a PUT of a spec and a GET
// compare equal; the rest is read-only. Defaults is never null: a queue
// without defaults shows every field null.
type Queue struct {
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	Counts           QueueCounts     `json:"counts"`
	Throughput       float64         `json:"throughput"`         // completed per minute, last 5 minutes
	OldestPendingAge float64         `json:"oldest_pending_age"` // seconds
	Paused           bool            `json:"paused"`
	Draining         bool            `json:"draining"`
	Drained          bool            `json:"drained"` // draining, and no job active
	Concurrency      *int64          `json:"concurrency"`
	KeyConcurrency   *KeyConcurrency `json:"key_concurrency"`
	Throttle         *Throttle       `json:"throttle"`
	Defaults         *QueueDefaults  `json:"defaults"`
	Push             *QueuePush      `json:"push"`
	// Schema is the JSON Schema every payload enqueued to the queue must
	// satisfy, in its canonical form (keys sorted, no spaces), or null.
	// SchemaVersion numbers it: each change of the schema takes the next
	// number, and a job records the version its payload was checked
	// against (0: none). Read-only.
	Schema        json.RawMessage `json:"schema"`
	SchemaVersion int64           `json:"schema_version"`

	// ThroughputPerMinute is the completions behind Throughput, per
	// one-minute bucket of the last 5, oldest first, the current minute
	// (still filling) last: always 5 entries, for a sparkline.
	ThroughputPerMinute []int64 `json:"throughput_per_minute"`
}

// QueueList is GET /api/v1/queues.
type QueueList struct {
	Queues []Queue `json:"queues"`
}

// QueueCounts are a queue's jobs per state.
type QueueCounts struct {
	Pending   int64 `json:"pending"`
	Scheduled int64 `json:"scheduled"`
	Active    int64 `json:"active"`
	Retrying  int64 `json:"retrying"`
	Completed int64 `json:"completed"`
	Dead      int64 `json:"dead"`
	Cancelled int64 `json:"cancelled"`
	Held      int64 `json:"held"` // waiting on dependencies
}

// KeyConcurrency caps a queue's active jobs per concurrency_key: at most
// Max (1 to MaxKeyConcurrency) of one key at a time. Jobs without a
// concurrency_key are not capped by it.
type KeyConcurrency struct {
	Max int64 `json:"max"`
}

// Throttle is a queue's rate limit: at most Rate fetches in any window of
// Period. It is also POST /api/v1/queues/{name}/throttle's body.
type Throttle struct {
	Rate   int64  `json:"rate"`
	Period string `json:"period"` // a duration, "1m"; the request may send seconds
}

// ThrottleRequest is POST /api/v1/queues/{name}/throttle.
type ThrottleRequest struct {
	Rate   *int64          `json:"rate"`
	Period json.RawMessage `json:"period"` // "1m", or seconds
}

// ConcurrencyRequest is POST /api/v1/queues/{name}/concurrency: max
// active jobs across all workers, or null to remove the limit.
type ConcurrencyRequest struct {
	Max json.RawMessage `json:"max"`
}

// QueueDefaults are what a queue's jobs get for the fields their producer
// left out (and a fetch without lease_duration): POST
// /api/v1/queues/{name}/defaults sends them, a queue shows them. Durations
// are "30s"-style strings (a request may send seconds; a read writes
// FormatDuration's form: "90s" reads back "1m30s"); null or absent means
// no queue default. ExpireAfter is the TTL of a job that has not started
// by then (the enqueue's expire_after).
type QueueDefaults struct {
	MaxRetries     *int            `json:"max_retries"`
	RetryBackoff   *string         `json:"retry_backoff"`
	RetryBaseDelay json.RawMessage `json:"retry_base_delay"`
	RetryMaxDelay  json.RawMessage `json:"retry_max_delay"`
	LeaseDuration  json.RawMessage `json:"lease_duration"`
	ExpireAfter    json.RawMessage `json:"expire_after"`
	Retention      json.RawMessage `json:"retention"`
}

// QueueSpec is PUT /api/v1/queues/{name}: the queue's whole
// configuration, created or replaced in one idempotent call. A field left
// out (or null) is reset to its default: description "", not paused, no
// concurrency limit, no key concurrency cap, no throttle, no queue
// defaults. Concurrency is an integer of at least 1, or null;
// KeyConcurrency is {"max": 1..MaxKeyConcurrency} or null; Throttle is
// {"rate","period"} or null.
// The answer, like GET, is the Queue.
type QueueSpec struct {
	Description string          `json:"description"`
	Paused      bool            `json:"paused"`
	Concurrency json.RawMessage `json:"concurrency"`
	// KeyConcurrency is {"max": n}; a body of its own so that a max
	// that is not an integer is refused by name.
	KeyConcurrency *KeyConcurrencyRequest `json:"key_concurrency,omitempty"`
	Throttle       *ThrottleRequest       `json:"throttle"`
	Defaults       *QueueDefaults         `json:"defaults"`
	// Push makes it a push queue; null or absent: a pull queue.
	Push *QueuePushRequest `json:"push,omitempty"`
	// Schema is a JSON Schema (draft 2020-12, at most
	// MaxQueueSchemaBytes, no remote $ref) the queue's payloads must
	// satisfy; null: any payload. Unlike the other fields, a PUT that
	// leaves it out keeps the queue's schema, so a client that does not
	// know schemas never erases one.
	Schema json.RawMessage `json:"schema,omitempty"`
}

// MaxQueueDescription bounds a queue's description, in characters.
const MaxQueueDescription = 1024

// KeyConcurrencyRequest is a QueueSpec's key_concurrency.
type KeyConcurrencyRequest struct {
	Max json.RawMessage `json:"max"`
}

// DrainResponse is POST /api/v1/queues/{name}/drain.
type DrainResponse struct {
	Queue    string `json:"queue"`
	Paused   bool   `json:"paused"`
	Draining bool   `json:"draining"`
	Active   int64  `json:"active"`
	Drained  bool   `json:"drained"`
}

// ClearResponse is POST /api/v1/queues/{name}/clear.
type ClearResponse struct {
	Queue   string `json:"queue"`
	Cleared int    `json:"cleared"`
}

// QueueDeleteResponse is DELETE /api/v1/queues/{name}?confirm=true.
type QueueDeleteResponse struct {
	Queue       string `json:"queue"`
	Deleted     bool   `json:"deleted"`
	JobsDeleted int    `json:"jobs_deleted"`
}

// QueuePush is a push queue's settings as a read shows them (GET
// /api/v1/queues/{name}'s push; null on a pull queue). Disabled is
// read-only: set when a handler answered 410 Gone, cleared by the next
// PUT of the queue.
type QueuePush struct {
	URL         string            `json:"url"`
	Mode        string            `json:"mode"`    // PushAlways or PushWhenNoWorkers
	Timeout     string            `json:"timeout"` // FormatDuration's form
	MaxInFlight int               `json:"max_in_flight"`
	Headers     map[string]string `json:"headers"`
	Disabled    *PushDisabled     `json:"disabled,omitempty"`
}

// PushDisabled says why and when the dispatcher stopped pushing a queue.
type PushDisabled struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// QueuePushRequest is a QueueSpec's push: the queue's jobs are delivered
// by POSTing them to URL (https) by the shard leader's dispatcher
// (docs/api/push.md). Mode defaults to PushAlways, Timeout (a duration,
// or seconds) to DefaultPushTimeout, MaxInFlight to
// DefaultPushMaxInFlight. Headers are sent with every delivery. Disabled
// is accepted so that a read PUT back is a valid spec, and ignored: a PUT
// enables push again.
type QueuePushRequest struct {
	URL         string            `json:"url"`
	Mode        string            `json:"mode"`
	Timeout     json.RawMessage   `json:"timeout"`
	MaxInFlight json.RawMessage   `json:"max_in_flight"`
	Headers     map[string]string `json:"headers"`
	Disabled    json.RawMessage   `json:"disabled,omitempty"`
}

// Push modes: every job by push, or by push only while no worker has
// fetched from the queue within PushWorkerWindow.
const (
	PushAlways        = "always"
	PushWhenNoWorkers = "when_no_workers"
)

// Push limits.
const (
	DefaultPushTimeout     = 30 * time.Second
	MinPushTimeout         = time.Second
	MaxPushTimeout         = 15 * time.Minute
	DefaultPushMaxInFlight = 10
	MaxPushMaxInFlight     = 1000
	MaxPushHeaders         = 20
	MaxPushHeaderBytes     = 1024 // a header's name and value together
	MaxPushHeadersBytes    = 8 << 10
	// PushWorkerWindow: a when_no_workers queue pulls while a worker
	// fetched from it this recently.
	PushWorkerWindow = 30 * time.Second
)
