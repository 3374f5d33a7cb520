package service

import (
	"encoding/base64"
	"encoding/binary"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// DeadQuery selects a page of dead jobs.
type DeadQuery struct {
	Queue  string // "" = every queue
	Limit  int    // 0 = wire.DefaultDeadLimit; at most wire.MaxDeadLimit
	Cursor string // from the previous page; "" = the newest
}

// ListDead reads a page of ns's dead jobs from local state, newest first.
// The dead index lists them twice, for the namespace and per queue, so
// either listing is one seek. Under a limited scope a queue asked for must
// be in it, and a listing of every queue merges the lists of the queues in
// it, in the namespace list's order, so its cursors are alike and the page
// never reads a job outside.
func (s *Service) ListDead(ns string, sc tenancy.QueueScope, q DeadQuery) (*wire.DeadPage, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if q.Queue != "" {
		if err := tenancy.ValidateQueue(q.Queue); err != nil {
			return nil, apierr.Field("queue", "%v", err)
		}
		if err := AllowQueue(sc, "queue", q.Queue); err != nil {
			return nil, err
		}
	}
	if q.Limit == 0 {
		q.Limit = wire.DefaultDeadLimit
	}
	if q.Limit < 1 || q.Limit > wire.MaxDeadLimit {
		return nil, apierr.Field("limit", "limit must be between 1 and %d", wire.MaxDeadLimit)
	}
	var from *deadPos
	if q.Cursor != "" {
		at, id, err := parseDeadCursor(q.Cursor)
		if err != nil {
			return nil, err
		}
		from = &deadPos{at, id}
	}
	scopes := []string{q.Queue} // "": the namespace's list
	if q.Queue == "" && !sc.All() {
		var err error
		if scopes, err = s.deadQueues(ns, sc); err != nil {
			return nil, err
		}
	}
	return s.deadPage(ns, q.Limit, scopes, from)
}

// deadQueues names the queues of ns in sc that hold dead jobs.
func (s *Service) deadQueues(ns string, sc tenancy.QueueScope) ([]string, error) {
	db := s.node.DB()
	names, err := queueNames(db, ns, sc, -1)
	if err != nil {
		return nil, err
	}
	out := names[:0]
	for _, name := range names {
		if r, ok := s.eng.Queue(db, ns, name); ok && r.Count(job.Dead) > 0 {
			out = append(out, name)
		}
	}
	return out, nil
}

// deadPos is a place in the dead index: a job's time of death and id.
type deadPos struct {
	at int64
	id string
}

func (p deadPos) after(o deadPos) bool { return p.at > o.at || p.at == o.at && p.id > o.id }

// deadList walks one list of the dead index (a queue's, or the
// namespace's for scope ""), newest first.
type deadList struct {
	it    *pebble.Iterator
	scope string
	at    deadPos
	ok    bool
}

// next moves to the next entry, passing over keys that do not parse.
func (l *deadList) next(ns string, first bool) {
	for {
		if first {
			l.ok, first = l.it.Last(), false
		} else {
			l.ok = l.it.Prev()
		}
		if !l.ok {
			return
		}
		if at, id, err := keys.ParseDead(ns, l.scope, l.it.Key()); err == nil {
			l.at = deadPos{at, id}
			return
		}
	}
}

// deadPage reads up to limit dead jobs before from (nil: the newest),
// merging the lists of scopes.
func (s *Service) deadPage(ns string, limit int, scopes []string, from *deadPos) (*wire.DeadPage, error) {
	db := s.node.DB()
	lists := make([]*deadList, 0, len(scopes))
	defer func() {
		for _, l := range lists {
			_ = l.it.Close()
		}
	}()
	for _, sc := range scopes {
		lower := keys.DeadScope(ns, sc)
		upper := keys.PrefixEnd(lower)
		if from != nil {
			upper = keys.Dead(ns, sc, from.at, from.id) // exclusive: the last job shown
		}
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			return nil, err
		}
		l := &deadList{it: it, scope: sc}
		lists = append(lists, l)
		l.next(ns, true)
	}
	page := &wire.DeadPage{Jobs: []wire.DeadJob{}}
	var last deadPos
	for {
		var top *deadList
		for _, l := range lists {
			if l.ok && (top == nil || l.at.after(top.at)) {
				top = l
			}
		}
		if top == nil {
			break
		}
		if len(page.Jobs) == limit {
			page.HasMore = true
			break
		}
		if j, err := engine.ReadJob(db, ns, top.at.id); err == nil {
			if j, err = s.openJob(ns, j); err != nil {
				return nil, err
			}
			page.Jobs = append(page.Jobs, deadView(j))
			last = top.at
		}
		top.next(ns, false)
	}
	if page.HasMore {
		c := deadCursor(last.at, last.id)
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
