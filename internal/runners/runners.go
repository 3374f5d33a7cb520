// Package runners keeps the goroutines that served one piece of work
// waiting for the next, instead of ending. A fresh goroutine for every
// request grows its stack anew each time it writes or serves one (a
// tenth of a node's CPU on the gateway→shard link, 1 % of the gateway's
// on long-polls: docs/BENCHMARKS.md); a kept one has its stack grown
// already. At most MaxIdle wait; all of them end when done closes, and
// Wait waits for every runner, busy or idle, to end.
package runners

import (
	"sync"
	"sync/atomic"
)

// Pool runs handle on work items, each on a runner.
type Pool[T any] struct {
	handle  func(T)
	work    chan T
	done    <-chan struct{}
	maxIdle int32
	idle    atomic.Int32
	wg      sync.WaitGroup
}

// New returns a pool running handle, keeping at most maxIdle runners
// waiting, until done closes.
func New[T any](maxIdle int, done <-chan struct{}, handle func(T)) *Pool[T] {
	return &Pool[T]{handle: handle, work: make(chan T), done: done, maxIdle: int32(maxIdle)}
}

// Run hands w to a waiting runner, or to a new one.
func (p *Pool[T]) Run(w T) {
	select {
	case p.work <- w: // a waiting runner took it
	default:
		p.wg.Add(1)
		go p.loop(w)
	}
}

func (p *Pool[T]) loop(w T) {
	defer p.wg.Done()
	for {
		p.handle(w)
		if p.idle.Add(1) > p.maxIdle {
			p.idle.Add(-1)
			return
		}
		select {
		case w = <-p.work:
			p.idle.Add(-1)
		case <-p.done:
			p.idle.Add(-1)
			return
		}
	}
}

// Wait returns once every runner has ended: the busy ones after their
// work, the idle ones once done closed.
func (p *Pool[T]) Wait() { p.wg.Wait() }
