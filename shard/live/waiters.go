package live

import (
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// Waiters parks long-polling fetches per namespace and queue. An apply
// that makes n jobs pending wakes at most n waiters, oldest first, so a
// burst of idle workers is not stampeded by one job. A woken waiter that
// leaves without fetching passes its wake-up on (see Leave). It is the
// engine's Waker: it also wakes a throttled queue's waiters when its
// window frees room.
type Waiters struct {
	clock clockwork.Clock

	mu    sync.Mutex
	lists map[string][]*Waiter

	timerMu sync.Mutex
	timers  map[string]int64 // queue → the earliest time a timer wakes it
}

// Waiter is one parked fetch.
type Waiter struct {
	ch     chan struct{} // receives one wake-up
	keys   []string
	parked bool // still in the lists; guarded by Waiters.mu
}

// C receives the waiter's wake-up.
func (w *Waiter) C() <-chan struct{} { return w.ch }

// NewWaiters returns a set with no waiter; clock runs the throttle timers.
func NewWaiters(clock clockwork.Clock) *Waiters {
	return &Waiters{clock: clock, lists: map[string][]*Waiter{}, timers: map[string]int64{}}
}

func waitKey(ns, queue string) string { return ns + "\x00" + queue }

// Park registers a waiter on every queue.
func (ws *Waiters) Park(ns string, queues []string) *Waiter {
	w := &Waiter{ch: make(chan struct{}, 1), keys: make([]string, len(queues)), parked: true}
	ws.mu.Lock()
	for i, q := range queues {
		k := waitKey(ns, q)
		w.keys[i] = k
		ws.lists[k] = append(ws.lists[k], w)
	}
	ws.mu.Unlock()
	return w
}

// Parked is how many waiters are parked on queue.
func (ws *Waiters) Parked(ns, queue string) int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	n := 0
	for _, w := range ws.lists[waitKey(ns, queue)] {
		if w.parked {
			n++
		}
	}
	return n
}

// Wake wakes up to n waiters of queue.
func (ws *Waiters) Wake(ns, queue string, n int) {
	ws.mu.Lock()
	ws.wakeLocked(waitKey(ns, queue), n)
	ws.mu.Unlock()
}

// WakeNamespace wakes every waiter of ns, on any queue: they look again
// and find the namespace moving.
func (ws *Waiters) WakeNamespace(ns string) {
	p := ns + "\x00"
	ws.mu.Lock()
	for k := range ws.lists {
		if strings.HasPrefix(k, p) {
			ws.wakeLocked(k, len(ws.lists[k]))
		}
	}
	ws.mu.Unlock()
}

func (ws *Waiters) wakeLocked(k string, n int) {
	list := ws.lists[k]
	i := 0
	for ; i < len(list) && n > 0; i++ {
		w := list[i]
		if !w.parked {
			continue
		}
		w.parked = false
		w.ch <- struct{}{}
		n--
	}
	rest := list[i:]
	if len(rest) == 0 {
		delete(ws.lists, k)
		return
	}
	// Drop waiters woken through another queue from the head we scanned.
	ws.lists[k] = append(list[:0:0], rest...)
}

// Leave unregisters w. If w was woken but its caller gives up instead of
// fetching, the wake-up goes to the next waiter of each of its queues.
func (ws *Waiters) Leave(w *Waiter, consumed bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w.parked {
		w.parked = false
		for _, k := range w.keys {
			ws.removeLocked(k, w)
		}
		return
	}
	select {
	case <-w.ch:
		consumed = false // the wake-up was never read
	default:
	}
	if !consumed {
		for _, k := range w.keys {
			ws.wakeLocked(k, 1)
		}
	}
	for _, k := range w.keys {
		ws.removeLocked(k, w)
	}
}

func (ws *Waiters) removeLocked(k string, w *Waiter) {
	list := ws.lists[k]
	for i, x := range list {
		if x == w {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(ws.lists, k)
	} else {
		ws.lists[k] = list
	}
}

// WakeAt wakes queue's waiters at (unix ns) or earlier, as many as room
// says may fetch then: one timer per queue, set to the earliest time
// asked for. Only the leader has parked fetches; a timer elsewhere wakes
// nobody.
func (ws *Waiters) WakeAt(ns, queue string, at int64, room func(now int64) int) {
	k := waitKey(ns, queue)
	ws.timerMu.Lock()
	if cur, ok := ws.timers[k]; ok && cur <= at {
		ws.timerMu.Unlock()
		return
	}
	ws.timers[k] = at
	ws.timerMu.Unlock()
	ws.clock.AfterFunc(time.Duration(at-ws.clock.Now().UnixNano()), func() {
		ws.timerMu.Lock()
		if ws.timers[k] == at {
			delete(ws.timers, k)
		}
		ws.timerMu.Unlock()
		ws.Wake(ns, queue, room(ws.clock.Now().UnixNano()))
	})
}
