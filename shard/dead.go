package shard

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
)

// The dead index lists a namespace's dead jobs in order of death, twice:
// once for the whole namespace (scope "") and once under the job's queue,
// so GET /api/v1/dead with or without ?queue= is one seek.

// Dead listing limits.
const (
	defaultDeadLimit = 50
	MaxDeadLimit     = 1000
)

// deadObserver keeps the dead index in step with the state.
func (e *Engine) deadObserver(tx *replica.Tx, ns string, j *job.Job, from job.State) {
	if from == job.Dead && j.DeadAt != 0 {
		dropDeadIndex(tx, ns, j)
		j.DeadAt = 0
	}
	if j.State == job.Dead {
		j.DeadAt = tx.Now.UnixNano()
		for _, scope := range []string{"", j.Queue} {
			must(tx.Set(keys.Dead(ns, scope, j.DeadAt, j.ID), nil, nil))
		}
	}
}

func dropDeadIndex(tx *replica.Tx, ns string, j *job.Job) {
	for _, scope := range []string{"", j.Queue} {
		must(tx.Delete(keys.Dead(ns, scope, j.DeadAt, j.ID), nil))
	}
}

// DeadQuery selects a page of dead jobs.
type DeadQuery struct {
	Queue  string // "" = every queue
	Limit  int    // 0 = 50; at most 1000
	Cursor string // from the previous page; "" = the newest
}

// DeadPage is one page of dead jobs, newest first.
type DeadPage struct {
	Jobs    []DeadJob `json:"jobs"`
	Cursor  *string   `json:"cursor"`
	HasMore bool      `json:"has_more"`
}

// DeadJob is a dead job as listed.
type DeadJob struct {
	ID         string            `json:"id"`
	Queue      string            `json:"queue"`
	State      string            `json:"state"`
	Payload    json.RawMessage   `json:"payload"`
	CreatedAt  *time.Time        `json:"created_at"`
	DiedAt     *time.Time        `json:"died_at"`
	Attempt    int               `json:"attempt"`
	MaxRetries int               `json:"max_retries"`
	DeadReason string            `json:"dead_reason"`
	LastError  *string           `json:"last_error"`
	Tags       map[string]string `json:"tags"`
}

// ListDead reads a page of ns's dead jobs from local state, newest first.
func (e *Engine) ListDead(ns string, q DeadQuery) (*DeadPage, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if q.Queue != "" {
		if err := tenancy.ValidateQueue(q.Queue); err != nil {
			return nil, apierr.Field("queue", "%v", err)
		}
	}
	if q.Limit == 0 {
		q.Limit = defaultDeadLimit
	}
	if q.Limit < 1 || q.Limit > MaxDeadLimit {
		return nil, apierr.Field("limit", "limit must be between 1 and %d", MaxDeadLimit)
	}
	scope := keys.DeadScope(ns, q.Queue)
	upper := keys.PrefixEnd(scope)
	if q.Cursor != "" {
		at, id, err := parseDeadCursor(q.Cursor)
		if err != nil {
			return nil, err
		}
		upper = keys.Dead(ns, q.Queue, at, id) // exclusive: the last job shown
	}
	return e.deadPage(ns, q, scope, upper)
}

func (e *Engine) deadPage(ns string, q DeadQuery, lower, upper []byte) (*DeadPage, error) {
	db := e.node.DB()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	page := &DeadPage{Jobs: []DeadJob{}}
	var lastAt int64
	var lastID string
	for ok := it.Last(); ok; ok = it.Prev() {
		if len(page.Jobs) == q.Limit {
			page.HasMore = true
			break
		}
		at, id, err := keys.ParseDead(ns, q.Queue, it.Key())
		if err != nil {
			continue
		}
		j, err := readJob(db, ns, id)
		if err != nil {
			continue
		}
		page.Jobs = append(page.Jobs, deadView(j))
		lastAt, lastID = at, id
	}
	if page.HasMore {
		c := deadCursor(lastAt, lastID)
		page.Cursor = &c
	}
	return page, nil
}

func deadView(j *job.Job) DeadJob {
	d := DeadJob{ID: j.ID, Queue: j.Queue, State: j.State.String(), Payload: nullable(j.Payload),
		CreatedAt: ts(j.CreatedAt), DiedAt: ts(j.DeadAt), Attempt: j.Attempt, MaxRetries: j.MaxRetries,
		DeadReason: j.DeadReason, Tags: j.Tags}
	if n := len(j.Errors); n > 0 {
		d.LastError = &j.Errors[n-1].Error
	}
	return d
}

// A cursor is the (time, id) of the last job shown, opaque to callers.
func deadCursor(at int64, id string) string {
	b := binary.BigEndian.AppendUint64(nil, uint64(at))
	return base64.RawURLEncoding.EncodeToString(append(b, id...))
}

func parseDeadCursor(s string) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 8+keys.JobIDLen || jobIDOK(string(b[8:])) != nil {
		return 0, "", apierr.Field("cursor", "cursor is not one this server returned")
	}
	return int64(binary.BigEndian.Uint64(b[:8])), string(b[8:]), nil
}
