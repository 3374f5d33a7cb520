package fairshare

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Config is a Scheduler's pool and bounds.
type Config struct {
	// Name labels the pool's metrics ("shard requests", "shard reads").
	Name string
	// Slots is how many requests work at once; default the cores
	// (runtime.GOMAXPROCS).
	Slots int
	// PerKey is the most slots one key holds at once, times its weight
	// (at most Slots); default Slots.
	PerKey int
	// MaxWaiting is the most requests one key has waiting, times its
	// weight; default 256.
	MaxWaiting int
	// MaxWait is how long a request waits for a slot; default 2 s.
	MaxWait time.Duration
}

// MaxWeight bounds a key's weight.
const MaxWeight = 1000

const (
	defaultMaxWaiting = 256
	defaultMaxWait    = 2 * time.Second
	// initialCost is what a grant is charged before the pool has seen a
	// slot come back (see Scheduler.est).
	initialCost = float64(time.Millisecond)
	// maxIdleKeys bounds the idle keys kept for the debt they carry
	// (virtual time ahead of the pool's): past it, idle keys are dropped.
	maxIdleKeys = 4096
)

// WithDefaults fills what c leaves zero.
func (c Config) WithDefaults() Config {
	if c.Slots <= 0 {
		c.Slots = runtime.GOMAXPROCS(0)
	}
	if c.PerKey <= 0 || c.PerKey > c.Slots {
		c.PerKey = c.Slots
	}
	if c.MaxWaiting <= 0 {
		c.MaxWaiting = defaultMaxWaiting
	}
	if c.MaxWait <= 0 {
		c.MaxWait = defaultMaxWait
	}
	return c
}

// Reasons a request is refused, as BusyError.Reason and the refusals
// metric's label.
const (
	// ReasonKeyQueue: the key already had MaxWaiting requests waiting.
	ReasonKeyQueue = "key_queue_full"
	// ReasonWaited: the request waited MaxWait while the key held slots
	// (its own work was ahead of it).
	ReasonWaited = "key_waited"
	// ReasonPoolBusy: the request waited MaxWait holding no slot: the
	// pool was busy with others' work.
	ReasonPoolBusy = "pool_busy"
)

// BusyError is a refusal: nothing was done.
type BusyError struct {
	Pool   string
	Reason string        // ReasonKeyQueue, ReasonWaited or ReasonPoolBusy
	Own    bool          // the key's own load: ReasonKeyQueue or ReasonWaited
	Retry  time.Duration // when trying again makes sense
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("fairshare: %s: %s", e.Pool, e.Reason)
}

// Scheduler is a pool of slots shared fairly among keys. Safe for
// concurrent use.
type Scheduler struct {
	cfg Config
	m   *metrics
	now func() time.Time // time.Now; tests hold slots for exact times

	mu      sync.Mutex
	free    int
	keys    map[string]*key
	waiting []*key  // keys with requests waiting, in no order
	vt      float64 // the pool's virtual time: the start tag of the last grant
	est     float64 // moving mean of a slot's hold time, ns: what a grant is charged up front
}

// key is one key's state.
type key struct {
	name     string
	weight   float64
	perKey   int
	maxWait  int
	vt       float64 // slot time used, ns / weight, with the estimates of slots held
	inflight int
	queue    []*waiter // FIFO; cancelled waiters are skipped
	queued   int       // waiters in queue not cancelled
	inWait   bool      // in Scheduler.waiting
}

type waiter struct {
	ready   chan struct{} // closed when granted
	granted *Slot
	gone    bool // gave up; skipped when its turn comes
}

// Slot is a granted slot. Release gives it back; a nil Slot is allowed.
type Slot struct {
	s     *Scheduler
	k     *key
	start time.Time
	est   float64
	once  sync.Once
}

// New returns a scheduler of cfg (WithDefaults applied).
func New(cfg Config) *Scheduler {
	cfg = cfg.WithDefaults()
	return &Scheduler{cfg: cfg, m: newMetrics(cfg.Name), now: time.Now, free: cfg.Slots, keys: map[string]*key{}, est: initialCost}
}

// Waiting is how many requests wait for a slot.
func (s *Scheduler) Waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, k := range s.waiting {
		n += k.queued
	}
	return n
}

// Config is the scheduler's configuration, defaults filled.
func (s *Scheduler) Config() Config { return s.cfg }

// Acquire waits for a slot of key's share; weight (1..MaxWeight, clamped)
// is the key's, its plan's, taken when the pool starts keeping the key
// (a change of plan counts once the key was idle and owed nothing). It
// returns a *BusyError when key's queue is full or MaxWait passed, or
// ctx's error when ctx ended first.
func (s *Scheduler) Acquire(ctx context.Context, name string, weight int) (*Slot, error) {
	start := time.Now()
	s.mu.Lock()
	k := s.activate(name, weight)
	if k.queued == 0 && k.inflight < k.perKey && s.free > 0 {
		sl := s.grant(k)
		s.mu.Unlock()
		s.m.waited(0)
		return sl, nil
	}
	if k.queued >= k.maxWait {
		s.forgetIdle(k)
		s.mu.Unlock()
		return nil, s.refuse(ReasonKeyQueue, true)
	}
	w := &waiter{ready: make(chan struct{})}
	k.queue = append(k.queue, w)
	k.queued++
	if !k.inWait {
		k.inWait = true
		s.waiting = append(s.waiting, k)
	}
	s.m.waiting.Inc()
	s.mu.Unlock()

	t := time.NewTimer(s.cfg.MaxWait)
	defer t.Stop()
	var err error
	select {
	case <-w.ready:
		s.m.waited(time.Since(start))
		return w.granted, nil
	case <-t.C:
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	if w.granted != nil { // granted as it gave up: keep it
		s.mu.Unlock()
		s.m.waited(time.Since(start))
		return w.granted, nil
	}
	w.gone = true
	k.queued--
	own := k.inflight > 0
	s.m.waiting.Dec()
	if k.queued == 0 {
		k.queue = k.queue[:0]
		s.unwait(k)
		s.forgetIdle(k)
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if own {
		return nil, s.refuse(ReasonWaited, true)
	}
	return nil, s.refuse(ReasonPoolBusy, false)
}

func (s *Scheduler) refuse(reason string, own bool) error {
	s.m.refused.WithLabelValues(s.cfg.Name, reason).Inc()
	return &BusyError{Pool: s.cfg.Name, Reason: reason, Own: own, Retry: s.cfg.MaxWait / 2}
}

// activate is name's state; a key that was idle starts at the pool's
// virtual time (an idle key earns no credit). s.mu is held.
func (s *Scheduler) activate(name string, weight int) *key {
	k := s.keys[name]
	if k == nil {
		if len(s.keys) >= maxIdleKeys {
			s.dropIdle()
		}
		w := min(max(weight, 1), MaxWeight)
		k = &key{name: name, weight: float64(w), perKey: min(s.cfg.PerKey*w, s.cfg.Slots), maxWait: s.cfg.MaxWaiting * w}
		s.keys[name] = k
	}
	if k.inflight == 0 && k.queued == 0 {
		k.vt = max(k.vt, s.vt)
	}
	return k
}

// grant gives k a slot, charging it the estimate up front so that keys
// granted together are not all cheapest at once. s.mu is held.
func (s *Scheduler) grant(k *key) *Slot {
	s.free--
	k.inflight++
	s.vt = max(s.vt, k.vt)
	k.vt += s.est / k.weight
	s.m.inUse.Inc()
	return &Slot{s: s, k: k, start: s.now(), est: s.est}
}

// Release gives the slot back and charges its key the time it was held.
// Only the first call counts.
func (sl *Slot) Release() {
	if sl == nil {
		return
	}
	sl.once.Do(sl.release)
}

func (sl *Slot) release() {
	s, k := sl.s, sl.k
	s.mu.Lock()
	held := float64(s.now().Sub(sl.start))
	k.vt += (held - sl.est) / k.weight
	s.est += (held - s.est) / 16
	k.inflight--
	s.free++
	s.m.inUse.Dec()
	s.dispatch()
	s.forgetIdle(k)
	s.mu.Unlock()
}

// dispatch hands free slots to waiting keys, the key with the least
// virtual time first. s.mu is held.
func (s *Scheduler) dispatch() {
	for s.free > 0 {
		var next *key
		for _, k := range s.waiting {
			if k.inflight < k.perKey && (next == nil || k.vt < next.vt) {
				next = k
			}
		}
		if next == nil {
			return
		}
		w := next.pop()
		sl := s.grant(next)
		w.granted = sl
		close(w.ready)
		s.m.waiting.Dec()
		if next.queued == 0 {
			s.unwait(next)
		}
	}
}

// pop takes k's first waiter that did not give up.
func (k *key) pop() *waiter {
	for i, w := range k.queue {
		if !w.gone {
			clear(k.queue[:i+1])
			k.queue = k.queue[i+1:]
			k.queued--
			if k.queued == 0 {
				k.queue = nil
			}
			return w
		}
	}
	panic("fairshare: a waiting key has no waiter")
}

// unwait takes k out of the waiting keys. s.mu is held.
func (s *Scheduler) unwait(k *key) {
	if !k.inWait {
		return
	}
	k.inWait = false
	for i, o := range s.waiting {
		if o == k {
			last := len(s.waiting) - 1
			s.waiting[i] = s.waiting[last]
			s.waiting[last] = nil
			s.waiting = s.waiting[:last]
			return
		}
	}
}

// forgetIdle drops k when it is idle and owes nothing: it would start
// at the pool's virtual time anyway. A key with debt is kept, so that
// going idle for an instant does not forgive it. s.mu is held.
func (s *Scheduler) forgetIdle(k *key) {
	if k.inflight == 0 && k.queued == 0 && k.vt <= s.vt {
		delete(s.keys, k.name)
	}
}

// dropIdle drops every idle key, debt or not, to bound the table. s.mu
// is held.
func (s *Scheduler) dropIdle() {
	for n, k := range s.keys {
		if k.inflight == 0 && k.queued == 0 {
			delete(s.keys, n)
		}
	}
}
