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
	// B has sent nothing before: a share is of slot time, so a tenant
	// whose earlier request held a slot longer than A has held its own
	// would rightly go after A. Starting idle, B is owed the next slot.
	held := holdAll(t, b)

	aDone, bDone := make(chan int, 1), make(chan int, 1)
	go func() { aDone <- b.do(t, http.MethodPost, "/api/v1/enqueue", keyA, enqueueBody).status }()
	waitQueued(t, b, 1)
	go func() { bDone <- b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody).status }()
	waitQueued(t, b, 2)
	held[0].Release()
	// Every other slot stays held: if B took the freed slot, B finishes,
	// and A may then finish in the slot B frees (so both can be ready
	// at once); if A took it, B waits for good.
	aStatus := 0
	select {
	case s := <-bDone:
		require.Equal(t, http.StatusCreated, s, "B's request took the freed slot")
	case aStatus = <-aDone:
		select {
		case sb := <-bDone:
			require.Equal(t, http.StatusCreated, sb, "B's request took the freed slot, then A the one B freed")
		case <-time.After(10 * time.Second):
			t.Fatalf("A's request, queued first, took the slot ahead of B's (it answered %d)", aStatus)
		}
	}
	for _, sl := range held[1:] {
		sl.Release()
	}
	if aStatus == 0 {
		aStatus = <-aDone
	}
	require.Equal(t, http.StatusCreated, aStatus)
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
