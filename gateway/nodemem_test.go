package gateway

import (
	"bytes"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/tunnel"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// giantAnswer answers 200 MiB without a stated length, as a node of a
// tenant's own that means harm could: chunked, from one small buffer, for
// as long as the gateway reads.
func giantAnswer(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for left := 200 << 20; left > 0; left -= len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return // the gateway hung up
		}
	}
}

// heapPeak samples the process's HeapInuse until stop is closed and
// returns the highest seen.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var peak uint64
		var ms runtime.MemStats
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// giantAnswerBound is what eight requests to a node answering 200 MiB may
// add to the heap at their peak: the tenant's share of answer bytes
// (proxy.DefaultSelfHostedAnswerBytes, 64 MiB) and the garbage of growing
// buffers before a collection. The gateway this test began from held up to
// 64 MiB for each of the eight, and again on each of their retries.
const giantAnswerBound = 256 << 20

// A tenant's self-hosted node answering 200 MiB cannot take the gateway's
// memory: its answer is refused at proxy.MaxAnswer with a 502 naming the
// limit, asked for once (a read is not retried for it), and eight such
// requests at once hold no more than the tenant's share of answer bytes
// (the ones over it are the tenant's 503 self_hosted_budget). Meanwhile
// another tenant's hosted namespace is served.
//
// Not parallel: it measures the process's heap.
func TestSelfHostedNodesGiantAnswersAreBounded(t *testing.T) {
	own, err := pki.NewCA("self-hosted shards")
	require.NoError(t, err)
	b := newBundle(t)
	b.control.Shards.SelfHosted = []wire.SelfHostedShard{{ID: "sh_a", TenantID: tenantA, Nodes: []string{"n1"}}}
	b.control.AddNamespace(tenantA, "onprem", "sh_a", "tunnel://sh_a/n1")
	// The shard timeout bounds a whole exchange, the answer's bytes
	// included, on the wall clock: the ~100 MiB these requests carry
	// through the tunnel take about 2 s of CPU under the race detector,
	// more than the default 10 s of wall clock when the machine gives the
	// process a tenth of a core, and then the answers are a right 503
	// "did not answer in time" that says nothing of memory. What this
	// test measures is the heap, so no timeout may end an answer first.
	b.start(t, func(c *Config) {
		c.TunnelAddr, c.SelfHostedCA = "127.0.0.1:0", own.CertPEM()
		c.ShardTimeout = 5 * time.Minute
	})
	b.waitReady(t)
	key := b.key(t, tenancy.RoleOwner, "*")
	a, fs := selfHostedNode(t, b, own, "sh_a", "n1", tenantA)
	waitState(t, a, "connected", func(st tunnel.AgentState) bool { return st.Connected })
	fs.setHandler(giantAnswer)
	start := heapInuse()

	// One request: refused at the limit, named, and asked once; nothing
	// of it stays in a pool.
	r := b.do(t, http.MethodGet, "/api/v1/queues", key, nil, wire.NamespaceHeader, "onprem")
	e := r.requireError(t, http.StatusBadGateway, apierr.ShardAnswerTooLarge)
	require.Contains(t, e.Message, "32 MiB")
	require.Equal(t, 1, fs.count(), "a refused answer is not asked for again")
	before := heapInuse()
	require.Less(t, int64(before)-int64(start), int64(16<<20), "kept after a collection: %d MiB", (int64(before)-int64(start))>>20)

	// Eight at once: the heap stays within the bound.
	stop := make(chan struct{})
	peak := heapPeak(stop)
	replies := make([]reply, 8)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Go(func() {
			replies[i] = b.do(t, http.MethodGet, "/api/v1/queues", key, nil, wire.NamespaceHeader, "onprem")
		})
	}
	wg.Wait()
	close(stop)
	grew := int64(<-peak) - int64(before)
	t.Logf("heap in use: %d MiB before, peak %+d MiB with eight requests to a node answering 200 MiB", before>>20, grew>>20)
	require.Less(t, grew, int64(giantAnswerBound), "the heap grew by %d MiB", grew>>20)
	statuses := map[int]int{}
	for _, r := range replies {
		statuses[r.status]++
	}
	t.Logf("answers: %v; the node was asked %d times", statuses, fs.count())
	for _, r := range replies {
		if r.status == http.StatusServiceUnavailable {
			r.requireError(t, http.StatusServiceUnavailable, apierr.SelfHostedBudget)
			require.NotEmpty(t, r.header.Get("Retry-After"))
			continue
		}
		r.requireError(t, http.StatusBadGateway, apierr.ShardAnswerTooLarge)
	}
	require.LessOrEqual(t, fs.count(), 1+len(replies), "no request was asked twice")

	// Another tenant's hosted namespace was never held up by it.
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "default"))
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody).status)
	// Nothing of the tenant's share stays held once its answers are done,
	// and an answer the share holds reaches the client whole.
	eventually(t, func() bool { return gaugeValue(t, "jobbie_gateway_self_hosted_answer_bytes") == 0 }, "the share given back")
	big := bytes.Repeat([]byte("y"), 1<<20)
	fs.setHandler(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(big) })
	r = b.do(t, http.MethodGet, "/api/v1/queues", key, nil, wire.NamespaceHeader, "onprem")
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, big, r.body)
	eventually(t, func() bool { return gaugeValue(t, "jobbie_gateway_self_hosted_answer_bytes") == 0 }, "the share given back")
}

// gaugeValue reads the gauge named name of the process's registry.
func gaugeValue(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := obs.Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}
