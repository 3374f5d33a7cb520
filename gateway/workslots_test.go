package gateway

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/fairshare"
	"github.com/jobbie/jobbie/tenancy"
)

// A tenant whose requests hold every work slot is refused after the
// wait: a request of its own that waited workWait gets 429 (its own
// load), another tenant's 503 (others' load), each with Retry-After.
func TestWorkSlotsRefuseAfterTheirWait(t *testing.T) {
	b := setup(t)
	keyA := b.key(t, tenancy.RoleOwner, "default")
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "default"))
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody).status)
	holdAll(t, b) // A's flood, in the middle of its work
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", keyA, enqueueBody)
	require.Contains(t, r.requireError(t, http.StatusTooManyRequests, apierr.RateLimited).Message, fairshare.ReasonWaited)
	require.Equal(t, "1", r.header.Get("Retry-After"))
	r = b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody)
	require.Contains(t, r.requireError(t, http.StatusServiceUnavailable, apierr.Unavailable).Message, fairshare.ReasonPoolBusy)
	require.Equal(t, "1", r.header.Get("Retry-After"))
}

// A tenant whose requests hold every work slot waits behind its own
// share: the next free slot goes to another tenant's request first,
// though the tenant's own request queued before it. The wait is long
// here, so that on a loaded machine A's request cannot give up before
// the slot frees, which would leave B alone to take it.
func TestWorkSlotsGoToAnotherTenantFirst(t *testing.T) {
	b := setup(t, func(c *Config) { c.workWait = time.Minute })
	keyA := b.key(t, tenancy.RoleOwner, "default")
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "default"))
	warm := time.Now()
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody).status)
	bSpent := time.Since(warm) // at least what B's slot was charged
	held := holdAll(t, b)
	heldAt := time.Now()

	aDone, bDone := make(chan int, 1), make(chan int, 1)
	go func() { aDone <- b.do(t, http.MethodPost, "/api/v1/enqueue", keyA, enqueueBody).status }()
	waitQueued(t, b, 1)
	go func() { bDone <- b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody).status }()
	waitQueued(t, b, 2)
	// Shares are of slot time: B is owed the next slot once A has held
	// one longer than B's first request held its own (on a loaded
	// machine that request can take longer than A has held its slots).
	if d := bSpent - time.Since(heldAt); d > 0 {
		time.Sleep(d + time.Millisecond)
	}
	held[0].Release()
	select {
	case s := <-bDone:
		require.Equal(t, http.StatusCreated, s, "B's request took the freed slot")
	case s := <-aDone:
		t.Fatalf("A's request, queued first, took the slot ahead of B's (it answered %d)", s)
	}
	for _, sl := range held[1:] {
		sl.Release()
	}
	require.Equal(t, http.StatusCreated, <-aDone)
}

// holdAll takes every work slot for tenant A, as its flood would.
func holdAll(t *testing.T, b *bundle) []*fairshare.Slot {
	t.Helper()
	var held []*fairshare.Slot
	for range b.gw.work.Config().Slots {
		sl, err := b.gw.work.Acquire(context.Background(), tenantA, 1)
		require.NoError(t, err)
		held = append(held, sl)
	}
	return held
}

// waitQueued waits until n requests wait for a gateway work slot.
func waitQueued(t *testing.T, b *bundle, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return b.gw.work.Waiting() >= n }, 10*time.Second, time.Millisecond)
}
