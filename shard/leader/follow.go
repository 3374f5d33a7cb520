package leader

import (
	"time"

	"github.com/jonboulle/clockwork"
)

// Follow is how a leader-only fleet of workers (a push runner per push
// queue, a webhook runner per endpoint) follows the leadership: every
// Every it reads what should run while the node leads (nothing while it
// does not), starts a worker per new key, restarts one whose settings
// changed, and stops the rest. One loop, so losing the lead stops every
// worker within one rescan whatever the fleet.
type Follow[K comparable, V any] struct {
	Every time.Duration
	Clock clockwork.Clock
	// Leads reports whether this node leads now.
	Leads func() bool
	// Want reads what should run, while the node leads.
	Want func() map[K]V
	// Same reports whether a running worker's settings (a) still hold
	// (b); false restarts it.
	Same func(a, b V) bool
	// Start starts a worker and returns what stops it, returning once it
	// stopped.
	Start func(K, V) (stop func())
}

type following[V any] struct {
	v    V
	stop func()
}

// Run runs the loop until done closes, then stops every worker.
func (f Follow[K, V]) Run(done <-chan struct{}) {
	runs := map[K]following[V]{}
	t := f.Clock.NewTicker(f.Every)
	defer t.Stop()
	for {
		var want map[K]V
		if f.Leads() {
			want = f.Want()
		}
		f.reconcile(runs, want)
		select {
		case <-done:
			f.reconcile(runs, nil)
			return
		case <-t.Chan():
		}
	}
}

func (f Follow[K, V]) reconcile(runs map[K]following[V], want map[K]V) {
	for k, r := range runs {
		if v, ok := want[k]; !ok || !f.Same(r.v, v) {
			r.stop()
			delete(runs, k)
		}
	}
	for k, v := range want {
		if _, ok := runs[k]; !ok {
			runs[k] = following[V]{v: v, stop: f.Start(k, v)}
		}
	}
}
