package replica

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// queueOf is an admission queue as a node would make it, refusing at once
// when full (no AdmitWait) unless a test sets wait.
func queueOf(fair bool, maxPending, perKey int, weight func(string) int) *admission {
	return newAdmission(Config{MaxPending: maxPending, MaxPendingPerKey: perKey, AdmitWait: -1,
		FairWeight: weight, UnfairAdmission: !fair})
}

// prop is a 100-byte proposal naming its key and its number in that key.
func prop(key string, i int) *proposal {
	cmd := make([]byte, 100)
	copy(cmd, fmt.Sprintf("%s/%d", key, i))
	return &proposal{cmd: cmd, done: make(chan result, 1)}
}

func keyOf(p *proposal) string {
	k, _, _ := bytes.Cut(p.cmd, []byte("/"))
	return string(k)
}

func fill(t *testing.T, q *admission, key string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		require.NoError(t, q.add(context.Background(), key, prop(key, i), nil))
	}
}

func counts(batch []*proposal) map[string]int {
	m := map[string]int{}
	for _, p := range batch {
		m[keyOf(p)]++
	}
	return m
}

// Ten proposals of a key that arrive behind ten thousand of another are
// all admitted within the first two entries; without fairness they wait
// for the whole flood.
func TestAdmissionSmallKeyIsNotStuckBehindAFlood(t *testing.T) {
	t.Parallel()
	q := queueOf(true, 20_000, 10_000, nil)
	fill(t, q, "a", 10_000)
	fill(t, q, "b", 10)
	b := 0
	for i := 0; i < 2; i++ {
		batch, _ := q.take(512, noBytes)
		require.Len(t, batch, 512, "a full entry")
		b += counts(batch)["b"]
	}
	require.Equal(t, 10, b, "every proposal of b within two entries")

	u := queueOf(false, 20_000, 10_000, nil)
	fill(t, u, "a", 10_000)
	fill(t, u, "b", 10)
	var order []string
	for {
		batch, _ := u.take(512, noBytes)
		if len(batch) == 0 {
			break
		}
		for _, p := range batch {
			order = append(order, keyOf(p))
		}
	}
	require.Len(t, order, 10_010)
	require.Equal(t, "a", order[9999], "unfair: b waits behind all of a")
	require.Equal(t, "b", order[10_000])
}

// Each key's proposals come out in the order they went in.
func TestAdmissionKeepsEachKeysOrder(t *testing.T) {
	t.Parallel()
	q := queueOf(true, 10_000, 10_000, nil)
	for i := 0; i < 3000; i++ {
		for _, k := range []string{"a", "b", "c"} {
			if k != "c" || i%7 == 0 {
				require.NoError(t, q.add(context.Background(), k, prop(k, i), nil))
			}
		}
	}
	next := map[string]int{}
	for {
		batch, _ := q.take(300, noBytes)
		if len(batch) == 0 {
			break
		}
		for _, p := range batch {
			k := keyOf(p)
			require.Equal(t, fmt.Sprintf("%s/%d", k, next[k]), string(bytes.TrimRight(p.cmd, "\x00")))
			if next[k]++; k == "c" {
				next[k] += 6
			}
		}
	}
	require.Equal(t, map[string]int{"a": 3000, "b": 3000, "c": 3003}, next)
}

// A key of weight 3 is admitted three times what a key of weight 1 is
// while both have proposals waiting.
func TestAdmissionWeights(t *testing.T) {
	t.Parallel()
	q := queueOf(true, 100_000, 20_000, func(k string) int {
		if k == "gold" {
			return 3
		}
		return 1
	})
	fill(t, q, "gold", 20_000)
	fill(t, q, "free", 20_000)
	fill(t, q, "also-free", 20_000)
	got := map[string]int{}
	for i := 0; i < 60; i++ {
		batch, _ := q.take(512, noBytes)
		for k, n := range counts(batch) {
			got[k] += n
		}
	}
	t.Logf("admitted in 60 entries: %v", got)
	require.InDelta(t, 3.0, float64(got["gold"])/float64(got["free"]), 0.1)
	require.InDelta(t, 1.0, float64(got["also-free"])/float64(got["free"]), 0.05)
	require.Equal(t, 60*512, got["gold"]+got["free"]+got["also-free"])
}

// An idle key takes nothing from others: a key alone fills whole
// entries, and a busy key fills what a quiet one leaves.
func TestAdmissionIsWorkConserving(t *testing.T) {
	t.Parallel()
	q := queueOf(true, 10_000, 10_000, nil)
	fill(t, q, "a", 2000)
	for _, want := range []int{512, 512, 512, 464} {
		batch, _ := q.take(512, noBytes)
		require.Len(t, batch, want)
	}
	batch, left := q.take(512, noBytes)
	require.Empty(t, batch)
	require.Zero(t, left)

	fill(t, q, "a", 2000)
	fill(t, q, "b", 5)
	batch, left = q.take(512, noBytes)
	require.Len(t, batch, 512)
	require.Equal(t, map[string]int{"a": 507, "b": 5}, counts(batch))
	require.Equal(t, 2000-507, left)
	batch, _ = q.take(512, noBytes)
	require.Equal(t, map[string]int{"a": 512}, counts(batch), "b gone: a has the entry to itself")
}

// A command larger than many quanta waits until its key saved enough
// turns, then goes; when every key waits on one, the idle rounds are
// skipped in one step, in the order DRR would have reached them.
func TestAdmissionLargeCommands(t *testing.T) {
	t.Parallel()
	q := queueOf(true, 10_000, 10_000, nil)
	huge := &proposal{cmd: append([]byte("huge/0/"), make([]byte, 1<<20)...)}
	require.NoError(t, q.add(context.Background(), "huge", huge, nil))
	fill(t, q, "small", 9000)
	before := 0 // bytes of small admitted before huge
	for seen := false; !seen; {
		batch, _ := q.take(512, noBytes)
		require.NotEmpty(t, batch)
		for _, p := range batch {
			if p == huge {
				seen = true
				break
			}
			before += cost(p)
		}
	}
	require.InDelta(t, cost(huge), before, 2*fairQuantum, "small got as many bytes as huge cost")

	q = queueOf(true, 10, 10, nil)
	big := &proposal{cmd: append([]byte("big/0/"), make([]byte, 2<<20)...)}
	bigger := &proposal{cmd: append([]byte("bigger/0/"), make([]byte, 3<<20)...)}
	require.NoError(t, q.add(context.Background(), "bigger", bigger, nil))
	require.NoError(t, q.add(context.Background(), "big", big, nil))
	batch, _ := q.take(512, noBytes)
	require.Equal(t, []*proposal{big, bigger}, batch, "the smaller one is affordable first")
}

// A key that holds its whole share is refused (or waits) while other keys
// still get in; the whole queue refuses only when full.
func TestAdmissionBackpressureIsPerKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := queueOf(true, 100, 25, func(k string) int {
		if k == "double" {
			return 2
		}
		return 1
	})
	fill(t, q, "a", 25)
	require.ErrorIs(t, q.add(ctx, "a", prop("a", 25), nil), ErrKeyBusy)
	fill(t, q, "b", 25)
	fill(t, q, "double", 50)
	require.ErrorIs(t, q.add(ctx, "double", prop("double", 50), nil), ErrKeyBusy)
	require.ErrorIs(t, q.add(ctx, "c", prop("c", 0), nil), ErrBusy, "the whole queue is full")

	// A proposal waiting for room in its key gets in when an entry takes
	// some of the key's proposals.
	q.wait = time.Hour
	done := make(chan error, 1)
	go func() { done <- q.add(ctx, "a", prop("a", 25), nil) }()
	waitForKeyWaiter(q, "a")
	select {
	case err := <-done:
		t.Fatalf("admitted into a full key: %v", err)
	default:
	}
	q.take(10, noBytes)
	require.NoError(t, <-done)

	// A waiter gives up when its context ends.
	cctx, cancel := context.WithCancel(ctx)
	go func() { done <- q.add(cctx, "b", prop("b", 25), nil) }()
	waitForKeyWaiter(q, "b")
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)

	// And with a bounded wait, gets the key's refusal.
	q.wait = time.Millisecond
	require.ErrorIs(t, q.add(ctx, "b", prop("b", 25), nil), ErrKeyBusy)
}

// waitForKeyWaiter returns once a proposal of key waits for room.
func waitForKeyWaiter(q *admission, key string) {
	for {
		q.mu.Lock()
		k := q.keys[key]
		waiting := k != nil && k.room != nil
		q.mu.Unlock()
		if waiting {
			return
		}
		runtime.Gosched()
	}
}

// Unfair admission is the one FIFO queue of before: arrival order across
// keys, one shared limit, no per-key refusal.
func TestAdmissionUnfairIsOneQueue(t *testing.T) {
	t.Parallel()
	q := queueOf(false, 30, 5, nil)
	var want []*proposal
	for i := 0; i < 30; i++ {
		p := prop([]string{"a", "b", "a", "a"}[i%4], i)
		require.NoError(t, q.add(context.Background(), keyOf(p), p, nil))
		want = append(want, p)
	}
	require.ErrorIs(t, q.add(context.Background(), "c", prop("c", 0), nil), ErrBusy)
	batch, _ := q.take(512, noBytes)
	require.Equal(t, want, batch)
}

// Closing hands back what was queued and refuses what comes after, and
// those waiting for room.
func TestAdmissionClose(t *testing.T) {
	t.Parallel()
	q := queueOf(true, 100, 3, nil)
	q.wait = time.Hour
	fill(t, q, "a", 3)
	fill(t, q, "b", 2)
	done := make(chan error, 1)
	go func() { done <- q.add(context.Background(), "a", prop("a", 3), nil) }()
	waitForKeyWaiter(q, "a")
	require.Len(t, q.close(), 5)
	require.ErrorIs(t, <-done, ErrClosed)
	require.ErrorIs(t, q.add(context.Background(), "c", prop("c", 0), nil), ErrClosed)
	batch, left := q.take(512, noBytes)
	require.Empty(t, batch)
	require.Zero(t, left)
}

// Many proposers and one taker: every proposal comes out once, each key
// in order (run with -race).
func TestAdmissionConcurrent(t *testing.T) {
	t.Parallel()
	q := newAdmission(Config{MaxPending: 64, MaxPendingPerKey: 8, AdmitWait: time.Hour, FairWeight: func(string) int { return 1 }})
	const keys, each = 8, 500
	var wg sync.WaitGroup
	for k := 0; k < keys; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprint("k", k)
			for i := 0; i < each; i++ {
				if err := q.add(context.Background(), key, prop(key, i), nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	next := map[string]int{}
	for total := 0; total < keys*each; {
		batch, _ := q.take(16, noBytes)
		if len(batch) == 0 {
			<-q.ready
			continue
		}
		for _, p := range batch {
			k := keyOf(p)
			require.Equal(t, fmt.Sprintf("%s/%d", k, next[k]), string(bytes.TrimRight(p.cmd, "\x00")))
			next[k]++
		}
		total += len(batch)
	}
	wg.Wait()
	require.Len(t, next, keys)
}

// WithQueued's function runs once a proposal waits in the queue or for
// room in it, and not for one refused at once.
func TestWithQueuedRunsOnceQueued(t *testing.T) {
	q := queueOf(true, 2, 1, nil)
	calls := 0
	ctx := WithQueued(context.Background(), func() { calls++ })
	require.NoError(t, q.add(ctx, "a", prop("a", 0), nil))
	require.Equal(t, 1, calls)
	require.ErrorIs(t, q.add(ctx, "a", prop("a", 1), nil), ErrKeyBusy)
	require.Equal(t, 1, calls, "a proposal refused at once waits nowhere")

	q.wait = time.Hour
	var n atomic.Int32
	waiting := WithQueued(context.Background(), func() { n.Add(1) })
	done := make(chan error, 1)
	go func() { done <- q.add(waiting, "a", prop("a", 2), nil) }()
	require.Eventually(t, func() bool { return n.Load() == 1 }, 10*time.Second, time.Millisecond, "called as it waits for room")
	q.take(10, noBytes)
	require.NoError(t, <-done)
}

// noBytes is a byte bound no test's entry reaches.
const noBytes = 1 << 30
