package service

import (
	"context"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// fetchCmd validates a fetch and builds its command, with the wait it
// asks for.
func fetchCmd(ns string, r *wire.FetchRequest) (engine.FetchCmd, int64, error) {
	if err := namespaceOK(ns); err != nil {
		return engine.FetchCmd{}, 0, err
	}
	if len(r.Queues) == 0 {
		return engine.FetchCmd{}, 0, apierr.Field("queues", "queues must name at least one queue")
	}
	if len(r.Queues) > wire.MaxFetchQueues {
		return engine.FetchCmd{}, 0, apierr.Field("queues", "at most %d queues per fetch", wire.MaxFetchQueues)
	}
	for _, q := range r.Queues {
		if err := tenancy.ValidateQueue(q); err != nil {
			return engine.FetchCmd{}, 0, apierr.Field("queues", "%v", err)
		}
	}
	if len(r.WorkerID) > wire.MaxWorkerID || len(r.Hostname) > wire.MaxWorkerID {
		return engine.FetchCmd{}, 0, apierr.Field("worker_id", "worker_id and hostname must be at most %d bytes", wire.MaxWorkerID)
	}
	wait, err := wire.FetchWait(r.Timeout)
	if err != nil {
		return engine.FetchCmd{}, 0, apierr.Field("timeout", "%v", err)
	}
	lease, err := wire.LeaseFor(r.LeaseDuration)
	if err != nil {
		return engine.FetchCmd{}, 0, apierr.Field("lease_duration", "%v", err)
	}
	return engine.FetchCmd{NS: ns, Queues: r.Queues, WorkerID: r.WorkerID, Hostname: r.Hostname,
		LeaseNs: int64(lease), LeaseDefault: r.LeaseDuration == nil, Named: true}, int64(wait), nil
}

// Gone reports whether the worker a fetch answers has gone away (its
// connection closed). It must be cheap (one syscall): a fetch asks when a
// wake-up ends its wait, and once it holds jobs. nil: the caller cannot
// tell.
type Gone func() bool

// News is what a worker's fetch/batch waits for besides jobs: each call
// answers whether the worker has news for it now (live.Workers.News),
// which ends the wait, or else the channel that closes when it may have.
// nil: none.
type News func() (<-chan struct{}, bool)

// Fetch leases the next job of the queues to the worker, waiting up to the
// request's timeout for one to arrive. It returns nil when none came, or
// when the worker went away (gone): a worker that left while it waited is
// leased nothing, and a job leased as it went is released at once.
func (s *Service) Fetch(ctx context.Context, ns string, r *wire.FetchRequest, gone Gone) (*wire.FetchedJob, error) {
	c, wait, err := fetchCmd(ns, r)
	if err != nil {
		return nil, err
	}
	var j *job.Job
	err = s.longPoll(ctx, ns, r.Queues, wait, gone, nil, func() (bool, error) {
		j, err = engine.FetchFor(&c).Propose(ctx, s.node, &c)
		return j != nil, err
	})
	if err != nil || j == nil {
		return nil, err
	}
	if gone != nil && gone() {
		s.releaseGone(ns, r.WorkerID, j)
		return nil, nil
	}
	oj, err := s.openJob(ns, j)
	if err != nil {
		s.releaseGone(ns, r.WorkerID, j) // a lease on what the worker cannot read helps no one
		return nil, err
	}
	v := fetchedView(oj)
	return &v, nil
}

// WakeFetches wakes every parked fetch of ns: each looks at its worker
// again (its Gone), so one whose worker was just drained answers now
// instead of when its wait runs out; the others park again.
func (s *Service) WakeFetches(ns string) { s.waiters.WakeNamespace(ns) }

// releaseGone gives back jobs leased to a worker found gone before they
// were handed over. A release that fails leaves the leases to run out.
func (s *Service) releaseGone(ns, workerID string, jobs ...*job.Job) {
	c := &engine.ReleaseCmd{NS: ns, WorkerID: workerID, Jobs: make([]engine.ReleaseItem, len(jobs))}
	for i, j := range jobs {
		c.Jobs[i] = engine.ReleaseItem{ID: j.ID, Attempt: j.Attempt, Lease: job.LeaseOf(j)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if _, err := engine.ReleaseFor(c).Propose(ctx, s.node, c); err != nil {
		s.cfg.Logger.Warn("shard: could not release the leases of a worker that went away", "namespace", ns,
			"worker", workerID, "jobs", len(jobs), "err", err)
	}
}

// releaseTimeout bounds a release proposed after the worker went away.
const releaseTimeout = 5 * time.Second

// FetchBatch leases up to the request's max jobs to the worker in one
// command, waiting up to its timeout until at least one is available or
// the worker has news (news). It returns an empty list when none came,
// when the worker went away (as Fetch), or at its news. Max 0 leases
// nothing and waits for news alone, so it needs a worker id.
func (s *Service) FetchBatch(ctx context.Context, ns string, lim Limits, r *wire.FetchBatchRequest, gone Gone, news News) ([]wire.FetchedJob, error) {
	fc, wait, err := fetchCmd(ns, &r.FetchRequest)
	if err != nil {
		return nil, err
	}
	n := wire.DefaultFetchBatch
	if r.Max != nil {
		if *r.Max < 0 || *r.Max > wire.MaxFetchBatch {
			return nil, apierr.Field("max", "max must be between 0 and %d; got %d", wire.MaxFetchBatch, *r.Max)
		}
		n = *r.Max
	}
	queues := r.Queues
	if n == 0 {
		if r.WorkerID == "" {
			return nil, apierr.Field("max", "max 0 waits for the worker's cancels and drain: it needs a worker_id")
		}
		queues = nil // parks on no queue: an enqueue's wake-up is for a fetch that can take its job
	}
	// Every job leased is an execution: a batch never leases past the
	// plan's monthly cap, however many it asked for.
	c := &engine.FetchBatchCmd{Fetch: fc, Max: lim.leaseAtMost(n)}
	var jobs []*job.Job
	err = s.longPoll(ctx, ns, queues, wait, gone, news, func() (bool, error) {
		jobs, err = engine.FetchBatchFor(c).Propose(ctx, s.node, c)
		return len(jobs) > 0, err
	})
	if err != nil {
		return nil, err
	}
	if len(jobs) > 0 && gone != nil && gone() {
		s.releaseGone(ns, r.WorkerID, jobs...)
		return []wire.FetchedJob{}, nil
	}
	out := make([]wire.FetchedJob, len(jobs))
	for i, j := range jobs {
		oj, err := s.openJob(ns, j)
		if err != nil {
			s.releaseGone(ns, r.WorkerID, jobs...)
			return nil, err
		}
		out[i] = fetchedView(oj)
	}
	return out, nil
}

// longPoll runs take until it gets something, an error, or wait (ns)
// passes, the caller goes away, the worker has news (news) or the service
// stops (a stopping service leases nothing more). It parks before
// looking, so a job made pending between the look and the wait still
// wakes it; a woken waiter that takes nothing passes its wake-up on. On
// every wake-up the worker is looked at (gone) before it takes: one that
// went away while it waited stops, handing its wake-up on. News is read
// before the queues, so a worker with news is answered at once.
func (s *Service) longPoll(ctx context.Context, ns string, queues []string, wait int64, gone Gone, news News, take func() (bool, error)) error {
	timer := s.cfg.Clock.NewTimer(durationOf(wait))
	defer timer.Stop()
	for {
		select {
		case <-s.stop:
			return nil // stopping: no new lease, and a parked fetch answers at once
		default:
		}
		w := s.waiters.Park(ns, queues)
		if err := s.movingErr(ns); err != nil {
			s.waiters.Leave(w, false)
			return err // woken by the fence (MoveFence wakes them after it)
		}
		var told <-chan struct{}
		if news != nil {
			var now bool
			if told, now = news(); now {
				s.waiters.Leave(w, false)
				return nil
			}
		}
		if len(queues) > 0 && s.anyPending(ns, queues) {
			got, err := take()
			if err != nil {
				s.waiters.Leave(w, false)
				return err
			}
			if got {
				s.waiters.Leave(w, true)
				return nil
			}
		}
		select {
		case <-w.C():
			if gone != nil && gone() {
				s.waiters.Leave(w, false)
				return nil
			}
			s.waiters.Leave(w, true)
		case <-told:
			s.waiters.Leave(w, false) // looks at its news on the next round
		case <-timer.Chan():
			s.waiters.Leave(w, false)
			return nil
		case <-ctx.Done():
			s.waiters.Leave(w, false)
			return nil
		case <-s.stop:
			s.waiters.Leave(w, false)
			return nil
		}
	}
}

// anyPending reads local state: may any of the queues hand out a job now?
// Only the leader serves fetches, and it has applied what it committed. A
// stale "no" is safe: the fetch parked before looking, and whatever makes
// a queue ready again (an apply, a throttle window) wakes its waiters.
func (s *Service) anyPending(ns string, queues []string) bool {
	now := s.now()
	for _, q := range queues {
		ok, retryAt := s.eng.QueueReady(s.node.DB(), ns, q, now)
		if ok {
			return true
		}
		if retryAt > 0 {
			s.waiters.WakeAt(ns, q, retryAt, func(now int64) int { return s.eng.RoomAt(ns, q, now) })
		}
	}
	return false
}

// movingErr refuses a fetch of a namespace fenced or moved away.
func (s *Service) movingErr(ns string) error {
	switch s.Moving(ns) {
	case wire.MovingFenced:
		return engine.ErrFenced
	case wire.MovingMoved:
		return engine.ErrMoved
	}
	return nil
}
