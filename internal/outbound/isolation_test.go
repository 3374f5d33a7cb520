package outbound

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One tenant whose endpoint never answers, with three times its bound of
// requests sent, does not delay another tenant's requests: b's requests
// all complete while every one of a's is still held (a's extra requests
// wait for a's own slots, never reaching its endpoint). The latencies of
// b alone and of b beside a's flood are logged (run with -v to see them).
func TestSlowTenantDoesNotDelayAnother(t *testing.T) {
	t.Parallel()
	const perTenant, requests = 4, 200
	entered := make(chan struct{}, 3*perTenant)
	hang := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		entered <- struct{}{}
		<-req.Context().Done()
		hangUp()
	})
	fast := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	c := newClient(t, func(c *Config) { c.PerTenant = perTenant }, hang, fast)

	run := func() []time.Duration {
		lat := make([]time.Duration, 0, requests)
		for range requests {
			start := time.Now()
			_, err := c.Do(t.Context(), Request{Tenant: "b", URL: fast.URL})
			require.NoError(t, err)
			lat = append(lat, time.Since(start))
		}
		return lat
	}
	alone := run()

	flood, stopFlood := context.WithCancel(context.Background())
	var returned atomic.Int64
	var wg sync.WaitGroup
	for range 3 * perTenant {
		wg.Go(func() {
			_, err := c.Do(flood, Request{Tenant: "a", URL: hang.URL, Timeout: time.Hour})
			assert.Error(t, err)
			returned.Add(1)
		})
	}
	for range perTenant {
		<-entered
	}
	beside := run()
	require.Zero(t, returned.Load(), "all of a's requests are still held while b's completed")
	require.Len(t, entered, 0, "a's requests beyond its bound never reached its endpoint")
	stopFlood()
	wg.Wait()

	t.Logf("tenant b, %d sequential requests: alone p50 %v p99 %v; beside a's %d hung requests p50 %v p99 %v",
		requests, pct(alone, 50), pct(alone, 99), 3*perTenant, pct(beside, 50), pct(beside, 99))
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
