package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

type keyedPayload struct {
	K string `json:"k"`
	N int    `json:"n"`
}

// A fairness key with a backlog cannot starve another: 10,000 jobs of key
// "big" enqueued before 100 of key "small" in one queue, and every small
// job is handed out within the first ~200 single fetches.
func TestKeyedFairnessSmallKeyNotStarved(t *testing.T) {
	t.Parallel()
	c, ct := shared.tenant(t)
	const queue, big, small = "fair", 10_000, 100
	enqueue := func(key string, n int) {
		for done := 0; done < n; done += 1000 {
			req := client.BatchRequest{}
			for i := done; i < min(n, done+1000); i++ {
				req.Jobs = append(req.Jobs, client.EnqueueRequest{Queue: queue, FairnessKey: key, Payload: keyedPayload{K: key, N: i}})
			}
			_, err := c.EnqueueBatch(ctx(t), req)
			require.NoError(t, err)
		}
	}
	enqueue("big", big)
	enqueue("small", small)

	// The job detail shows the key, and search finds jobs by it.
	r := call(t, http.MethodPost, shared.gateway+"/api/v1/jobs/search", ct.OwnerKey, map[string]any{"queue": queue, "fairness_key": "small", "limit": 1})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	var page struct {
		Jobs  []map[string]any `json:"jobs"`
		Total int64            `json:"total"`
	}
	require.NoError(t, json.Unmarshal(r.Raw, &page))
	require.Len(t, page.Jobs, 1)
	require.Equal(t, "small", page.Jobs[0]["fairness_key"])
	require.EqualValues(t, small, page.Total)
	d, err := c.GetJob(ctx(t), page.Jobs[0]["id"].(string))
	require.NoError(t, err)
	require.Equal(t, "small", d.FairnessKey)

	fetches, smallSeen := 0, 0
	for smallSeen < small && fetches < big+small {
		j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, Timeout: time.Second, LeaseDuration: 10 * time.Minute})
		require.NoError(t, err)
		require.NotNil(t, j, "a job after %d fetches", fetches)
		fetches++
		var p keyedPayload
		require.NoError(t, json.Unmarshal(j.Payload, &p))
		if p.K == "small" {
			smallSeen++
		}
	}
	t.Logf("all %d small jobs delivered within %d fetches (of %d pending)", small, fetches, big+small)
	require.Equal(t, small, smallSeen)
	require.LessOrEqual(t, fetches, 210)
}

// key_concurrency {max: 2}: 20 workers fetching jobs of 5 concurrency
// keys, each holding its lease 20-50 ms, never have 3 active jobs of one
// key, and every job completes.
func TestKeyConcurrencyCapsEachKey(t *testing.T) {
	t.Parallel()
	c, ct := shared.tenant(t)
	const queue, keys, perKey, workers, capPerKey = "capped", 5, 40, 20, 2
	r := call(t, http.MethodPut, shared.gateway+"/api/v1/queues/"+queue, ct.OwnerKey, map[string]any{"key_concurrency": map[string]any{"max": capPerKey}})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"max": float64(capPerKey)}, r.Body["key_concurrency"])
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/queues/"+queue, ct.OwnerKey, nil)
	require.Equal(t, map[string]any{"max": float64(capPerKey)}, r.Body["key_concurrency"])
	r = call(t, http.MethodPut, shared.gateway+"/api/v1/queues/bad", ct.OwnerKey, map[string]any{"key_concurrency": map[string]any{"max": 0}})
	require.Equal(t, http.StatusBadRequest, r.Status)
	require.Equal(t, "key_concurrency.max", r.field())
	r = call(t, http.MethodPost, shared.gateway+"/api/v1/enqueue", ct.OwnerKey, map[string]any{"queue": queue, "concurrency_key": "a\x01b"})
	require.Equal(t, http.StatusBadRequest, r.Status)
	require.Equal(t, "concurrency_key", r.field())

	req := client.BatchRequest{}
	for i := range keys * perKey {
		k := fmt.Sprintf("acct-%d", i%keys)
		req.Jobs = append(req.Jobs, client.EnqueueRequest{Queue: queue, ConcurrencyKey: k, Payload: keyedPayload{K: k, N: i}})
	}
	_, err := c.EnqueueBatch(ctx(t), req)
	require.NoError(t, err)

	var active [keys]atomic.Int32
	var worst, done atomic.Int32
	var wg sync.WaitGroup
	deadline := time.Now().Add(2 * time.Minute)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Load() < keys*perKey && time.Now().Before(deadline) {
				j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, WorkerID: fmt.Sprint("w", w), Timeout: time.Second})
				if err != nil || j == nil {
					continue
				}
				var p keyedPayload
				if json.Unmarshal(j.Payload, &p) != nil {
					continue
				}
				k := p.N % keys
				n := active[k].Add(1)
				for {
					old := worst.Load()
					if n <= old || worst.CompareAndSwap(old, n) {
						break
					}
				}
				time.Sleep(time.Duration(20+p.N%31) * time.Millisecond)
				active[k].Add(-1) // before the ack: the slot is freed by it
				if c.Ack(ctx(t), j.ID, nil) == nil {
					done.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d jobs done; most active of one key at once: %d", done.Load(), worst.Load())
	require.EqualValues(t, keys*perKey, done.Load())
	require.LessOrEqual(t, worst.Load(), int32(capPerKey))
	require.EqualValues(t, capPerKey, worst.Load(), "the cap was reached, not just kept")
}
