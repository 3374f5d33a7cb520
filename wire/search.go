package wire

import "time"

// Search sort keys (SearchRequest.Sort) and orders.
const (
	SortCreatedAt   = "created_at" // the default
	SortUpdatedAt   = "updated_at"
	SortScheduledAt = "scheduled_at"
	SortStartedAt   = "started_at"
	SortCompletedAt = "completed_at"
	SortPriority    = "priority"
	SortAttempt     = "attempt"

	OrderAsc  = "asc"
	OrderDesc = "desc" // the default

	DefaultSearchLimit = 50
	MaxSearchLimit     = 1000
)

// SearchFilter selects jobs: every field that is set must match (AND).
// Pointers tell "not set" apart from a zero the caller means (has_errors
// false, attempt_max 0). Bulk takes the same filter.
type SearchFilter struct {
	Queue           string            `json:"queue,omitempty"`
	State           []string          `json:"state,omitempty"` // any of these states
	Priority        string            `json:"priority,omitempty"`
	Tags            map[string]string `json:"tags,omitempty"`             // all present with these values
	PayloadContains string            `json:"payload_contains,omitempty"` // a substring of the payload's JSON
	PayloadJQ       string            `json:"payload_jq,omitempty"`       // a jq condition, e.g. `.amount > 100`

	CreatedAfter    *time.Time `json:"created_after,omitempty"`
	CreatedBefore   *time.Time `json:"created_before,omitempty"`
	ScheduledAfter  *time.Time `json:"scheduled_after,omitempty"`
	ScheduledBefore *time.Time `json:"scheduled_before,omitempty"`
	StartedAfter    *time.Time `json:"started_after,omitempty"`
	StartedBefore   *time.Time `json:"started_before,omitempty"`
	CompletedAfter  *time.Time `json:"completed_after,omitempty"`
	CompletedBefore *time.Time `json:"completed_before,omitempty"`
	ExpireAfter     *time.Time `json:"expire_after,omitempty"`
	ExpireBefore    *time.Time `json:"expire_before,omitempty"`

	WorkerID      string `json:"worker_id,omitempty"` // processed by this worker
	HasErrors     *bool  `json:"has_errors,omitempty"`
	ErrorContains string `json:"error_contains,omitempty"` // a substring of an error message
	BatchID       string `json:"batch_id,omitempty"`
	UniqueKey     string `json:"unique_key,omitempty"`
	// ConcurrencyKey and FairnessKey match a job's keys exactly.
	ConcurrencyKey string `json:"concurrency_key,omitempty"`
	FairnessKey    string `json:"fairness_key,omitempty"`
	AttemptMin     *int   `json:"attempt_min,omitempty"`
	AttemptMax     *int   `json:"attempt_max,omitempty"`
	JobIDPrefix    string `json:"job_id_prefix,omitempty"`
	// HeldReason "budget" matches the jobs an AI budget holds;
	// HeldBudget those one budget holds (docs/api/ai.md).
	HeldReason string `json:"held_reason,omitempty"`
	HeldBudget string `json:"held_budget,omitempty"`
}

// SearchRequest is POST /api/v1/jobs/search: the filter's fields inline,
// then the page's sort, order, cursor and limit.
type SearchRequest struct {
	SearchFilter
	Sort   string `json:"sort,omitempty"`
	Order  string `json:"order,omitempty"`
	Cursor string `json:"cursor,omitempty"` // SearchPage.Cursor of the previous page
	Limit  int    `json:"limit,omitempty"`  // 1..MaxSearchLimit; default DefaultSearchLimit
}

// SearchPage is one page of a search.
type SearchPage struct {
	Jobs       []SearchJob `json:"jobs"`
	Total      int64       `json:"total"` // a lower bound unless TotalExact
	TotalExact bool        `json:"total_exact"`
	Cursor     *string     `json:"cursor"` // null on the last page
	HasMore    bool        `json:"has_more"`
	DurationMs float64     `json:"duration_ms"`
	Partial    bool        `json:"partial"` // the scan's time budget ran out; Cursor continues it
}

// SearchJob is a job as a search lists it: its detail without the
// timeline, and its last error.
type SearchJob struct {
	JobDetail
	LastError string `json:"last_error,omitempty"`
}
