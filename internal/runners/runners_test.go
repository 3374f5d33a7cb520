package runners

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Work runs once each, runners are kept for later work up to MaxIdle,
// and all of them end once done closes.
func TestPoolRunsKeepsAndEnds(t *testing.T) {
	done := make(chan struct{})
	var mu sync.Mutex
	seen := map[int]int{}
	var wg sync.WaitGroup
	p := New(2, done, func(n int) {
		mu.Lock()
		seen[n]++
		mu.Unlock()
		wg.Done()
	})
	for i := range 100 {
		wg.Add(1)
		p.Run(i)
	}
	wg.Wait()
	require.Len(t, seen, 100)
	for n, c := range seen {
		require.Equal(t, 1, c, "work %d", n)
	}
	require.Eventually(t, func() bool { return p.idle.Load() > 0 }, testWait, pollEvery, "a runner waits for the next work")
	require.LessOrEqual(t, p.idle.Load(), int32(2), "at most MaxIdle wait")
	close(done)
	p.Wait() // returns only once every runner ended
	require.Zero(t, p.idle.Load())
}

// A busy runner finishes its work before Wait returns, even after done
// closed.
func TestWaitWaitsForBusyRunners(t *testing.T) {
	done := make(chan struct{})
	release, finished := make(chan struct{}), make(chan struct{})
	p := New(1, done, func(struct{}) {
		<-release
		close(finished)
	})
	p.Run(struct{}{})
	close(done)
	waited := make(chan struct{})
	go func() { p.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned while a runner was busy")
	default:
	}
	close(release)
	<-waited
	select {
	case <-finished:
	default:
		t.Fatal("Wait returned before the work finished")
	}
}
