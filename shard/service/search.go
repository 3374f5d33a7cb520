package service

import (
	"context"
	"runtime"
	"slices"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/search"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Search budgets. A page may scan for Config.SearchBudget; when it runs out the
// page holds what was found, marked partial, and its cursor continues the
// scan. Counting the matches beyond a full page gets countBudget more, so
// a selective filter over many candidates answers quickly with a total
// that says it is a lower bound.
const (
	DefaultSearchBudget = time.Second
	countBudget         = 50 * time.Millisecond
	checkEvery          = 8 // candidates between clock reads and yields (overBudget)
	// maxSorted bounds the matches a search with another sort key than
	// created_at holds in memory to sort; past it the page is partial.
	maxSorted = 100_000
)

// SearchResult is one page of a search.
type SearchResult struct {
	Jobs       []*job.Job
	Total      int64 // matches in all; a lower bound unless TotalExact
	TotalExact bool
	Cursor     string // "" when there is no next page
	HasMore    bool
	Partial    bool // the budget ran out before the page was complete
	Scanned    int  // candidates looked at
}

// Search runs one page of a search over the namespace's local state, read
// from one Pebble snapshot. Under a limited scope a queue filtered on must
// be in it, and only jobs of queues in it are found and counted.
func (s *Service) Search(ctx context.Context, ns string, sc tenancy.QueueScope, r *search.Request) (*SearchResult, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if _, err := search.Compile(&r.Filter); err != nil {
		return nil, err
	}
	if err := scopeFilter(&r.Filter, "", sc); err != nil {
		return nil, err
	}
	if r.Limit <= 0 {
		r.Limit = wire.DefaultSearchLimit
	}
	snap := s.node.DB().NewSnapshot()
	defer snap.Close()
	ctx = withBudget(ctx, s.cfg.SearchBudget)
	if r.Sort == "" || r.Sort == wire.SortCreatedAt {
		return s.searchByCreated(ctx, snap, ns, r)
	}
	return s.searchSorted(ctx, snap, ns, r)
}

func scanRangeOf(r *search.Request, desc bool) scanRange {
	sr := scanRange{desc: desc, lo: r.Created.After, hi: r.Created.Before}
	if r.After != nil {
		sr.from = &cand{r.After.Value, r.After.ID}
	}
	return sr
}

// searchByCreated streams the merged sources in creation order: a page
// stops once it is full and one more match shows there is a next page.
func (s *Service) searchByCreated(ctx context.Context, snap *pebble.Snapshot, ns string, r *search.Request) (*SearchResult, error) {
	desc := r.Order != wire.OrderAsc
	sc, err := s.openScan(snap, ns, &r.Filter, scanRangeOf(r, desc))
	if err != nil {
		return nil, err
	}
	defer sc.close()
	out := &SearchResult{}
	var matches int64
	var last cand
	var countUntil time.Time
	done := false
	for {
		if (out.Scanned+1)%checkEvery == 0 {
			if overBudget(ctx) || !countUntil.IsZero() && time.Now().After(countUntil) {
				break
			}
		}
		c, j, match, ok := sc.next(ctx)
		if !ok {
			done = true
			break
		}
		out.Scanned++
		full := len(out.Jobs) == r.Limit
		last = c
		if !match {
			continue
		}
		if !full && j == nil { // an exact plan reads a record only to show it
			if j, ok = sc.recs.read(c.id); !ok {
				continue // an index entry without its record: never in one snapshot
			}
		}
		matches++
		if !full {
			out.Jobs = append(out.Jobs, j)
			continue
		}
		out.HasMore = true
		if sc.total >= 0 {
			break // the counts give the total: no need to count
		}
		if countUntil.IsZero() {
			countUntil = time.Now().Add(countBudget)
		}
	}
	switch {
	case sc.total >= 0:
		out.Total, out.TotalExact = sc.total, true
	default:
		out.Total, out.TotalExact = matches, done
	}
	if !done && !out.HasMore { // the budget ran out before the page filled
		out.Partial, out.HasMore = true, true
		out.Cursor = search.EncodeCursor(search.Cursor{Value: last.created, ID: last.id}, r.Fingerprint())
		if last.id == "" && r.After != nil {
			out.Cursor = r.Cursor // nothing scanned: stay where the caller was
		}
		return out, nil
	}
	if out.HasMore {
		out.Cursor = r.NextCursor(out.Jobs[len(out.Jobs)-1])
	}
	return out, nil
}

// searchSorted serves the other sort keys: it collects every match within
// the budget, sorts them and cuts the page after the cursor.
func (s *Service) searchSorted(ctx context.Context, snap *pebble.Snapshot, ns string, r *search.Request) (*SearchResult, error) {
	sc, err := s.openScan(snap, ns, &r.Filter, scanRangeOf(&search.Request{Filter: r.Filter}, true))
	if err != nil {
		return nil, err
	}
	defer sc.close()
	out := &SearchResult{}
	var all []*job.Job
	done := false
	for {
		if (out.Scanned+1)%checkEvery == 0 && overBudget(ctx) {
			break
		}
		c, j, match, ok := sc.next(ctx)
		if !ok {
			done = true
			break
		}
		out.Scanned++
		if match && j == nil {
			j, match = sc.recs.read(c.id)
		}
		if !match {
			continue
		}
		all = append(all, j)
		if len(all) == maxSorted {
			break
		}
	}
	out.Total, out.TotalExact, out.Partial = int64(len(all)), done, !done
	if sc.total >= 0 && done {
		out.Total = sc.total
	}
	slices.SortFunc(all, func(a, b *job.Job) int {
		if search.Before(a, b, r.Sort, r.Order) {
			return -1
		}
		if search.Before(b, a, r.Sort, r.Order) {
			return 1
		}
		return 0
	})
	if r.After != nil {
		all = slices.DeleteFunc(all, func(j *job.Job) bool { return !search.AfterCursor(j, *r.After, r.Sort, r.Order) })
	}
	if len(all) > r.Limit {
		all = all[:r.Limit]
		out.HasMore = true
		out.Cursor = r.NextCursor(all[len(all)-1])
	}
	out.Jobs = all
	return out, nil
}

// scan is one pass over a filter's candidates: the plan, the matcher of
// what its sources leave to the records, the merged sources and the
// record reader.
type scan struct {
	*searchPlan
	m    *search.Matcher
	src  *merged
	recs *recordReader
}

func (s *Service) openScan(rd pebble.Reader, ns string, f *search.Filter, r scanRange) (*scan, error) {
	plan, err := s.planSearch(rd, ns, f, r)
	if err != nil {
		return nil, err
	}
	if plan.open, err = s.searchOpener(ns, f); err != nil {
		return nil, err
	}
	sc := &scan{searchPlan: plan, src: newMerged(plan.srcs, r.desc)}
	if sc.m, err = search.Compile(plan.rest); err == nil {
		sc.recs, err = newRecordReader(rd, ns)
	}
	if err != nil {
		sc.close()
		return nil, err
	}
	return sc, nil
}

// next is the next candidate and whether it matches (j: its record, nil
// for an exact plan).
func (sc *scan) next(ctx context.Context) (c cand, j *job.Job, match, ok bool) {
	if c, ok = sc.src.next(); !ok {
		return c, nil, false, false
	}
	j, match = sc.judge(ctx, sc.recs, sc.m, c.id)
	return c, j, match, true
}

func (sc *scan) close() {
	sc.src.close()
	if sc.recs != nil {
		sc.recs.close()
	}
}

// The scan budget rides in the context as a deadline of its own, not as a
// context deadline: the matcher stops evaluating under a done context,
// and a page that ran out of time must still judge what it scanned.
type budgetKey struct{}

// budget is a scan's: when it ends, and what it yields to between
// candidates.
type budget struct {
	until time.Time
	yield func()
}

type yieldKey struct{}

// WithYield returns ctx carrying f, which a scan (a search page, a bulk
// step) made with it calls every checkEvery candidates. The HTTP layer's
// f pauses a heavy read while the node's lifecycle requests work, so the
// read takes the CPU they leave; the pause counts against the scan's
// budget, whose page then holds less and says so (partial). Without one,
// a scan yields the core to whatever else is runnable (runtime.Gosched),
// so a request that became runnable meanwhile runs now, not after the
// scheduler's time slice of a scan that never blocks.
func WithYield(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, yieldKey{}, f)
}

func withBudget(ctx context.Context, d time.Duration) context.Context {
	b := &budget{until: time.Now().Add(d), yield: runtime.Gosched}
	if f, _ := ctx.Value(yieldKey{}).(func()); f != nil {
		b.yield = f
	}
	return context.WithValue(ctx, budgetKey{}, b)
}

// overBudget yields (WithYield), then reports whether the scan should
// stop: its budget ran out or the caller went away.
func overBudget(ctx context.Context) bool {
	b, _ := ctx.Value(budgetKey{}).(*budget)
	if b != nil {
		b.yield()
	}
	if ctx.Err() != nil {
		return true
	}
	return b != nil && time.Now().After(b.until)
}

// SearchPage is Search with its jobs as the API shows them (the job
// detail without its timeline, and the last error).
func (s *Service) SearchPage(ctx context.Context, ns string, sc tenancy.QueueScope, r *search.Request) (*wire.SearchPage, error) {
	res, err := s.Search(ctx, ns, sc, r)
	if err != nil {
		return nil, err
	}
	out := &wire.SearchPage{Jobs: make([]wire.SearchJob, len(res.Jobs)), Total: res.Total, TotalExact: res.TotalExact,
		HasMore: res.HasMore, Partial: res.Partial}
	for i, j := range res.Jobs {
		if j, err = s.openJob(ns, j); err != nil {
			return nil, err
		}
		d := detailView(j)
		d.Timeline = nil
		if j.State == job.Held { // what holds it; other jobs' AI records are not read
			d.HeldReason, d.HeldBudget = heldView(s.heldBy(ns, j.ID))
		}
		out.Jobs[i] = wire.SearchJob{JobDetail: *d}
		if n := len(j.Errors); n > 0 {
			out.Jobs[i].LastError = j.Errors[n-1].Error
		}
	}
	if res.Cursor != "" {
		out.Cursor = &res.Cursor
	}
	return out, nil
}
