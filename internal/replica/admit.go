package replica

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Fair admission. Proposals wait for the batch loop in one FIFO queue per
// fairness key (WithFairKey; a shard passes the request's namespace), and
// each Raft entry is filled by deficit round-robin over the keys that have
// proposals waiting: a key's turn admits up to its quantum of command
// bytes (fairQuantum times its weight), then the next key's turn begins,
// and the next entry begins with the turn after the one a full entry cut
// short (which keeps what it did not spend, up to a quantum). A key
// flooding writes thus takes its share of each entry and of the apply
// loop, not all of them, while a key alone still fills whole entries
// (work-conserving). Cost is counted in bytes, not commands, because a
// batch enqueue of a thousand jobs is one command that costs a thousand
// times the apply and replication of one job.
//
// Backpressure is per key as well as shared: a key may hold at most
// MaxPendingPerKey times its weight of the queue, so a flood refuses its
// own excess (ErrKeyBusy, 429) and never fills the queue against others,
// who meet ErrBusy (503) only when keys together hold MaxPending.
//
// With Config.UnfairAdmission every proposal shares one key: the single
// FIFO queue the node had before, kept to show what fairness changes.

// ErrKeyBusy is returned by Propose when the proposal's fairness key had
// its whole share of the pending queue waiting for longer than
// Config.AdmitWait: that caller is sending faster than the group commits.
// Nothing was appended, so sending it again later is safe.
var ErrKeyBusy = errors.New("replica: too many proposals of this key are waiting")

// ErrBusy is returned by Propose when the whole pending queue stayed full
// for longer than Config.AdmitWait. Nothing was appended.
var ErrBusy = errors.New("replica: too many proposals are waiting")

type fairKeyCtx struct{}

// WithFairKey returns ctx carrying key as the fairness key of the
// proposals made with it: Propose admits the keys it sees in turn. A
// context without one shares the default key "".
func WithFairKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, fairKeyCtx{}, key)
}

// FairKey is the fairness key ctx carries, or "" (the default key).
func FairKey(ctx context.Context) string {
	k, _ := ctx.Value(fairKeyCtx{}).(string)
	return k
}

type queuedCtx struct{}

// WithQueued returns ctx carrying f, which Propose calls once a proposal
// made with it waits in the admission queue, or for room in it. From
// there fair admission orders the work, so a caller that held a share of
// the node for the work before (a work slot, internal/fairshare) gives it
// back in f rather than hold it through replication. f may be called
// more than once (a request that proposes twice) and must be quick.
func WithQueued(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, queuedCtx{}, f)
}

// callQueued calls ctx's WithQueued function, if any.
func callQueued(ctx context.Context) {
	if f, _ := ctx.Value(queuedCtx{}).(func()); f != nil {
		f()
	}
}

const (
	// fairQuantum is how many command bytes a key of weight 1 admits per
	// turn: about fifty single enqueues, a tenth of a full entry.
	fairQuantum = 16 << 10
	// commandOverhead is added to each command's size so that tiny
	// commands still cost their share of the apply loop.
	commandOverhead = 64
	// maxWeight bounds FairWeight so a quantum times a weight stays small.
	maxWeight = 1000
	// freeKeys is how many idle key queues are kept for reuse, so a key
	// that empties at every entry (the usual case) allocates nothing.
	freeKeys = 64
	// maxKeptCap is the largest queue slice kept for reuse after a flood.
	maxKeptCap = 1024
)

// admission is the pending queue between Propose and the batch loop.
type admission struct {
	fair       bool
	quantum    int
	maxPending int
	maxPerKey  int
	wait       time.Duration // how long add waits for room; <= 0 refuses at once
	weight     func(key string) int

	// ready holds one nudge when the queue went from empty to not.
	ready chan struct{}

	mu      sync.Mutex
	keys    map[string]*keyQueue
	ring    []*keyQueue // keys with proposals waiting, in turn order
	turn    int         // index in ring of the key whose turn is next or running
	inTurn  bool        // ring[turn] already got this turn's quantum
	idle    int         // turns in a row that admitted nothing (see skipIdleRounds)
	active  int         // keys in ring with proposals waiting
	pending int
	closed  bool
	free    []*keyQueue
	room    chan struct{} // closed when proposals leave; nil while nobody waits for the whole queue
}

// keyQueue is one key's FIFO of waiting proposals.
type keyQueue struct {
	key     string
	items   []*proposal // items[head:] wait
	head    int
	deficit int
	weight  int
	limit   int
	room    chan struct{} // closed when proposals leave; nil while nobody waits for this key
}

func (k *keyQueue) len() int { return len(k.items) - k.head }

func newAdmission(cfg Config) *admission {
	q := &admission{
		fair: !cfg.UnfairAdmission, quantum: fairQuantum, maxPending: cfg.MaxPending, maxPerKey: cfg.MaxPendingPerKey,
		wait: cfg.AdmitWait, weight: cfg.FairWeight,
		ready: make(chan struct{}, 1), keys: map[string]*keyQueue{},
	}
	if !q.fair {
		q.maxPerKey = q.maxPending
	}
	return q
}

// cost is what a proposal spends of its key's deficit.
func cost(p *proposal) int { return len(p.cmd) + commandOverhead }

// add queues p under key. While the key's share, or the whole queue, is
// full it waits for room until ctx ends, q.wait passes (ErrKeyBusy or
// ErrBusy) or stop closes (ErrClosed).
func (q *admission) add(ctx context.Context, key string, p *proposal, stop <-chan struct{}) error {
	if !q.fair {
		key = ""
	}
	var timeout <-chan time.Time
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return ErrClosed
		}
		k := q.keys[key]
		var room chan struct{}
		var full error
		switch {
		case q.fair && k != nil && k.len() >= k.limit:
			if k.room == nil {
				k.room = make(chan struct{})
			}
			room, full = k.room, ErrKeyBusy
		case q.pending >= q.maxPending:
			if q.room == nil {
				q.room = make(chan struct{})
			}
			room, full = q.room, ErrBusy
		default:
			if k == nil {
				k = q.activate(key)
			}
			k.items = append(k.items, p)
			q.pending++
			first := q.pending == 1
			q.mu.Unlock()
			if first {
				select {
				case q.ready <- struct{}{}:
				default:
				}
			}
			callQueued(ctx)
			return nil
		}
		q.mu.Unlock()
		if q.wait <= 0 {
			return full
		}
		callQueued(ctx) // waiting for room is waiting on the group too
		if timeout == nil {
			t := time.NewTimer(q.wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-room:
		case <-timeout:
			return full
		case <-ctx.Done():
			return ctx.Err()
		case <-stop:
			return ErrClosed
		}
	}
}

// activate makes key's queue, at the end of the turn order. q.mu is held.
func (q *admission) activate(key string) *keyQueue {
	var k *keyQueue
	if n := len(q.free); n > 0 {
		k, q.free = q.free[n-1], q.free[:n-1]
	} else {
		k = &keyQueue{}
	}
	k.key, k.weight = key, 1
	if q.fair && q.weight != nil {
		k.weight = min(max(q.weight(key), 1), maxWeight)
	}
	k.limit = min(q.maxPerKey*k.weight, q.maxPending)
	q.keys[key] = k
	q.ring = append(q.ring, k)
	q.active++
	return k
}

// take removes proposals for the next entry, at most max of them and
// maxBytes of their cost (the first one whatever its cost), key by key in
// deficit round-robin, wakes whoever waits for room, and says how many
// are left waiting.
func (q *admission) take(max, maxBytes int) (batch []*proposal, left int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == 0 {
		return nil, 0
	}
	batch = make([]*proposal, 0, min(q.pending, max))
	room := maxBytes
	for len(batch) < max && q.active > 0 {
		if q.turn >= len(q.ring) {
			q.turn = 0
		}
		k := q.ring[q.turn]
		if k.len() == 0 { // emptied earlier in this call; compact drops it
			q.turn, q.inTurn = q.turn+1, false
			continue
		}
		full := false // the entry has no room for k's next command
		if q.active == 1 {
			// Alone, a key takes what fits: no one to share with.
			n, spent := q.fit(k, max-len(batch), room, len(batch) == 0, -1)
			batch, room = q.pop(k, batch, n), room-spent
			k.deficit, q.inTurn, q.idle = 0, false, 0
			full = k.len() > 0
		} else {
			if !q.inTurn {
				k.deficit += q.quantum * k.weight
				q.inTurn = true
			}
			n, spent := q.fit(k, max-len(batch), room, len(batch) == 0, k.deficit)
			k.deficit -= spent
			batch, room = q.pop(k, batch, n), room-spent
			// What stopped the turn: the entry (full) or the deficit.
			full = k.len() > 0 && (len(batch) == max || cost(k.items[k.head]) > room) && cost(k.items[k.head]) <= k.deficit
			if n > 0 || full {
				q.idle = 0
			} else if q.idle++; q.idle >= q.active {
				q.skipIdleRounds()
			}
		}
		if k.len() == 0 {
			q.active--
		} else if full {
			// The entry is full mid-turn. The next entry starts with the
			// next key, so a key waits at most one entry for its turn
			// however small the flood's commands; what the cut turn did
			// not spend stays to its key, up to a quantum.
			k.deficit = min(k.deficit, q.quantum*k.weight)
			q.turn++
			q.inTurn = false
			break
		}
		q.turn++
		q.inTurn = false
	}
	q.compact()
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
	return batch, q.pending
}

// fit says how many of k's waiting proposals from its head fit in an
// entry with n places and room bytes left (the first of an empty entry
// always fits), and a deficit (negative: no bound), and what they cost.
// q.mu is held.
func (q *admission) fit(k *keyQueue, n, room int, empty bool, deficit int) (count, spent int) {
	for count < n && count < k.len() {
		c := cost(k.items[k.head+count])
		if deficit >= 0 && spent+c > deficit {
			break
		}
		if spent+c > room && !(empty && count == 0) {
			break
		}
		spent += c
		count++
	}
	return count, spent
}

// pop moves n proposals from k's head to batch. q.mu is held.
func (q *admission) pop(k *keyQueue, batch []*proposal, n int) []*proposal {
	n = min(n, k.len())
	if n == 0 {
		return batch
	}
	batch = append(batch, k.items[k.head:k.head+n]...)
	clear(k.items[k.head : k.head+n])
	k.head += n
	q.pending -= n
	if k.head == len(k.items) {
		k.items, k.head = k.items[:0], 0
	} else if k.head > cap(k.items)/2 {
		k.items = k.items[:copy(k.items, k.items[k.head:])]
		k.head = 0
	}
	if k.room != nil {
		close(k.room)
		k.room = nil
	}
	return batch
}

// compact drops the keys take emptied from the turn order in one pass,
// keeping the turn on the same key (or the next one left), and keeps
// their queues for reuse.
func (q *admission) compact() {
	if q.active == len(q.ring) {
		return
	}
	kept, turn := q.ring[:0], -1
	for i, k := range q.ring {
		if i >= q.turn && turn < 0 {
			turn = len(kept)
		}
		if k.len() > 0 {
			kept = append(kept, k)
			continue
		}
		delete(q.keys, k.key)
		if len(q.free) < freeKeys && cap(k.items) <= maxKeptCap {
			*k = keyQueue{items: k.items[:0]}
			q.free = append(q.free, k)
		}
	}
	clear(q.ring[len(kept):])
	q.ring = kept
	if turn < 0 || turn >= len(kept) {
		turn, q.inTurn = 0, false
	}
	q.turn = turn
}

// skipIdleRounds runs at once the rounds of turns that would admit
// nothing because every key's next command costs more than its deficit
// (a command far larger than a quantum): each key gets those rounds'
// quanta in one step, so the order is DRR's and the loop stays short.
func (q *admission) skipIdleRounds() {
	rounds := -1
	for _, k := range q.ring {
		if k.len() == 0 {
			continue
		}
		per := q.quantum * k.weight
		need := (cost(k.items[k.head]) - k.deficit + per - 1) / per // rounds until it fits
		if rounds < 0 || need < rounds {
			rounds = need
		}
	}
	if rounds--; rounds > 0 {
		for _, k := range q.ring {
			if k.len() > 0 {
				k.deficit += rounds * q.quantum * k.weight
			}
		}
	}
	q.idle = 0
}

// close refuses further proposals and returns those still queued.
func (q *admission) close() []*proposal {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	var out []*proposal
	for _, k := range q.ring {
		out = append(out, k.items[k.head:]...)
		if k.room != nil {
			close(k.room)
			k.room = nil
		}
	}
	q.ring, q.keys, q.pending, q.active = nil, map[string]*keyQueue{}, 0, 0
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
	return out
}
