package leader

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
)

// Follow starts a worker per key while the node leads, restarts one whose
// settings changed, stops one no longer wanted and every one on losing
// the lead, and all of them when it ends.
func TestFollowTracksTheLeadership(t *testing.T) {
	t.Parallel()
	var leads atomic.Bool
	var mu sync.Mutex
	want := map[string]int{}
	events := make(chan string, 100)
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		Follow[string, int]{
			Every: time.Millisecond, Clock: clockwork.NewRealClock(), Leads: leads.Load,
			Want: func() map[string]int {
				mu.Lock()
				defer mu.Unlock()
				out := map[string]int{}
				for k, v := range want {
					out[k] = v
				}
				return out
			},
			Same: func(a, b int) bool { return a == b },
			Start: func(k string, v int) func() {
				events <- fmt.Sprint("start ", k, v)
				return func() { events <- fmt.Sprint("stop ", k, v) }
			},
		}.Run(done)
	}()
	next := func() string {
		select {
		case e := <-events:
			return e
		case <-time.After(10 * time.Second):
			t.Fatal("no worker started or stopped")
			return ""
		}
	}
	set := func(k string, v int) {
		mu.Lock()
		defer mu.Unlock()
		if v == 0 {
			delete(want, k)
		} else {
			want[k] = v
		}
	}

	set("a", 1)
	leads.Store(true)
	require.Equal(t, "start a1", next())
	set("a", 2)
	require.Equal(t, "stop a1", next(), "a settings change restarts it")
	require.Equal(t, "start a2", next())
	set("b", 1)
	require.Equal(t, "start b1", next())
	set("b", 0)
	require.Equal(t, "stop b1", next(), "one no longer wanted stops")
	leads.Store(false)
	require.Equal(t, "stop a2", next(), "losing the lead stops every worker")
	leads.Store(true)
	require.Equal(t, "start a2", next())
	close(done)
	require.Equal(t, "stop a2", next(), "the end stops every worker")
	<-ended
	require.Empty(t, events)
}
