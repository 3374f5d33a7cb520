package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
)

// A tenant's share of its self-hosted nodes: requests in flight up to its
// bound (long-polls aside), answer bytes up to its bound; over either,
// that tenant's 503 self_hosted_budget with Retry-After, and no other
// tenant's. What is given back is taken again, and an idle tenant leaves
// nothing behind.
func TestSelfHostedShares(t *testing.T) {
	t.Parallel()
	s := newShares(2, 100)
	refused := func(err error) {
		t.Helper()
		var e *apierr.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, apierr.SelfHostedBudget, e.Code)
		require.Equal(t, 1, e.RetryAfter)
	}
	a1, err := s.acquire("a", true)
	require.NoError(t, err)
	a2, err := s.acquire("a", true)
	require.NoError(t, err)
	_, err = s.acquire("a", true)
	refused(err)
	poll, err := s.acquire("a", false)
	require.NoError(t, err, "a long-poll takes no request slot")
	b1, err := s.acquire("b", true)
	require.NoError(t, err, "another tenant has its own share")

	require.NoError(t, a1.Take(60))
	refused(a2.Take(41))
	require.NoError(t, b1.Take(100), "another tenant's bytes are its own")
	require.NoError(t, a2.Take(40))
	a1.Give(60)
	require.NoError(t, poll.Take(60))

	a1.done()
	a3, err := s.acquire("a", true)
	require.NoError(t, err, "a slot given back is taken again")
	a2.Give(40)
	poll.Give(60)
	b1.Give(100)
	for _, sh := range []*share{a2, a3, poll, b1} {
		sh.done()
	}
	require.Empty(t, s.use, "nothing in flight, nothing kept")
}

// An answer that holds nothing waits for room until its request's
// deadline, and takes it when another gives bytes back; one that holds
// bytes and needs more is refused at once (answers holding bytes never
// wait, so they always end); one past its deadline is refused.
func TestSelfHostedShareWaitsForRoom(t *testing.T) {
	t.Parallel()
	s := newShares(10, 100)
	take := func(n int) (*share, chan error) {
		sh, err := s.acquire("a", true)
		require.NoError(t, err)
		sh.ctx, sh.deadline = context.Background(), time.Now().Add(time.Minute)
		done := make(chan error, 1)
		go func() { done <- sh.Take(n) }()
		return sh, done
	}
	first, done := take(80)
	require.NoError(t, <-done)
	second, waiting := take(50)
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.use["a"].waiting == 1
	}, 10*time.Second, time.Millisecond, "the second waits for room")
	require.Error(t, first.Take(30), "an answer holding bytes does not wait")
	first.Give(80)
	require.NoError(t, <-waiting, "room given back is taken")

	late, err := s.acquire("a", true)
	require.NoError(t, err)
	late.ctx, late.deadline = context.Background(), time.Now()
	require.Error(t, late.Take(60), "past its deadline")
	second.Give(50)
	for _, sh := range []*share{first, second, late} {
		sh.done()
	}
	require.Empty(t, s.use)
}
