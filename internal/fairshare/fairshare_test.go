package fairshare

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is the scheduler's clock in these tests: slots are held for
// exactly the time a test advances it.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

type bundle struct {
	t       *testing.T
	s       *Scheduler
	clock   *fakeClock
	weights map[string]int // the keys' weights; 1 when absent
}

func (b *bundle) weight(key string) int { return max(b.weights[key], 1) }

func setup(t *testing.T, cfg Config) *bundle {
	t.Parallel()
	cfg.Name = "test " + t.Name()
	b := &bundle{t: t, s: New(cfg), clock: &fakeClock{}}
	b.s.now = b.clock.now
	return b
}

type result struct {
	key  string
	slot *Slot
	err  error
}

// async asks for a slot of key on a goroutine of its own, and returns
// once the request waits in key's queue.
func (b *bundle) async(ctx context.Context, key string) <-chan result {
	b.t.Helper()
	out := make(chan result, 1)
	before := b.queued(key)
	go func() {
		sl, err := b.s.Acquire(ctx, key, b.weight(key))
		out <- result{key, sl, err}
	}()
	b.eventually(func() bool { return b.queued(key) > before }, "a request of %s waits", key)
	return out
}

func (b *bundle) queued(key string) int {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	if k := b.s.keys[key]; k != nil {
		return k.queued
	}
	return 0
}

func (b *bundle) eventually(cond func() bool, msg string, args ...any) {
	b.t.Helper()
	require.Eventually(b.t, cond, 10*time.Second, time.Millisecond, append([]any{msg}, args...)...)
}

func (b *bundle) acquire(key string) *Slot {
	b.t.Helper()
	sl, err := b.s.Acquire(context.Background(), key, b.weight(key))
	require.NoError(b.t, err)
	return sl
}

func recv(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no slot granted in 10 s")
		return result{}
	}
}

// A key alone takes every slot at once: the pool is work-conserving.
func TestAKeyAloneUsesThePool(t *testing.T) {
	b := setup(t, Config{Slots: 3})
	var held []*Slot
	for range 3 {
		held = append(held, b.acquire("a"))
	}
	wait := b.async(context.Background(), "a")
	held[0].Release()
	r := recv(t, wait)
	require.NoError(t, r.err)
	r.slot.Release()
	for _, sl := range held[1:] {
		sl.Release()
	}
	require.Equal(t, 3, b.s.free)
}

// A flood of one key waits behind its own share: the next free slot goes
// to a key that used less, however many of the flood's requests wait.
func TestAFloodWaitsBehindItsShare(t *testing.T) {
	b := setup(t, Config{Slots: 1})
	sl := b.acquire("a")
	b.clock.advance(10 * time.Millisecond)
	var flood []<-chan result
	for range 5 {
		flood = append(flood, b.async(context.Background(), "a"))
	}
	quiet := b.async(context.Background(), "b")
	sl.Release()
	r := recv(t, quiet)
	require.NoError(t, r.err)
	for _, ch := range flood {
		select {
		case <-ch:
			t.Fatal("a's flood got the slot before b")
		default:
		}
	}
	r.slot.Release()
	for _, ch := range flood { // then a's, in order, one at a time
		r := recv(t, ch)
		require.NoError(t, r.err)
		b.clock.advance(time.Millisecond)
		r.slot.Release()
	}
}

// Keys that both wait share slot time by weight, measured in the time
// each held its slots: a key of weight 2 gets twice the time of one of
// weight 1, and a key whose work is twice as long gets half the turns.
func TestSlotTimeIsSharedByWeight(t *testing.T) {
	for _, tc := range []struct {
		name           string
		weightA        int
		holdA, holdB   time.Duration
		wantA, wantB   int
		grantsPerRound int
	}{
		{"weights", 2, time.Millisecond, time.Millisecond, 2, 1, 3},
		{"costs", 1, 2 * time.Millisecond, time.Millisecond, 1, 2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, Config{Slots: 1, MaxWaiting: 1000})
			b.weights = map[string]int{"a": tc.weightA}
			hold := map[string]time.Duration{"a": tc.holdA, "b": tc.holdB}
			first := b.acquire("a")
			var chs []<-chan result
			for range 30 {
				chs = append(chs, b.async(context.Background(), "a"), b.async(context.Background(), "b"))
			}
			b.clock.advance(tc.holdA)
			first.Release()
			got := map[string]int{}
			var order []string
			for range 30 { // the first 30 grants, while both still wait
				var r result
				b.eventually(func() bool {
					for i, ch := range chs {
						select {
						case r = <-ch:
							chs = append(chs[:i], chs[i+1:]...)
							return true
						default:
						}
					}
					return false
				}, "a grant")
				require.NoError(t, r.err)
				got[r.key]++
				order = append(order, r.key)
				b.clock.advance(hold[r.key])
				r.slot.Release()
			}
			require.InDelta(t, 30*tc.wantA/tc.grantsPerRound, got["a"], 2, "a's grants: %v", order)
			require.InDelta(t, 30*tc.wantB/tc.grantsPerRound, got["b"], 2, "b's grants: %v", order)
			for _, ch := range chs {
				r := recv(t, ch)
				r.slot.Release()
			}
		})
	}
}

// A key that was idle gets no credit for it: it starts at the pool's
// virtual time, so it cannot take the pool for as long as it was away.
func TestIdleEarnsNoCredit(t *testing.T) {
	b := setup(t, Config{Slots: 1, MaxWaiting: 1000})
	for range 50 { // b alone for 50 ms of slot time
		sl := b.acquire("b")
		b.clock.advance(time.Millisecond)
		sl.Release()
	}
	first := b.acquire("b")
	var chs []<-chan result
	for range 10 {
		chs = append(chs, b.async(context.Background(), "a"), b.async(context.Background(), "b"))
	}
	b.clock.advance(time.Millisecond)
	first.Release()
	got := map[string]int{}
	for range 10 {
		var r result
		b.eventually(func() bool {
			for i, ch := range chs {
				select {
				case r = <-ch:
					chs = append(chs[:i], chs[i+1:]...)
					return true
				default:
				}
			}
			return false
		}, "a grant")
		got[r.key]++
		b.clock.advance(time.Millisecond)
		r.slot.Release()
	}
	require.InDelta(t, 5, got["b"], 1, "b, busy until a came, still gets its half: %v", got)
	for _, ch := range chs {
		recv(t, ch).slot.Release()
	}
}

// PerKey bounds the slots one key holds even while others are free.
func TestPerKeyBoundsAKeysSlots(t *testing.T) {
	b := setup(t, Config{Slots: 4, PerKey: 1})
	b.weights = map[string]int{"heavy": 2}
	a := b.acquire("a")
	wait := b.async(context.Background(), "a")
	other := b.acquire("c") // another key still finds a slot
	h1, h2 := b.acquire("heavy"), b.acquire("heavy")
	require.Equal(t, 0, b.s.free)
	other.Release()
	select {
	case <-wait:
		t.Fatal("a took a second slot past PerKey")
	default:
	}
	a.Release()
	recv(t, wait).slot.Release()
	h1.Release()
	h2.Release()
}

// Refusals: a full queue is refused at once and is the key's own load;
// a request that waited MaxWait says whether its key held slots.
func TestRefusals(t *testing.T) {
	b := setup(t, Config{Slots: 1, MaxWaiting: 2, MaxWait: 50 * time.Millisecond})
	held := b.acquire("a")
	w1, w2 := b.async(context.Background(), "a"), b.async(context.Background(), "a")
	_, err := b.s.Acquire(context.Background(), "a", 1)
	var busy *BusyError
	require.ErrorAs(t, err, &busy)
	require.Equal(t, ReasonKeyQueue, busy.Reason)
	require.True(t, busy.Own)
	require.Positive(t, busy.Retry)

	for _, w := range []<-chan result{w1, w2} {
		r := recv(t, w)
		require.ErrorAs(t, r.err, &busy)
		require.Equal(t, ReasonWaited, busy.Reason, "a held the slot: its own work was ahead")
		require.True(t, busy.Own)
	}
	r := recv(t, b.async(context.Background(), "b"))
	require.ErrorAs(t, r.err, &busy)
	require.Equal(t, ReasonPoolBusy, busy.Reason, "b held nothing: others' work was ahead")
	require.False(t, busy.Own)

	held.Release()
	require.Equal(t, 1, b.s.free, "refused requests hold nothing")
	require.Empty(t, b.s.waiting)
}

// A request whose context ends stops waiting and holds nothing; a slot
// released twice is given back once.
func TestCancelAndReleaseTwice(t *testing.T) {
	b := setup(t, Config{Slots: 1})
	held := b.acquire("a")
	ctx, cancel := context.WithCancel(context.Background())
	w := b.async(ctx, "b")
	cancel()
	r := recv(t, w)
	require.True(t, errors.Is(r.err, context.Canceled))
	held.Release()
	held.Release()
	require.Equal(t, 1, b.s.free)
	require.Empty(t, b.s.keys, "idle keys that owe nothing are forgotten")

	var none *Slot
	none.Release()
}
