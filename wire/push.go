package wire

import (
	"bytes"
	"encoding/json"
	"time"
)

// The push delivery contract: what the shard leader's push dispatcher
// (shard/push) POSTs to a push queue's URL and how it reads the answer
// (docs/api/push.md); the Go SDK's push handler speaks it too.

// MaxPushDeliveryBytes bounds a push delivery's body: a payload and a
// checkpoint at their limits, tags and the rest.
const MaxPushDeliveryBytes = MaxPayloadBytes + MaxCheckpointBytes + 64<<10

// PushDelivery is the body of a push delivery: one attempt of a job,
// shaped like a fetched job (FetchedJob) without a lease token (the
// dispatcher holds the lease).
type PushDelivery struct {
	JobID      string            `json:"job_id"`
	Queue      string            `json:"queue"`
	Payload    json.RawMessage   `json:"payload"`
	Attempt    int               `json:"attempt"`
	MaxRetries int               `json:"max_retries"`
	Tags       map[string]string `json:"tags"`
	Checkpoint json.RawMessage   `json:"checkpoint"` // what an earlier attempt saved, or null
	// Timeout is how long the dispatcher waits for the answer, in
	// seconds: the attempt's lease.
	Timeout float64 `json:"timeout"`
	// TraceParent and TraceState are the W3C trace context the job was
	// enqueued with, when it was.
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
}

// PushAnswer is the envelope a push handler may answer with. On a 2xx:
// Result is the job's result, Checkpoint and Progress are stored on the
// job. On any other status: Error (and Backtrace) is the attempt's
// error, Checkpoint is saved for the next attempt, Progress is stored,
// and NonRetryable makes the job dead at once (dead_reason
// non_retryable), whatever retries remain.
type PushAnswer struct {
	Result     json.RawMessage `json:"result,omitempty"`
	Checkpoint json.RawMessage `json:"checkpoint,omitempty"`
	Progress   json.RawMessage `json:"progress,omitempty"`
	Error      string          `json:"error,omitempty"`
	Backtrace  string          `json:"backtrace,omitempty"`
	// NonRetryable is read from a failure's envelope only.
	NonRetryable bool `json:"non_retryable,omitempty"`
}

// The keys that make an answer's body the envelope, for a success and a
// failure.
var (
	pushSuccessKeys = map[string]bool{"result": true, "checkpoint": true, "progress": true}
	pushFailureKeys = map[string]bool{"error": true, "backtrace": true, "checkpoint": true, "progress": true, "non_retryable": true}
)

// ReadPushAnswer reads an answer's body by the contract. A success's
// (2xx) body is the envelope when it is a JSON object whose keys are all
// of result, checkpoint and progress (at least one); any other JSON body
// is the result itself; an empty or non-JSON body is no result. A
// failure's body is the envelope when it is a JSON object with a string
// "error" and no keys beyond error, backtrace, checkpoint, progress and
// non_retryable;
// otherwise the answer has no envelope (ok false) and the caller uses
// the status and the body's first bytes as the error.
func ReadPushAnswer(success bool, body []byte) (a PushAnswer, ok bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || !json.Valid(body) {
		return PushAnswer{}, success
	}
	keys := pushFailureKeys
	if success {
		keys = pushSuccessKeys
	}
	var fields map[string]json.RawMessage
	envelope := json.Unmarshal(body, &fields) == nil && len(fields) > 0
	for k := range fields {
		envelope = envelope && keys[k]
	}
	if envelope && json.Unmarshal(body, &a) == nil && (success || a.Error != "") {
		a.Result, a.Checkpoint, a.Progress = notNull(a.Result), notNull(a.Checkpoint), notNull(a.Progress)
		return a, true
	}
	if success {
		return PushAnswer{Result: notNull(body)}, true
	}
	return PushAnswer{}, false
}

func notNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// WebhookKeyList is GET /api/v1/signing-keys and the answer to POST
// /api/v1/signing-keys/rotate: the namespace's public signing keys, oldest
// first. During a rotation's overlap the older keys carry NotAfter and
// sign alongside the newest until then.
type WebhookKeyList struct {
	Keys []WebhookKey `json:"keys"`
}

// WebhookKey is one public webhook signing key: Key is "whpk_<base64>", for
// client.NewWebhookVerifier.
type WebhookKey struct {
	ID       string     `json:"id"`
	Scheme   string     `json:"scheme"` // "v1a": Ed25519
	Key      string     `json:"public_key"`
	NotAfter *time.Time `json:"not_after"`
}

// SigningKeyOverlap is how long a rotated-out key keeps signing beside
// the new one.
const SigningKeyOverlap = 24 * time.Hour
