package replica

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
)

// cmdHold is a test command that holds the apply loop until released.
const cmdHold CommandType = 3

func openWith(t testing.TB, cfg Config, reg *Registry) *Node {
	t.Helper()
	cfg.Dir, cfg.Bootstrap, cfg.Logger = t.TempDir(), true, hclog.NewNullLogger()
	cfg.HeartbeatTimeout, cfg.ElectionTimeout = 100*time.Millisecond, 100*time.Millisecond
	n, err := Open(cfg, reg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, n.WaitLeader(ctx))
	return n
}

// A key flooding a node whose apply loop is stuck gets 429s for all it
// sends over its share of the pending queue, and another key still gets
// in and commits.
func TestProposeRefusesAFloodingKeyNotOthers(t *testing.T) {
	t.Parallel()
	c := &counter{}
	reg := c.registry()
	held, release := make(chan struct{}), make(chan struct{})
	reg.Register(cmdHold, "hold", func(*Tx, []byte) (any, error) {
		close(held)
		<-release
		return nil, nil
	})
	// One command per entry, so the pipeline behind the held entry (the
	// entries in flight and the one the batch loop holds) takes only a
	// few of the flood: 2 in flight, 1 being sent, and the queue's 4.
	const perKey, absorbed, flood = 4, 2 + 1 + 4, 100
	n := openWith(t, Config{BatchMax: 1, MaxPendingPerKey: perKey, AdmitWait: -1}, reg)
	defer n.Close()
	ctx := context.Background()
	holdDone := make(chan error, 1)
	go func() {
		_, err := n.Propose(ctx, Command(cmdHold, nil))
		holdDone <- err
	}()
	<-held

	a := WithFairKey(ctx, "tenant-a")
	results := make(chan error, flood)
	for i := 0; i < flood; i++ {
		go func() {
			_, err := n.Propose(a, Command(cmdAdd, []byte{1}))
			results <- err
		}()
	}
	for refused := 0; refused < flood-absorbed; refused++ {
		err := <-results
		require.ErrorIs(t, err, ErrKeyBusy)
		require.Equal(t, apierr.RateLimited, apierr.CodeOf(n.ProposeError(err)))
	}

	bDone := make(chan error, 1)
	go func() {
		_, err := n.Propose(WithFairKey(ctx, "tenant-b"), Command(cmdAdd, []byte{1}))
		bDone <- err
	}()
	for !queued(n.adm, "tenant-b") {
		runtime.Gosched()
	}
	close(release)
	require.NoError(t, <-holdDone)
	require.NoError(t, <-bDone, "b got in while a was refused")
	committed := 0
	for i := flood - absorbed; i < flood; i++ {
		if err := <-results; err == nil {
			committed++
		} else {
			require.ErrorIs(t, err, ErrKeyBusy)
		}
	}
	require.Equal(t, uint64(committed+1), read(t, n), "a's admitted proposals and b's")
}

// queued reports whether key has proposals waiting in q.
func queued(q *admission, key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.keys[key] != nil
}

// floodFigures are one key's proposal latencies while another floods,
// and the flooding key's commands that went ahead of each: what admission
// controls, which a loaded machine does not move.
type floodFigures struct {
	p50, p99, max time.Duration
	floodRate     float64 // the flooding key's proposals committed per second
	// ahead is, per proposal of b, how many commands were applied after
	// it was proposed and before it (sorted); waiting is how many of the
	// flood's proposals waited in admission when it was proposed (sorted).
	ahead, waiting []int
}

// measureUnderFlood opens a node with cfg, has floodWorkers goroutines of
// key "a" propose as fast as they can (none if zero), and times samples
// proposals of key "b" made one after another.
func measureUnderFlood(t *testing.T, cfg Config, floodWorkers, samples int) floodFigures {
	c := &counter{}
	n := openWith(t, cfg, c.registry())
	defer n.Close()
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var flooded atomic.Int64
	a := WithFairKey(ctx, "a")
	for i := 0; i < floodWorkers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := n.Propose(a, Command(cmdAdd, []byte{1})); err != nil && !errors.Is(err, ErrKeyBusy) {
					t.Error(err)
					return
				}
				flooded.Add(1)
			}
		}()
	}
	// Measure once the flood has filled the queue: every flooding
	// goroutine has a proposal waiting or in flight.
	for floodWorkers > 0 && flooded.Load() < int64(4*floodWorkers) {
		runtime.Gosched()
	}
	b := WithFairKey(ctx, "b")
	lat := make([]time.Duration, 0, samples)
	ahead, waiting := make([]int, 0, samples), make([]int, 0, samples)
	start, before := time.Now(), flooded.Load()
	for i := 0; i < samples; i++ {
		// Every command adds 1, so b's result is the count applied up to
		// and including it; what was applied before it was proposed is
		// counted here, so the difference is what went ahead of it.
		applied, queue := c.applied.Load(), waitingIn(n.adm)
		t0 := time.Now()
		res, err := n.Propose(b, Command(cmdAdd, []byte{1}))
		lat = append(lat, time.Since(t0))
		require.NoError(t, err)
		ahead = append(ahead, int(res.(uint64))-1-int(applied))
		waiting = append(waiting, queue)
	}
	rate := float64(flooded.Load()-before) / time.Since(start).Seconds()
	close(stop)
	wg.Wait()
	slices.Sort(lat)
	slices.Sort(ahead)
	slices.Sort(waiting)
	return floodFigures{p50: lat[len(lat)/2], p99: lat[len(lat)*99/100], max: lat[len(lat)-1], floodRate: rate,
		ahead: ahead, waiting: waiting}
}

// waitingIn is how many proposals wait in q.
func waitingIn(q *admission) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending
}

// One key flooding a node must not starve another of the group commit.
// What admission controls is where key b's proposal lands among the
// flood's commands, so that is what is held: with fair admission b finds
// ahead of it at most the entries already in Raft and one entry of the
// flood's (a key waits at most one entry for its turn, admit.go), however
// deep the flood; with one FIFO (unfair) it finds the whole flood. The
// bound counts commands, not time: b's latency on an oversubscribed
// machine measures the scheduler's turns among 64 flooding goroutines and
// the machine's other work (b alone has no such company), which admission
// cannot change, so the latencies are logged, not held.
// docs/BENCHMARKS.md ("Fair admission") records them.
func TestFairAdmissionIsolatesAKeyUnderFlood(t *testing.T) {
	// Not parallel: the latencies mean something only on a quiet process.
	const workers, samples = 64, 200
	// Entries of 4 commands, so the flood is 16 entries deep (as 8,192
	// callers would be with the default 512) without so many goroutines
	// that scheduling them is all the test measures.
	cfg := Config{BatchMax: 4, Inflight: 1}
	alone := measureUnderFlood(t, cfg, 0, samples)
	fair := measureUnderFlood(t, cfg, workers, samples)
	cfg.UnfairAdmission = true
	unfair := measureUnderFlood(t, cfg, workers, samples)
	for _, r := range []struct {
		name string
		f    floodFigures
	}{{"alone", alone}, {"flood, fair", fair}, {"flood, unfair", unfair}} {
		t.Logf("b %-14s p50 %8v  p99 %8v  max %8v  (a committed %.0f/s); commands ahead p50 %d max %d, of a queue of p50 %d",
			r.name+":", r.f.p50.Round(10*time.Microsecond), r.f.p99.Round(10*time.Microsecond), r.f.max.Round(10*time.Microsecond),
			r.f.floodRate, r.f.ahead[samples/2], r.f.ahead[samples-1], r.f.waiting[samples/2])
	}
	// The entries in Raft and one entry of the flood's before b's turn,
	// each of at most BatchMax commands.
	bound := (cfg.Inflight + 1) * cfg.BatchMax
	require.LessOrEqual(t, fair.ahead[samples-1], bound,
		"with fair admission b finds at most the entry in Raft and one of the flood's ahead of it")
	// The bound means something only if the flood was deeper than it.
	require.Greater(t, fair.waiting[samples/2], bound, "the flood filled the queue past the bound")
	require.Greater(t, unfair.ahead[samples/2], fair.ahead[samples/2], "b waits less for its turn than behind the whole flood")
}
