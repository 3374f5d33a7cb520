package client

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"
)

// Search sort keys (SearchRequest.Sort).
const (
	SortCreatedAt   = "created_at" // the server's default
	SortUpdatedAt   = "updated_at"
	SortScheduledAt = "scheduled_at"
	SortStartedAt   = "started_at"
	SortCompletedAt = "completed_at"
	SortPriority    = "priority"
	SortAttempt     = "attempt"
)

// Search orders (SearchRequest.Order).
const (
	OrderAsc  = "asc"
	OrderDesc = "desc" // the server's default
)

// MaxSearchLimit is the most jobs one search page may ask for.
const MaxSearchLimit = 1000

// SearchFilter selects jobs: every field that is set must match (AND), and
// a zero field does not filter. Pointers tell "not set" apart from a zero
// value the caller means (has_errors false, attempt_max 0). Bulk takes the
// same filter.
type SearchFilter struct {
	Queue    string   `json:"queue,omitempty"`
	State    []string `json:"state,omitempty"` // any of these states
	Priority Priority `json:"priority,omitempty"`
	// Tags must all be present with these values.
	Tags map[string]string `json:"tags,omitempty"`
	// PayloadContains is a substring of the JSON-serialized payload.
	PayloadContains string `json:"payload_contains,omitempty"`
	// PayloadJQ is a jq expression the payload must satisfy, e.g.
	// `.amount > 100`. A scan by it is bounded in time: see SearchPage.Partial.
	PayloadJQ string `json:"payload_jq,omitempty"`

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
	ErrorContains string `json:"error_contains,omitempty"` // substring of an error message
	BatchID       string `json:"batch_id,omitempty"`
	UniqueKey     string `json:"unique_key,omitempty"`
	AttemptMin    *int   `json:"attempt_min,omitempty"`
	AttemptMax    *int   `json:"attempt_max,omitempty"`
	JobIDPrefix   string `json:"job_id_prefix,omitempty"`
}

// SearchRequest is one page's worth of search. The filter is embedded
// because the wire puts its fields next to sort, order, cursor and limit.
type SearchRequest struct {
	SearchFilter
	Sort   string `json:"sort,omitempty"`   // a Sort constant; "" = created_at
	Order  string `json:"order,omitempty"`  // OrderAsc or OrderDesc; "" = desc
	Cursor string `json:"cursor,omitempty"` // SearchPage.Cursor of the previous page
	Limit  int    `json:"limit,omitempty"`  // jobs per page, 1..MaxSearchLimit; 0 = 50
}

// SearchPage is one page of search results.
type SearchPage struct {
	Jobs []SearchJob
	// Total is how many jobs match in all; an estimate unless TotalExact.
	Total      int64
	TotalExact bool
	// Cursor continues with the next page; "" when there is none.
	Cursor  string
	HasMore bool
	// Duration is how long the server took for this page.
	Duration time.Duration
	// Partial says a payload_jq scan ran out of its time budget and this
	// page holds what it had found; Cursor continues the scan.
	Partial bool
}

// SearchJob is a job as search lists it: its detail without the timeline,
// plus the message of its last error.
type SearchJob struct {
	JobDetail
	LastError string // "" when the job never failed
	// Raw is the job object as the server sent it, for passing it on
	// unchanged (the CLI's --output json prints it).
	Raw json.RawMessage
}

// UnmarshalJSON decodes the job detail the way GetJob does and keeps the
// raw object. It must be declared: JobDetail's would be promoted and
// drop LastError.
func (j *SearchJob) UnmarshalJSON(b []byte) error {
	var d JobDetail
	if err := d.UnmarshalJSON(b); err != nil {
		return err
	}
	var extra struct {
		LastError string `json:"last_error"`
	}
	if err := json.Unmarshal(b, &extra); err != nil {
		return err
	}
	*j = SearchJob{JobDetail: d, LastError: extra.LastError, Raw: append(json.RawMessage(nil), b...)}
	return nil
}

type searchPageWire struct {
	Jobs       []SearchJob `json:"jobs"`
	Total      int64       `json:"total"`
	TotalExact bool        `json:"total_exact"`
	Cursor     *string     `json:"cursor"`
	HasMore    bool        `json:"has_more"`
	DurationMS float64     `json:"duration_ms"`
	Partial    bool        `json:"partial"`
}

// Search returns one page of the jobs req selects. To walk every page,
// use SearchPages or SearchAll.
func (c *Client) Search(ctx context.Context, req SearchRequest) (*SearchPage, error) {
	var w searchPageWire
	if _, err := c.do(ctx, "POST", "/api/v1/jobs/search", req, &w); err != nil {
		return nil, err
	}
	p := &SearchPage{
		Jobs: w.Jobs, Total: w.Total, TotalExact: w.TotalExact, HasMore: w.HasMore,
		Duration: time.Duration(w.DurationMS * float64(time.Millisecond)), Partial: w.Partial,
	}
	if w.Cursor != nil {
		p.Cursor = *w.Cursor
	}
	return p, nil
}

// errNoCursor stops a walk that would otherwise restart from the top.
var errNoCursor = errors.New("jobbie: search: the server said has_more but sent no cursor")

// SearchPages yields the pages of req one after another, following
// cursors from req.Cursor on, until a page says there is no more, the
// caller stops ranging, or an error (yielded with a nil page, and last).
func (c *Client) SearchPages(ctx context.Context, req SearchRequest) iter.Seq2[*SearchPage, error] {
	return func(yield func(*SearchPage, error) bool) {
		for {
			page, err := c.Search(ctx, req)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(page, nil) || !page.HasMore {
				return
			}
			if page.Cursor == "" {
				yield(nil, errNoCursor)
				return
			}
			req.Cursor = page.Cursor
		}
	}
}

// SearchAll yields every job req selects, page after page (req.Limit is
// the page size). An error is yielded last, with a zero job. Use
// SearchPages to see totals and partial pages.
func (c *Client) SearchAll(ctx context.Context, req SearchRequest) iter.Seq2[SearchJob, error] {
	return func(yield func(SearchJob, error) bool) {
		for page, err := range c.SearchPages(ctx, req) {
			if err != nil {
				yield(SearchJob{}, err)
				return
			}
			for _, j := range page.Jobs {
				if !yield(j, nil) {
					return
				}
			}
		}
	}
}
