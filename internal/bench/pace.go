package bench

import (
	"context"
	"sync/atomic"
	"time"
)

// pacer spaces the producers' jobs evenly at a rate, across all of them:
// each call takes the next slots of the schedule and waits for the
// first. A producer that falls behind sends at once until it has caught
// up, so the rate holds over the run as long as the server keeps up.
type pacer struct {
	start    time.Time
	interval time.Duration // between two jobs; 0: no pacing
	next     atomic.Int64  // jobs scheduled so far
}

func newPacer(rate float64) *pacer {
	p := &pacer{start: time.Now()}
	if rate > 0 {
		p.interval = time.Duration(float64(time.Second) / rate)
	}
	return p
}

// wait takes k jobs' slots and waits until the first is due; false if
// ctx ended first.
func (p *pacer) wait(ctx context.Context, k int64) bool {
	if p.interval == 0 {
		return ctx.Err() == nil
	}
	n := p.next.Add(k) - k
	d := time.Until(p.start.Add(time.Duration(n) * p.interval))
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
