package wire

import (
	"encoding/json"
	"time"
)

// BulkRequest is POST /api/v1/jobs/bulk: an action on jobs named by id or
// matched by a search filter (SearchFilter's JSON).
type BulkRequest struct {
	JobIDs      []string        `json:"job_ids,omitempty"`
	Filter      json.RawMessage `json:"filter,omitempty"`
	Action      string          `json:"action"`                  // one of the Bulk* actions
	MoveToQueue string          `json:"move_to_queue,omitempty"` // move's target
	Priority    string          `json:"priority,omitempty"`      // change_priority's target
}

// BulkResult is the answer to a bulk that ran while the caller waited.
type BulkResult struct {
	Affected   int64         `json:"affected"`
	Skipped    int64         `json:"skipped"` // in another state, or already as asked
	Errors     int64         `json:"errors"`
	Failures   []BulkFailure `json:"failures"` // the first 100
	DurationMs float64       `json:"duration_ms"`
}

// BulkFailure names a job the action failed on.
type BulkFailure struct {
	JobID string `json:"job_id"`
	Error string `json:"error"`
}

// BulkAccepted is the 202 answer to a bulk by filter that matched more
// than MaxBulkSync jobs: it runs in the background.
type BulkAccepted struct {
	BulkOperationID string `json:"bulk_operation_id"`
	Status          string `json:"status"`
	EstimatedTotal  int64  `json:"estimated_total"`
	ProgressURL     string `json:"progress_url"`
}

// BulkOperation is a background bulk operation: GET /api/v1/bulk/{id},
// the data of its progress stream's events, and DELETE's answer.
type BulkOperation struct {
	ID          string     `json:"id"`
	Action      string     `json:"action"`
	Status      string     `json:"status"` // BulkProcessing, BulkCompleted or BulkCancelled
	Total       int64      `json:"total"`  // estimated at the start
	Processed   int64      `json:"processed"`
	Affected    int64      `json:"affected"`
	Skipped     int64      `json:"skipped"`
	Errors      int64      `json:"errors"`
	CreatedAt   *time.Time `json:"created_at"`
	FinishedAt  *time.Time `json:"finished_at"`
	ProgressURL string     `json:"progress_url"`
}

// BulkOperationList is GET /api/v1/bulk: the namespace's background bulk
// operations, running and finished (until pruned with the retention
// period), newest first. Pass Cursor back as ?cursor= for the next page.
type BulkOperationList struct {
	Operations []BulkOperation `json:"operations"`
	Cursor     *string         `json:"cursor"` // null on the last page
	HasMore    bool            `json:"has_more"`
}
