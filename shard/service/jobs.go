package service

import (
	"context"
	"encoding/base64"
	"encoding/binary"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Job management: validate, propose, return the handler's outcome. An
// unknown id (or one of another namespace) is 404; a state the operation
// does not allow is 409 naming the state.

// GetJob reads a job from local state.
func (s *Service) GetJob(ns, id string) (*wire.JobDetail, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if err := jobIDOK(id); err != nil {
		return nil, apierr.New(apierr.NotFound, "job %s not found", id)
	}
	j, err := engine.ReadJob(s.node.DB(), ns, id)
	if err != nil {
		return nil, err
	}
	return detailView(j), nil
}

// RetryJob puts a completed, dead or cancelled job back to pending.
func (s *Service) RetryJob(ctx context.Context, ns, id string) (*wire.JobOpResponse, error) {
	st, err := jobOp(ctx, s, engine.JobRetry, &engine.JobOpCmd{NS: ns, ID: id})
	if err != nil {
		return nil, err
	}
	return &wire.JobOpResponse{JobID: id, Status: st.String()}, nil
}

// CancelJob cancels a job: wire.CancelDone, or wire.CancelRequested for
// an active job whose worker is told by its next heartbeat.
func (s *Service) CancelJob(ctx context.Context, ns, id string) (string, error) {
	return jobOp(ctx, s, engine.JobCancel, &engine.JobOpCmd{NS: ns, ID: id})
}

// MoveJob moves a job that is not active to another queue.
func (s *Service) MoveJob(ctx context.Context, ns, id string, r *wire.MoveRequest) (*wire.JobOpResponse, error) {
	if r.Queue == "" {
		return nil, apierr.Field("queue", "queue is required")
	}
	if err := tenancy.ValidateQueue(r.Queue); err != nil {
		return nil, apierr.Field("queue", "%v", err)
	}
	st, err := jobOp(ctx, s, engine.JobMove, &engine.JobOpCmd{NS: ns, ID: id, Queue: r.Queue})
	if err != nil {
		return nil, err
	}
	return &wire.JobOpResponse{JobID: id, Status: st.String(), Queue: r.Queue}, nil
}

// DeleteJob removes a job that is not active, with all its index entries.
// An active job is refused (409): cancel it first, so no worker holds a
// job that no longer exists. An unfinished job deleted counts as failed
// for its batch and for the jobs that depend on it.
func (s *Service) DeleteJob(ctx context.Context, ns, id string) error {
	_, err := jobOp(ctx, s, engine.JobDiscard, &engine.JobOpCmd{NS: ns, ID: id})
	return err
}

func jobOp[R any](ctx context.Context, s *Service, op replica.Op[engine.JobOpCmd, R], c *engine.JobOpCmd) (R, error) {
	var zero R
	if err := namespaceOK(c.NS); err != nil {
		return zero, err
	}
	if err := jobIDOK(c.ID); err != nil {
		return zero, err
	}
	return op.Propose(ctx, s.node, c)
}

// DeadQuery selects a page of dead jobs.
type DeadQuery struct {
	Queue  string // "" = every queue
	Limit  int    // 0 = wire.DefaultDeadLimit; at most wire.MaxDeadLimit
	Cursor string // from the previous page; "" = the newest
}

// ListDead reads a page of ns's dead jobs from local state, newest first.
// The dead index lists them twice, for the namespace and per queue, so
// either listing is one seek.
func (s *Service) ListDead(ns string, q DeadQuery) (*wire.DeadPage, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if q.Queue != "" {
		if err := tenancy.ValidateQueue(q.Queue); err != nil {
			return nil, apierr.Field("queue", "%v", err)
		}
	}
	if q.Limit == 0 {
		q.Limit = wire.DefaultDeadLimit
	}
	if q.Limit < 1 || q.Limit > wire.MaxDeadLimit {
		return nil, apierr.Field("limit", "limit must be between 1 and %d", wire.MaxDeadLimit)
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
	return s.deadPage(ns, q, scope, upper)
}

func (s *Service) deadPage(ns string, q DeadQuery, lower, upper []byte) (*wire.DeadPage, error) {
	db := s.node.DB()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	page := &wire.DeadPage{Jobs: []wire.DeadJob{}}
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
		j, err := engine.ReadJob(db, ns, id)
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
