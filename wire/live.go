package wire

import "time"

// Worker is one worker in GET /api/v1/workers.
type Worker struct {
	ID           string    `json:"id"`
	Hostname     string    `json:"hostname"`
	Queues       []string  `json:"queues"`
	ActiveJobs   int       `json:"active_jobs"`
	ActiveJobIDs []string  `json:"active_job_ids"` // the first 100
	LastSeen     time.Time `json:"last_seen"`
	Status       string    `json:"status"` // WorkerActive or WorkerGone
	// Draining says the worker was asked to stop taking jobs (POST
	// /api/v1/workers/{id}/drain).
	Draining bool `json:"draining"`
}

// WorkerDrainHeader is set ("true") on a fetch's answer to a draining
// worker: it gets no job, and should finish what it holds and stop.
const WorkerDrainHeader = "Jobbie-Worker-Drain"

// WorkerDrainResponse is the answer to POST /api/v1/workers/{id}/drain.
type WorkerDrainResponse struct {
	WorkerID string `json:"worker_id"`
	Draining bool   `json:"draining"`
}

// WorkerList is GET /api/v1/workers.
type WorkerList struct {
	Workers []Worker `json:"workers"`
}

// Event is the data of one event of GET /api/v1/events (Server-Sent
// Events; the event's SSE id resumes the stream after it).
type Event struct {
	Type     string    `json:"type"` // one of the Event* types
	JobID    string    `json:"job_id"`
	Queue    string    `json:"queue"`
	State    string    `json:"state"`
	From     string    `json:"from,omitempty"` // the state it left; absent for a new job
	At       time.Time `json:"at"`
	Attempt  int       `json:"attempt"`
	WorkerID string    `json:"worker_id,omitempty"`
	// DeadReason is a dead event's dead_reason when the job's worker
	// failed it as non-retryable ("non_retryable").
	DeadReason string `json:"dead_reason,omitempty"`
}

// Event types.
const (
	EventEnqueued  = "enqueued"
	EventStarted   = "started"
	EventCompleted = "completed"
	EventFailed    = "failed" // an attempt failed: retrying, or pending after a lost lease
	EventDead      = "dead"
	EventCancelled = "cancelled"
	EventPending   = "pending" // a scheduled or retrying job became due
	EventRetried   = "retried" // a finished job retried by hand
)
