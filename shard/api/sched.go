package api

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/fairshare"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/service"
)

// Work slots. A node's cores are shared among namespaces by two pools of
// slots (internal/fairshare), each a weighted fair queue per namespace
// with the plan weights of fair admission (Weights):
//
//   - reads: heavy reads (searches with their filters and jq, bulk
//     scans, the dead-letter list), a few slots (half the cores) held for
//     the whole request, at most one per namespace (times its weight).
//     A scan uses its budget (service.DefaultSearchBudget) inside its
//     slot, so a namespace's many searches take turns with each other
//     and with other namespaces' instead of taking every core at once;
//   - work: every other /api/v1 request's CPU-bound part (decoding,
//     validating, building the command), a slot per core, given back when
//     its proposal waits in the group's admission queue
//     (replica.WithQueued), where fair admission takes over, or when the
//     handler returns.
//
// Long-polls and streams (fetch, events, a bulk operation's progress)
// take no slot: they mostly wait, and a parked fetch must not hold one.
// The lifecycle path (enqueue, fetch, ack, fail, heartbeat) never waits
// behind a heavy read: the pools are apart.
const (
	readWait    = 5 * time.Second // a heavy read may wait about five searches' budget
	readWaiting = 16              // heavy reads one namespace may have waiting
	workWait    = 2 * time.Second
)

// slotClass is which pool a request takes a slot of.
type slotClass int

const (
	workSlot slotClass = iota
	readSlot
	noSlot
)

// classOf is the pool of a request to method path: heavy reads are the
// requests that scan many jobs, long-polls and streams the ones that
// wait rather than work.
func classOf(method, path string) slotClass {
	path = strings.TrimSuffix(path, "/")
	switch method {
	case fiber.MethodPost:
		switch path {
		case "/api/v1/jobs/search", "/api/v1/jobs/bulk":
			return readSlot
		case "/api/v1/fetch", "/api/v1/fetch/batch":
			return noSlot
		}
	case fiber.MethodGet:
		switch {
		case path == "/api/v1/dead":
			return readSlot
		case path == "/api/v1/events", strings.HasPrefix(path, "/api/v1/bulk/") && strings.HasSuffix(path, "/progress"):
			return noSlot
		}
	}
	return workSlot
}

// pools are a node's two pools, and the work requests in flight that
// heavy reads give way to.
type pools struct {
	work, reads *fairshare.Scheduler
	working     *inFlight
}

func newPools() pools {
	return pools{
		working: newInFlight(),
		work:    fairshare.New(fairshare.Config{Name: "shard work", MaxWait: workWait}),
		reads: fairshare.New(fairshare.Config{Name: "shard reads", Slots: max(1, runtime.GOMAXPROCS(0)/2), PerKey: 1,
			MaxWaiting: readWaiting, MaxWait: readWait}),
	}
}

// slot holds the request's slot of its pool while the rest of the chain
// runs. It follows fairKey (the weight is recorded first).
func (s *Server) slot(c *fiber.Ctx) error {
	var pool *fairshare.Scheduler
	switch classOf(c.Method(), c.Path()) {
	case readSlot:
		pool = s.pools.reads
	case workSlot:
		pool = s.pools.work
	default:
		// A long-poll takes no slot, but its proposals are work too.
		c.SetUserContext(replica.WithQueued(c.UserContext(), s.pools.working.touch))
		return c.Next()
	}
	if pool == s.pools.work {
		// Counted from before it waits for its slot until it answers: the
		// whole time a heavy read would hold it back.
		s.pools.working.add(1)
		defer s.pools.working.add(-1)
	}
	sl, err := pool.Acquire(c.Context(), ns(c), s.weights.Of(ns(c)))
	if err != nil {
		what := "requests"
		if pool == s.pools.reads {
			what = "heavy reads (search, bulk, dead-letter list)"
		}
		return fairshare.Refusal(err, "this namespace", what)
	}
	defer sl.Release()
	if pool == s.pools.work {
		c.SetUserContext(replica.WithQueued(c.UserContext(), sl.Release))
	} else {
		y := &yielder{working: s.pools.working, ran: time.Now()}
		c.SetUserContext(service.WithYield(c.UserContext(), y.yield))
	}
	return c.Next()
}

// A heavy read gives way to the work of the lifecycle path: between
// candidates (service.WithYield) it pauses while a work request is in
// flight or one was within the last quiet (a worker's next fetch or a
// producer's next enqueue comes right after), up to maxPause at a time
// and after at least minRun of scanning since its last pause. So reads
// take the CPU the lifecycle path leaves, and still go on under a steady
// stream of it (at least minRun in minRun+maxPause).
const (
	minRun   = time.Millisecond
	maxPause = 8 * time.Millisecond
	quiet    = 2 * time.Millisecond
)

// inFlight counts the work requests in flight, notes when work last
// happened, and wakes who waits for none.
type inFlight struct {
	last atomic.Int64 // unix ns of the last work seen (touch)
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0
}

func newInFlight() *inFlight { return &inFlight{idle: make(chan struct{})} }

func (f *inFlight) add(d int) {
	f.touch()
	f.mu.Lock()
	f.n += d
	if f.n == 0 {
		close(f.idle)
		f.idle = make(chan struct{})
	}
	f.mu.Unlock()
}

// touch notes work now: a request, or a long-poll's proposal.
func (f *inFlight) touch() { f.last.Store(time.Now().UnixNano()) }

// busy is the channel closed when none is in flight, or nil when none is.
func (f *inFlight) busy() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		return nil
	}
	return f.idle
}

// yielder is one heavy read's side of it.
type yielder struct {
	working *inFlight
	ran     time.Time // when the scan last went on
}

func (y *yielder) yield() {
	now := time.Now()
	if now.Sub(y.ran) < minRun {
		runtime.Gosched()
		return
	}
	until := now.Add(maxPause)
	for {
		wait := time.Until(until)
		if wait <= 0 {
			break
		}
		idle := y.working.busy()
		if idle == nil {
			left := quiet - time.Since(time.Unix(0, y.working.last.Load()))
			if left <= 0 {
				break
			}
			wait = min(wait, left)
		}
		t := time.NewTimer(wait)
		select {
		case <-idle: // nil: the quiet time runs out
		case <-t.C:
		}
		t.Stop()
	}
	y.ran = time.Now()
}
