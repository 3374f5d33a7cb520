package shard

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// deliveries sums ns's delivery meters in every bucket of the last day,
// as control reads them.
func (b *bundle) deliveries(ns string) (push, hooks int64) {
	b.t.Helper()
	p := b.as(pkitest.Control).usagePage(time.Now().Add(-24*time.Hour), "", 0)
	for _, bk := range p.Buckets {
		if bk.Namespace == ns {
			push += bk.Meters.PushDeliveries
			hooks += bk.Meters.WebhookDeliveries
		}
	}
	return push, hooks
}

// Through the real dispatcher and webhook runner: a push answered 429
// (given back), then 500 (a failed attempt), then 200 counts two push
// deliveries; a webhook answered 500, then 204, counts two webhook
// deliveries, recorded with the runner's progress.
func TestUsageCountsDeliveryAttempts(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) {
		switch n {
		case 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
		case 2:
			http.Error(w, "down", 500)
		default:
			w.WriteHeader(204)
		}
	})
	hook := newHookReceiver(t, func(n int) int {
		if n == 1 {
			return 500
		}
		return 204
	})
	pool := hookPool(hook)
	pool.AddCert(rcv.srv.Certificate())
	b := setup(t, func(c *Config) {
		c.PushAllowPrivate, c.PushRootCAs, c.WebhookRetryBase = true, pool, 50*time.Millisecond
	})
	keys := publicKeys(t, b, testNS)
	rcv.keys.Store(keys)
	hook.keys.Store(keys)
	b.in(testNS).ok("POST", "/api/v1/webhooks", map[string]any{"url": hook.srv.URL, "events": []string{"job.completed"}}, 201)
	b.putQueue("hooks", map[string]any{"push": map[string]any{"url": rcv.srv.URL},
		"defaults": map[string]any{"retry_base_delay": 1, "retry_max_delay": 1}})
	id := b.enqueue(map[string]any{"queue": "hooks", "payload": 1})
	j := b.waitState(id, "completed")
	require.EqualValues(t, 2, j["attempt"], "the 429 spent no attempt")
	hook.waitJob(t, "dev.jobbie.job.completed", id)

	var push, hooks int64
	eventually(t, 30*time.Second, func() bool {
		push, hooks = b.deliveries(testNS)
		return push >= 2 && hooks >= 2
	}, "the deliveries are metered")
	require.EqualValues(t, 3, rcv.calls.Load())
	require.EqualValues(t, 2, push, "the 500 and the 204; not the 429")
	require.EqualValues(t, 2, hook.calls.Load())
	require.EqualValues(t, 2, hooks, "the 500 and the 204")
	require.Zero(t, rcv.bad.Load()+hook.bad.Load(), "every request verified")
}
