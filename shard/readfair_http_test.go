package shard

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// One namespace's heavy reads cannot slow another's job lifecycle: while
// namespace A runs 8 concurrent jq searches, each using its whole budget,
// namespace B's enqueue→fetch→ack round trip keeps its p99 within 3× of
// B alone. The two are measured in the same test, alternating rounds of
// B alone and B beside A's searches, so that the machine's other load
// falls on both alike. A's searches take turns in the node's read slots
// (api/sched.go); before those, they took every core at once.
func TestHeavyReadsLeaveTheLifecycleAlone(t *testing.T) {
	const (
		searchers = 8
		rounds    = 24
		perRound  = 20 // B's round trips per phase of a round: short phases, so that a burst of the machine's other load falls on both alike
	)
	b := setup(t, func(c *Config) { c.SearchBudget = 50 * time.Millisecond })
	b.fill(testNS, "a", 20_000)

	roundTrip := func() time.Duration {
		start := time.Now()
		r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "b", "payload": map[string]any{"n": 1}}, wire.ShardNamespaceHeader, otherNS)
		require.Equal(t, 201, r.Status, string(r.Raw))
		f := b.call("POST", "/api/v1/fetch", map[string]any{"queues": []string{"b"}, "worker_id": "w1", "timeout": 0}, wire.ShardNamespaceHeader, otherNS)
		require.Equal(t, 200, f.Status, string(f.Raw))
		a := b.call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), map[string]any{}, wire.ShardNamespaceHeader, otherNS)
		require.Equal(t, 200, a.Status, string(a.Raw))
		return time.Since(start)
	}
	for range 20 { // connections open, caches warm
		roundTrip()
	}

	var alone, beside []time.Duration
	var st searchStats
	for range rounds {
		for range perRound {
			alone = append(alone, roundTrip())
		}
		stop := startSearches(t, b, searchers, &st)
		for range perRound {
			beside = append(beside, roundTrip())
		}
		stop()
	}

	pa, pb := p99(alone), p99(beside)
	t.Logf("B's round trip p50/p99: alone %s / %s, beside A's %d searches %s / %s (p99 %.2f×); A's searches: %d answered (%d used their whole budget), %d refused (429/503)",
		p50(alone), pa, searchers, p50(beside), pb, float64(pb)/float64(pa), st.answered.Load(), st.partial.Load(), st.refused.Load())
	require.Positive(t, st.partial.Load(), "A's searches must use their budget for the test to mean anything")
	require.LessOrEqual(t, pb, 3*pa, "B's round trip p99 beside A's searches against 3× alone")
}

type searchStats struct{ answered, partial, refused atomic.Int64 }

// startSearches runs n loops of namespace A's jq search, a filter no job
// matches so that each scans until its budget runs out, and waits until
// every loop sent its first. stop lets each finish the search it is in.
func startSearches(t *testing.T, b *bundle, n int, st *searchStats) (stop func()) {
	body, err := json.Marshal(map[string]any{"payload_jq": `.n == -1`, "limit": 10})
	require.NoError(t, err)
	var done atomic.Bool
	var wg sync.WaitGroup
	var sent sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		sent.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for !done.Load() {
				req, _ := http.NewRequest("POST", b.url+"/api/v1/jobs/search", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(wire.ShardNamespaceHeader, testNS)
				if first {
					sent.Done()
					first = false
				}
				res, err := b.client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				switch res.StatusCode {
				case 200:
					st.answered.Add(1)
					var page struct {
						Partial bool `json:"partial"`
					}
					if json.Unmarshal(raw, &page) == nil && page.Partial {
						st.partial.Add(1)
					}
				case 429, 503:
					st.refused.Add(1)
				default:
					errs <- &searchError{res.StatusCode, string(raw)}
					return
				}
			}
		}()
	}
	sent.Wait()
	return func() {
		done.Store(true)
		wg.Wait()
		select {
		case err := <-errs:
			t.Fatalf("A's search: %v", err)
		default:
		}
	}
}

type searchError struct {
	status int
	body   string
}

func (e *searchError) Error() string { return http.StatusText(e.status) + ": " + e.body }

func p99(d []time.Duration) time.Duration { return quantile(d, 99) }
func p50(d []time.Duration) time.Duration { return quantile(d, 50) }

// quantile is d's q-th percentile, the nearest rank.
func quantile(d []time.Duration, q int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[max(0, min(len(s)-1, (len(s)*q+99)/100-1))]
}
