package service

import (
	"bytes"
	"context"
	"maps"
	"slices"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/shard/search"
	"github.com/jobbie/jobbie/tenancy"
)

// searchPlan is the sources of one scan and what they already guarantee.
type searchPlan struct {
	srcs []source
	// rest is the part of the filter the sources do not enforce, which
	// each candidate's record must pass.
	rest *search.Filter
	// exact: rest is empty, every candidate matches, and no record needs
	// reading to decide.
	exact bool
	// payloadOnly: rest looks at the payload alone, so a record's payload
	// is all a scan decodes to judge it.
	payloadOnly bool
	// total is the number of matches when the queue counts give it
	// (exact, no creation window); -1 otherwise.
	total int64
	// open opens a record's sealed payload and error texts in place
	// before the filter looks at them (a namespace that allows search
	// over them, sealing.go); false when it cannot, and the job does not
	// match. Nil: records are matched as stored.
	open func(j *job.Job) bool
}

// allStates is every state in the order a search without a state filter
// reads them.
var allStates = job.States()

// planSearch picks the sources for filter f over the snapshot rd.
func (s *Service) planSearch(rd pebble.Reader, ns string, f *search.Filter, r scanRange) (*searchPlan, error) {
	p := &searchPlan{total: -1}
	fail := func(err error) (*searchPlan, error) {
		for _, s := range p.srcs {
			s.close()
		}
		return nil, err
	}
	if len(f.JobIDPrefix) == keys.JobIDLen { // a whole id: one record
		var items []cand
		if j, err := engine.ReadJob(rd, ns, f.JobIDPrefix); err == nil {
			items = append(items, cand{j.CreatedAt, j.ID})
		}
		p.srcs = append(p.srcs, newListSource(items, r))
		rest := *f
		rest.JobIDPrefix = ""
		return p.finish(&rest), nil
	}
	if f.BatchID != "" { // a batch holds at most a batch's worth of jobs
		s, err := newIndexSource(rd, keys.BatchJobs(ns, f.BatchID), r)
		if err != nil {
			return fail(err)
		}
		p.srcs = append(p.srcs, s)
		rest := *f
		rest.BatchID = ""
		return p.finish(&rest), nil
	}
	if len(f.Tags) > 0 { // the first tag's index; the matcher checks the rest
		k := slices.Min(slices.Collect(maps.Keys(f.Tags)))
		s, err := newIndexSource(rd, keys.TagPrefix(ns, k, f.Tags[k]), r)
		if err != nil {
			return fail(err)
		}
		p.srcs = append(p.srcs, s)
		rest := *f
		rest.Tags = maps.Clone(f.Tags)
		delete(rest.Tags, k)
		if len(rest.Tags) == 0 {
			rest.Tags = nil
		}
		return p.finish(&rest), nil
	}
	queues, err := searchQueues(rd, ns, f.Queue, f.Scope)
	if err != nil {
		return fail(err)
	}
	states := f.States
	switch {
	case f.ByHold():
		states = []job.State{job.Held} // only a held job has a hold (Validate)
	case len(states) == 0:
		states = allStates
	}
	var total int64
	for _, st := range states {
		if st == job.Active {
			s, err := activeSource(rd, ns, f.Queue, f.Scope, r)
			if err != nil {
				return fail(err)
			}
			p.srcs = append(p.srcs, s)
			for _, q := range queues {
				total += q.Count(st)
			}
			continue
		}
		for _, q := range queues {
			n := q.Count(st)
			if n <= 0 {
				continue
			}
			total += n
			var prefixes [][]byte
			if st == job.Pending {
				for _, prio := range []job.Priority{job.Critical, job.High, job.Normal} {
					prefixes = append(prefixes, append(keys.PendingQueue(ns, q.Name), byte(prio)))
				}
				if q.Keyed > 0 {
					prefixes = append(prefixes, keyedGroups(rd, ns, q.Name)...)
				}
			} else {
				prefixes = append(prefixes, keys.StateQueue(ns, uint8(st), q.Name))
			}
			for _, pre := range prefixes {
				s, err := newIndexSource(rd, pre, r)
				if err != nil {
					return fail(err)
				}
				p.srcs = append(p.srcs, s)
			}
		}
	}
	rest := *f
	rest.Queue, rest.States, rest.Scope = "", nil, tenancy.AllQueues() // the sources hold only these
	p.finish(&rest)
	if p.exact && !f.Created.IsSet() {
		p.total = total
	}
	return p, nil
}

// finish records what the sources left for the records to decide. Every
// source enforces the creation window.
func (p *searchPlan) finish(rest *search.Filter) *searchPlan {
	rest.Created = search.TimeRange{}
	p.rest, p.exact = rest, rest.IsEmpty()
	payload := *rest
	payload.PayloadContains, payload.PayloadJQ = "", ""
	p.payloadOnly = !p.exact && payload.IsEmpty()
	return p
}

// searchQueues reads the queue records a search covers: the named queue,
// or every queue of the namespace in scope.
func searchQueues(rd pebble.Reader, ns, queue string, scope tenancy.QueueScope) ([]*engine.QueueRecord, error) {
	if queue != "" {
		q, ok := engine.ReadQueue(rd, ns, queue)
		if !ok || !scope.Allows(queue) {
			return nil, nil
		}
		return []*engine.QueueRecord{q}, nil
	}
	pre := keys.QueuePrefix(ns)
	it, err := rd.NewIter(&pebble.IterOptions{LowerBound: pre, UpperBound: keys.PrefixEnd(pre)})
	if err != nil {
		return nil, err
	}
	var out []*engine.QueueRecord
	for ok := it.First(); ok; ok = it.Next() {
		if !scope.Allows(string(it.Key()[len(pre):])) {
			continue
		}
		q := new(engine.QueueRecord)
		must(replica.Decode(it.Value(), q))
		out = append(out, q)
	}
	return out, it.Close()
}

// activeSource lists the active jobs (of queue, when set, and of the
// queues in scope) from the lease index: there are only as many as
// workers hold, so they are read whole.
func activeSource(rd pebble.Reader, ns, queue string, scope tenancy.QueueScope, r scanRange) (source, error) {
	pre := keys.TimeIndex(ns, keys.KindLease)
	it, err := rd.NewIter(&pebble.IterOptions{LowerBound: pre, UpperBound: keys.PrefixEnd(pre)})
	if err != nil {
		return nil, err
	}
	var items []cand
	for ok := it.First(); ok; ok = it.Next() {
		_, id, err := keys.ParseTimed(ns, keys.KindLease, it.Key())
		if err != nil {
			continue
		}
		j, err := engine.ReadJob(rd, ns, id)
		if err != nil || queue != "" && j.Queue != queue || !scope.Allows(j.Queue) {
			continue
		}
		items = append(items, cand{j.CreatedAt, j.ID})
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	return newListSource(items, r), nil
}

// recordReader reads job records for a scan through one long-lived
// iterator: a scan reads thousands of records in nearly key order (ids
// are time-ordered like the indexes), and a seek on an open iterator
// reuses its loaded blocks where a Get would set up and tear down a fresh
// read path each time.
type recordReader struct {
	it  *pebble.Iterator
	rd  pebble.Reader
	ns  string
	key []byte
}

func newRecordReader(rd pebble.Reader, ns string) (*recordReader, error) {
	p := keys.Job(ns, "")
	it, err := rd.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	return &recordReader{it: it, rd: rd, ns: ns}, nil
}

// read returns the job's record, or false when it is gone.
func (r *recordReader) read(id string) (*job.Job, bool) {
	if !r.seek(id) {
		return nil, false
	}
	return r.current()
}

// seek positions the reader on the job's record. Candidates arrive in
// creation order and ids are time-ordered, so the next record wanted is
// usually a step or two away: stepping there costs a fraction of a seek.
func (r *recordReader) seek(id string) bool {
	r.key = keys.AppendJob(r.key[:0], r.ns, id)
	if r.it.Valid() {
		c := bytes.Compare(r.it.Key(), r.key)
		forward := c < 0
		for range maxSteps {
			if c == 0 {
				return true
			}
			if forward && c > 0 || !forward && c < 0 {
				return false // stepped past where it would be: it is gone
			}
			ok := false
			if forward {
				ok = r.it.Next()
			} else {
				ok = r.it.Prev()
			}
			if !ok {
				break
			}
			c = bytes.Compare(r.it.Key(), r.key)
		}
	}
	return r.it.SeekGE(r.key) && bytes.Equal(r.it.Key(), r.key)
}

// maxSteps is how far a record read steps before it seeks instead.
const maxSteps = 8

// payload returns the payload of the job's record, valid until the next
// read, or false when it is gone.
func (r *recordReader) payload(id string) ([]byte, bool) {
	if !r.seek(id) {
		return nil, false
	}
	v, err := r.it.ValueAndErr()
	if err != nil {
		return nil, false
	}
	p, err := job.PayloadOf(v)
	return p, err == nil
}

// current decodes the record the reader is on.
func (r *recordReader) current() (*job.Job, bool) {
	v, err := r.it.ValueAndErr()
	if err != nil {
		return nil, false
	}
	j := new(job.Job)
	if j.Decode(v) != nil {
		return nil, false
	}
	return j, true
}

func (r *recordReader) close() { _ = r.it.Close() }

// judge reads candidate c's record as far as the plan needs and reports
// whether it matches; j is the decoded record when it does (nil for an
// exact plan, which needs no record).
func (p *searchPlan) judge(ctx context.Context, recs *recordReader, m *search.Matcher, id string) (j *job.Job, ok bool) {
	switch {
	case p.exact:
		return nil, true
	case p.payloadOnly:
		pl, found := recs.payload(id)
		cand := &job.Job{Payload: pl}
		if found && p.open != nil {
			found = p.open(cand)
		}
		if !found || !m.MatchContext(ctx, cand) {
			return nil, false
		}
		return recs.current()
	}
	if j, ok = recs.read(id); !ok {
		return nil, false
	}
	if p.open != nil && !p.open(j) {
		return nil, false
	}
	if !m.MatchContext(ctx, j) {
		return nil, false
	}
	return j, !p.rest.ByHold() || p.rest.MatchHold(recs.heldBy(j.ID))
}
