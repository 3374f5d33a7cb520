package shard

import "sync"

// waiters parks long-polling fetches per namespace and queue. An apply that
// makes n jobs pending wakes at most n waiters, oldest first, so a burst of
// idle workers is not stampeded by one job. A woken waiter that leaves
// without fetching passes its wake-up on (see waiter.leave).
type waiters struct {
	mu    sync.Mutex
	lists map[string][]*waiter
}

type waiter struct {
	ch     chan struct{} // receives one wake-up
	keys   []string
	parked bool // still in the lists; guarded by waiters.mu
}

func newWaiters() *waiters { return &waiters{lists: map[string][]*waiter{}} }

func waitKey(ns, queue string) string { return ns + "\x00" + queue }

// park registers a waiter on every queue.
func (ws *waiters) park(ns string, queues []string) *waiter {
	w := &waiter{ch: make(chan struct{}, 1), keys: make([]string, len(queues)), parked: true}
	ws.mu.Lock()
	for i, q := range queues {
		k := waitKey(ns, q)
		w.keys[i] = k
		ws.lists[k] = append(ws.lists[k], w)
	}
	ws.mu.Unlock()
	return w
}

// notify wakes up to n waiters of queue.
func (ws *waiters) notify(ns, queue string, n int) {
	ws.mu.Lock()
	ws.wakeLocked(waitKey(ns, queue), n)
	ws.mu.Unlock()
}

func (ws *waiters) wakeLocked(k string, n int) {
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

// leave unregisters w. If w was woken but its caller gives up instead of
// fetching, the wake-up goes to the next waiter of each of its queues.
func (ws *waiters) leave(w *waiter, consumed bool) {
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

func (ws *waiters) removeLocked(k string, w *waiter) {
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
