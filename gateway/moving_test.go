package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/proxy"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// movingAnswer is a shard's refusal of a request for a namespace it is
// cutting over (fenced) or no longer holds (moved).
func movingAnswer(w http.ResponseWriter, r *http.Request, how string) {
	w.Header().Set(wire.MovingHeader, how)
	w.Header().Set("Retry-After", "1")
	writeJSON(w, http.StatusServiceUnavailable, wire.ErrorBody{Error: &wire.Error{Code: wire.CodeNamespaceMoving,
		Message: "namespace is moving", RequestID: r.Header.Get(wire.RequestIDHeader)}})
}

// moveTo places tenant A's "default" on the fake shard s2 at control.
func (b *bundle) moveTo(s2 *fakeShard) {
	b.control.AddNamespace(tenantA, "default", "s2", s2.addr())
}

func TestMovingNamespaceRequestIsSentAgainWhereItMoved(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s2 := newFakeShard(t, b.ca, "s2", "n1")
	key := b.key(t, tenancy.RoleProducer, "default")
	var refused atomic.Int64
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		switch n := refused.Add(1); {
		case n < 3:
			movingAnswer(w, r, wire.MovingFenced)
		case n == 3: // the cut-over: control names s2, the source says so
			b.moveTo(s2)
			movingAnswer(w, r, wire.MovingMoved)
		default:
			t.Errorf("the source was asked again after it said the namespace moved")
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	resent := counterValue(t, "jobbie_gateway_moving_resent_total")
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.Equal(t, int64(3), refused.Load())
	require.GreaterOrEqual(t, counterValue(t, "jobbie_gateway_moving_resent_total"), resent+3, "jobbie_gateway_moving_resent_total")
	require.Equal(t, 1, s2.count())
	got := s2.last(t)
	require.JSONEq(t, mustJSON(t, enqueueBody), got.Body, "the same request, sent again")
	require.Equal(t, tenancy.ShardNamespace(tenantA, "default"), got.Header.Get(wire.ShardNamespaceHeader))
	require.GreaterOrEqual(t, b.control.PlacementCalls.Load(), int64(3), "control asked again on each refusal, not the cache")

	// Placed on s2 now: the next request goes there at once.
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status)
	require.Equal(t, 2, s2.count())
	require.Equal(t, int64(3), refused.Load())
}

func mustJSON(t testing.TB, v any) string {
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return string(out)
}

func TestMovingNamespaceBurstSharesControlCalls(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s2 := newFakeShard(t, b.ca, "s2", "n1")
	key := b.key(t, tenancy.RoleProducer, "default")
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status) // placed
	before := b.control.PlacementCalls.Load()

	var refusals atomic.Int64
	fenced := time.Now()
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		refusals.Add(1)
		movingAnswer(w, r, wire.MovingFenced)
	})
	const n = 16
	var wg sync.WaitGroup
	statuses := make(chan int, n)
	for range n {
		wg.Go(func() { statuses <- b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status })
	}
	// Hold the fence until every request was refused at least twice.
	require.Eventually(t, func() bool { return refusals.Load() >= 2*n }, 5*time.Second, 5*time.Millisecond)
	b.moveTo(s2)
	wg.Wait()
	close(statuses)
	for st := range statuses {
		require.Equal(t, http.StatusCreated, st)
	}
	calls := b.control.PlacementCalls.Load() - before
	t.Logf("%d requests refused %d times over %v; %d control calls", n, refusals.Load(), time.Since(fenced), calls)
	require.Equal(t, n, s2.count())
	require.Positive(t, calls)
	require.LessOrEqual(t, 2*calls, refusals.Load(), "refusals must share control calls")
}

func TestMovingNamespaceOutOfBudgetPassesTheShardsAnswer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := b.key(t, tenancy.RoleProducer, "default")
	var refusals atomic.Int64
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		refusals.Add(1)
		movingAnswer(w, r, wire.MovingFenced)
	})
	gaveUp := counterValue(t, "jobbie_gateway_moving_gave_up_total")
	start := time.Now()
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
	took := time.Since(start)
	require.GreaterOrEqual(t, counterValue(t, "jobbie_gateway_moving_gave_up_total"), gaveUp+1, "jobbie_gateway_moving_gave_up_total")
	r.requireError(t, http.StatusServiceUnavailable, apierr.NamespaceMoving)
	require.Equal(t, "1", r.header.Get("Retry-After"))
	require.GreaterOrEqual(t, took, proxy.MovingBudget)
	require.Less(t, took, proxy.MovingBudget+5*time.Second)
	// 25 ms doubling to 400 ms: about 25 attempts in 8 s, not a spin.
	require.Greater(t, refusals.Load(), int64(10))
	require.Less(t, refusals.Load(), int64(40))
}

func TestMovingNamespaceFetchWaitsOnlyWhatIsLeft(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s2 := newFakeShard(t, b.ca, "s2", "n1")
	key := b.key(t, tenancy.RoleWorker, "default")
	const parked = 1 * time.Second
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(parked) // a parked fetch, woken by the fence
		b.moveTo(s2)
		movingAnswer(w, r, wire.MovingFenced)
	})
	s2.setHandler(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	r := b.do(t, http.MethodPost, "/api/v1/fetch", key, map[string]any{"queues": []string{"q"}, "timeout": 3, "worker_id": "w1"})
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)

	var sent struct {
		Timeout  float64  `json:"timeout"`
		Queues   []string `json:"queues"`
		WorkerID string   `json:"worker_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(s2.last(t).Body), &sent))
	require.Equal(t, []string{"q"}, sent.Queues)
	require.Equal(t, "w1", sent.WorkerID)
	require.Greater(t, sent.Timeout, 0.5, "what is left of the wait")
	require.LessOrEqual(t, sent.Timeout, (3*time.Second).Seconds()-parked.Seconds())
}

func TestMovingNamespaceFetchBudgetIsItsWait(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := b.key(t, tenancy.RoleWorker, "default")
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) { movingAnswer(w, r, wire.MovingFenced) })
	start := time.Now()
	r := b.do(t, http.MethodPost, "/api/v1/fetch", key, map[string]any{"queues": []string{"q"}, "timeout": 10})
	took := time.Since(start)
	r.requireError(t, http.StatusServiceUnavailable, apierr.NamespaceMoving)
	require.Equal(t, "1", r.header.Get("Retry-After"))
	require.GreaterOrEqual(t, took, 10*time.Second, "a long-poll is retried for as long as it would wait")
}

func TestMovingNamespaceStreamBeforeItStarts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s2 := newFakeShard(t, b.ca, "s2", "n1")
	key := b.key(t, tenancy.RoleViewer, "default")
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		b.moveTo(s2)
		movingAnswer(w, r, wire.MovingMoved)
	})
	s2.setHandler(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "id: 1\nevent: job.enqueued\ndata: {}\n\n")
	})
	r := b.do(t, http.MethodGet, "/api/v1/events", key, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Contains(t, string(r.body), "event: job.enqueued")
	require.Equal(t, tenancy.ShardNamespace(tenantA, "default"), s2.last(t).Header.Get(wire.ShardNamespaceHeader))
}

func TestMovingNamespaceGatewaysOwnShardCalls(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s2 := newFakeShard(t, b.ca, "s2", "n1")
	owner := b.key(t, tenancy.RoleOwner, "*")
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		b.moveTo(s2)
		movingAnswer(w, r, wire.MovingMoved)
	})
	s2.setHandler(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, http.StatusOK, wire.NamespaceUsage{})
	})
	r := b.do(t, http.MethodDelete, "/api/v1/namespaces/default", owner, nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	require.Equal(t, 2, s2.count(), "the usage check and the delete, at the namespace's new shard")
}
