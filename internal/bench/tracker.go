package bench

import (
	"hash/maphash"
	"sync"
	"time"
)

// trackerShards spreads the job map over locks so producers and workers
// rarely contend.
const trackerShards = 64

// tracker pairs each enqueued job with its delivery. Times are offsets
// from the run's start (monotonic).
type tracker struct {
	seed   maphash.Seed
	shards [trackerShards]trackerShard
}

type trackerShard struct {
	mu sync.Mutex
	m  map[string]jobTimes
}

// jobTimes is what is known of a job so far: the enqueue call's start and
// return, or (when the fetch won the race) its delivery.
type jobTimes struct {
	start, returned, delivered time.Duration
}

// sample is one completed pairing.
type sample struct {
	delivery time.Duration // enqueue call returned → fetch returned (≥ 0)
	pickup   time.Duration // enqueue call started → fetch returned
}

func newTracker() *tracker {
	t := &tracker{seed: maphash.MakeSeed()}
	for i := range t.shards {
		t.shards[i].m = map[string]jobTimes{}
	}
	return t
}

func (t *tracker) shard(id string) *trackerShard {
	return &t.shards[maphash.String(t.seed, id)%trackerShards]
}

// enqueued records that job id's enqueue call ran from start to returned.
// If the job was already delivered it completes the sample.
func (t *tracker) enqueued(id string, start, returned time.Duration) (sample, bool) {
	s := t.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[id]; ok && e.delivered > 0 {
		delete(s.m, id)
		return pair(start, returned, e.delivered), true
	}
	s.m[id] = jobTimes{start: start, returned: returned}
	return sample{}, false
}

// delivered records that a fetch returned job id at time at. If the
// job's enqueue was recorded it completes the sample; otherwise the fetch
// beat the producer (or the job is not this run's) and it is remembered.
func (t *tracker) delivered(id string, at time.Duration) (sample, bool) {
	s := t.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[id]; ok && e.returned > 0 {
		delete(s.m, id)
		return pair(e.start, e.returned, at), true
	}
	s.m[id] = jobTimes{delivered: max(at, 1)}
	return sample{}, false
}

// unmatched counts deliveries no enqueue claimed: jobs left in the queue
// by an earlier run, or whose enqueue call failed on the client's side.
func (t *tracker) unmatched() int64 {
	var n int64
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		for _, e := range s.m {
			if e.delivered > 0 {
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}

func pair(start, returned, delivered time.Duration) sample {
	return sample{delivery: max(delivered-returned, 0), pickup: max(delivered-start, 0)}
}

// gate bounds the jobs enqueued but not yet fetched.
type gate struct {
	mu      sync.Mutex
	cond    sync.Cond
	n, max  int64
	waiting int
	closed  bool
}

func newGate(max int64) *gate {
	g := &gate{max: max}
	g.cond.L = &g.mu
	return g
}

// acquire waits until k more jobs fit (a call larger than the bound
// passes when nothing is outstanding); false once the gate is closed.
func (g *gate) acquire(k int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for !g.closed && g.n > 0 && g.n+k > g.max {
		g.waiting++
		g.cond.Wait()
		g.waiting--
	}
	if g.closed {
		return false
	}
	g.n += k
	return true
}

// release returns k jobs' room. Deliveries of jobs that are not this
// run's also release room, which loosens the bound by their number.
func (g *gate) release(k int64) {
	g.mu.Lock()
	g.n -= k
	wake := g.waiting > 0
	g.mu.Unlock()
	if wake {
		g.cond.Broadcast()
	}
}

// close wakes every waiter for good.
func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.cond.Broadcast()
}
