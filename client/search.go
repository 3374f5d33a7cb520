package client

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Search sort keys (SearchRequest.Sort).
const (
	SortCreatedAt   = wire.SortCreatedAt // the server's default
	SortUpdatedAt   = wire.SortUpdatedAt
	SortScheduledAt = wire.SortScheduledAt
	SortStartedAt   = wire.SortStartedAt
	SortCompletedAt = wire.SortCompletedAt
	SortPriority    = wire.SortPriority
	SortAttempt     = wire.SortAttempt
)

// Search orders (SearchRequest.Order).
const (
	OrderAsc  = wire.OrderAsc
	OrderDesc = wire.OrderDesc // the server's default
)

// MaxSearchLimit is the most jobs one search page may ask for.
const MaxSearchLimit = wire.MaxSearchLimit

// SearchFilter selects jobs: every field that is set must match (AND), and
// a zero field does not filter. Pointers tell "not set" apart from a zero
// value the caller means (has_errors false, attempt_max 0). PayloadJQ is a
// jq expression the payload must satisfy, e.g. `.amount > 100`; a scan by
// it is bounded in time (see SearchPage.Partial). Bulk takes the same
// filter.
type SearchFilter = wire.SearchFilter

// SearchRequest is one page's worth of search: a filter, then Sort (a Sort
// constant; "" = created_at), Order (OrderAsc or OrderDesc; "" = desc),
// Cursor (SearchPage.Cursor of the previous page) and Limit (jobs per
// page, 1..MaxSearchLimit; 0 = 50).
type SearchRequest = wire.SearchRequest

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

// UnmarshalJSON reads a wire.SearchJob the way GetJob reads a job, and
// keeps the raw object.
func (j *SearchJob) UnmarshalJSON(b []byte) error {
	var w wire.SearchJob
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*j = SearchJob{LastError: w.LastError, Raw: append(json.RawMessage(nil), b...)}
	return j.JobDetail.fromWire(&w.JobDetail)
}

// Search returns one page of the jobs req selects. To walk every page,
// use SearchPages or SearchAll.
func (c *Client) Search(ctx context.Context, req SearchRequest) (*SearchPage, error) {
	// wire.SearchPage, but its jobs decoded as SearchJob so that each keeps
	// its raw JSON: the outer field shadows the embedded one.
	var w struct {
		wire.SearchPage
		Jobs []SearchJob `json:"jobs"`
	}
	if _, err := c.do(ctx, "POST", "/api/v1/jobs/search", req, &w); err != nil {
		return nil, err
	}
	return &SearchPage{
		Jobs: w.Jobs, Total: w.Total, TotalExact: w.TotalExact, Cursor: deref(w.Cursor), HasMore: w.HasMore,
		Duration: time.Duration(w.DurationMs * float64(time.Millisecond)), Partial: w.Partial,
	}, nil
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
