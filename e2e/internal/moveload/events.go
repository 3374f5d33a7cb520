package moveload

import (
	"context"
	"sync"
	"time"

	"github.com/jobbie/jobbie/client"
)

// Watcher follows the namespace's event stream, opening it again (from
// the last event seen) whenever it ends: a stream ends when its namespace
// moves away from the shard serving it.
type Watcher struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	opened  []time.Time // each stream's start
	ended   []time.Time // each stream's end, but the last
	events  []time.Time // each event's arrival
	openErr map[string]int
}

// Watch starts following cl's namespace's events.
func Watch(cl *client.Client) *Watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{cancel: cancel, done: make(chan struct{}), openErr: map[string]int{}}
	go w.run(ctx, cl)
	return w
}

func (w *Watcher) run(ctx context.Context, cl *client.Client) {
	defer close(w.done)
	last := ""
	for ctx.Err() == nil {
		evs, err := cl.Events(ctx, last)
		if err != nil {
			if ctx.Err() == nil {
				w.mu.Lock()
				w.openErr[errKind(err)]++
				w.mu.Unlock()
				time.Sleep(50 * time.Millisecond)
			}
			continue
		}
		w.mu.Lock()
		w.opened = append(w.opened, time.Now())
		w.mu.Unlock()
		for ev := range evs {
			last = ev.ID
			w.mu.Lock()
			w.events = append(w.events, time.Now())
			w.mu.Unlock()
		}
		if ctx.Err() == nil {
			w.mu.Lock()
			w.ended = append(w.ended, time.Now())
			w.mu.Unlock()
		}
	}
}

// Stop ends the watch.
func (w *Watcher) Stop() {
	w.cancel()
	<-w.done
}

// WatchReport is what the watcher saw.
type WatchReport struct {
	Opened, Ended int
	Events        int
	// EventsAfter counts the events that arrived after the time asked.
	EventsAfter int
	OpenErrs    map[string]int
}

// Report sums the watch up, counting events after after.
func (w *Watcher) Report(after time.Time) WatchReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := WatchReport{Opened: len(w.opened), Ended: len(w.ended), Events: len(w.events), OpenErrs: clone(w.openErr)}
	for _, t := range w.events {
		if t.After(after) {
			r.EventsAfter++
		}
	}
	return r
}
