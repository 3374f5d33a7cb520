package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// The control plane as a 3-node group under `jobbie dev --replicas 3`:
// its leader killed under load, and every node stopped. Both are part of
// `make test`; JOBBIE_CHAOS_LONG=1 (`make chaos`) runs them longer.

// haLong reports whether to run the long versions.
func haLong() bool { return os.Getenv("JOBBIE_CHAOS_LONG") != "" }

// controlProcs are the control nodes in cluster.json.
func controlProcs(c *localCluster) []clusterProc {
	var out []clusterProc
	for _, p := range c.procs() {
		if p.Role == "control" {
			out = append(out, p)
		}
	}
	return out
}

// controlLeader waits for a control node other than the process notPID
// to lead and be ready.
func controlLeader(c *localCluster, notPID int, within time.Duration) (clusterProc, bool) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, p := range controlProcs(c) {
			if p.PID == notPID || p.PID == 0 {
				continue
			}
			if s, ok := c.status(p); ok && s.State == "leader" && s.Ready {
				return p, true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return clusterProc{}, false
}

// haCounts is what the load saw.
type haCounts struct {
	mu                sync.Mutex
	enqueued, acked   int64 // answered 2xx
	dataErrs          []string
	adminOK, admin503 int
	first503          int // a new namespace's first enqueue, while control could not say where it lives
	adminOther        []string
	last503           time.Time
}

func (h *haCounts) dataErr(format string, a ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.dataErrs) < 20 {
		h.dataErrs = append(h.dataErrs, fmt.Sprintf(format, a...))
	}
}

// admin records a tenant administration call's outcome: created, or a
// retryable 503 with Retry-After; anything else is an error.
func (h *haCounts) admin(what string, r postReply, err error) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err == nil && r.status == http.StatusCreated:
		h.adminOK++
		return true
	case err == nil && r.status == http.StatusServiceUnavailable:
		h.admin503++
		h.last503 = time.Now()
	default:
		if len(h.adminOther) < 20 {
			h.adminOther = append(h.adminOther, fmt.Sprintf("%s: %d %v %v", what, r.status, r.body, err))
		}
	}
	return false
}

func TestClusterControlLeaderKillUnderLoad(t *testing.T) {
	const queue = "ha.work"
	loadFor := 4 * time.Second
	if haLong() {
		loadFor = 20 * time.Second
	}
	c := launchCluster(t, 1, 3)
	require.Len(t, controlProcs(c), 3)
	lead, ok := controlLeader(c, 0, 30*time.Second)
	require.True(t, ok, "no control leader")
	op := client.New(c.control, c.operatorKey, client.WithHTTPClient(c.ops))
	ct, err := op.CreateTenant(ctx(t), fmt.Sprintf("ha-%d", time.Now().UnixNano()%1e9))
	require.NoError(t, err)
	key, gw := ct.OwnerKey, c.gateway
	from := time.Now().UTC().Truncate(time.Hour)

	h := &haCounts{}
	var stop atomic.Bool
	var wg sync.WaitGroup
	enqueue := func(ns string) {
		req, err := newRequest("POST", gw+"/api/v1/enqueue", key, map[string]any{"queue": queue, "payload": map[string]int{"n": 1}})
		if err != nil {
			h.dataErr("%v", err)
			return
		}
		if ns != "" {
			req.Header.Set(wire.NamespaceHeader, ns)
		}
		res, err := chaosClient.Do(req)
		if err != nil {
			h.dataErr("enqueue: %v", err)
			return
		}
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			h.dataErr("enqueue in %q: %d", ns, res.StatusCode)
			return
		}
		h.mu.Lock()
		h.enqueued++
		h.mu.Unlock()
	}
	// A namespace's first enqueue asks control where the namespace lives
	// (nothing has cached it yet), so right after a kill it may get a 503
	// like an admin call, and is sent again; every later call is the data
	// plane's.
	firstEnqueue := func(ns string) {
		for !stop.Load() {
			req, err := newRequest("POST", gw+"/api/v1/enqueue", key, map[string]any{"queue": queue, "payload": map[string]int{"n": 1}})
			if err != nil {
				h.dataErr("%v", err)
				return
			}
			req.Header.Set(wire.NamespaceHeader, ns)
			res, err := chaosClient.Do(req)
			if err != nil {
				h.dataErr("first enqueue: %v", err)
				return
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			switch {
			case res.StatusCode/100 == 2:
				h.mu.Lock()
				h.enqueued++
				h.mu.Unlock()
				return
			case res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "cannot locate namespace"):
				h.dataErr("first enqueue in %q: %d %s", ns, res.StatusCode, body)
				return
			}
			h.mu.Lock()
			h.first503++
			h.mu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
	}
	for range 2 { // producers into the default namespace
		wg.Go(func() {
			for !stop.Load() {
				enqueue("")
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	for w := range 3 { // workers
		wg.Go(func() {
			id := fmt.Sprintf("w%d", w)
			for !stop.Load() {
				var j wire.FetchedJob
				status, err := ucDo("POST", gw+"/api/v1/fetch", key, map[string]any{"queues": []string{queue}, "worker_id": id, "timeout": 1}, &j)
				if err != nil || (status != 200 && status != 204) {
					h.dataErr("fetch: %d %v", status, err)
					continue
				}
				if status == 204 {
					continue
				}
				var out wire.StatusResponse
				status, err = ucDo("POST", gw+"/api/v1/ack/"+j.JobID, key, map[string]any{"worker_id": id}, &out)
				if err != nil || status != 200 {
					h.dataErr("ack: %d %v", status, err)
					continue
				}
				h.mu.Lock()
				h.acked++
				h.mu.Unlock()
			}
		})
	}
	// Tenant administration: a key, then a namespace and a job in it.
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			r, err := post(gw+"/api/v1/keys", key, map[string]any{"name": fmt.Sprintf("k%d", i), "role": "producer", "namespaces": []string{"default"}})
			h.admin("create key", r, err)
			ns := fmt.Sprintf("ns%d", i)
			for sent503 := false; !stop.Load(); {
				r, err = post(gw+"/api/v1/namespaces", key, map[string]string{"name": ns})
				if sent503 && err == nil && r.status == http.StatusConflict { // created by a call whose answer was a 503
					firstEnqueue(ns)
					break
				}
				if h.admin("create namespace", r, err) {
					firstEnqueue(ns)
					break
				}
				sent503 = sent503 || err == nil && r.status == http.StatusServiceUnavailable
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	// Kill the control leader (once; three times in the long run), each
	// time once admin calls have succeeded since the last.
	kills := 1
	if haLong() {
		kills = 3
	}
	var elections, windows []time.Duration
	for k := range kills {
		time.Sleep(loadFor / time.Duration(2*kills))
		// The leader now: under load on a small machine it may have
		// changed since the start.
		lead, ok = controlLeader(c, 0, 30*time.Second)
		require.True(t, ok, "no control leader")
		h.mu.Lock()
		okBefore := h.adminOK
		h.mu.Unlock()
		killed := time.Now()
		require.NoError(t, syscall.Kill(lead.PID, syscall.SIGKILL))
		next, ok := controlLeader(c, lead.PID, 30*time.Second)
		require.True(t, ok, "no control leader after the kill")
		elections = append(elections, time.Since(killed))
		// Admin calls succeed again after the election.
		eventually(t, 15*time.Second, func() bool {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.adminOK > okBefore+2 && time.Since(h.last503) > time.Second
		}, "tenant administration works again after the election")
		h.mu.Lock()
		window := time.Duration(0)
		if h.last503.After(killed) {
			window = h.last503.Sub(killed)
		}
		h.mu.Unlock()
		windows = append(windows, window)
		t.Logf("kill %d: control leader %s killed; %s leads after %s; last admin 503 %s after the kill",
			k+1, lead.NodeID, next.NodeID, elections[k], window)
		require.Less(t, window, 10*time.Second, "the admin error window is bounded")
		time.Sleep(loadFor / time.Duration(2*kills))
	}
	stop.Store(true)
	wg.Wait()

	h.mu.Lock()
	t.Logf("a new namespace's first enqueue refused while control could not place it: %d", h.first503)
	t.Logf("control leader kills=%d elections=%v admin error windows=%v; admin ok=%d 503=%d; enqueued=%d acked=%d",
		kills, elections, windows, h.adminOK, h.admin503, h.enqueued, h.acked)
	require.Empty(t, h.adminOther, "tenant administration answered only 201 or 503")
	require.Empty(t, h.dataErrs, "the data plane does not depend on control")
	enqueued, acked := h.enqueued, h.acked
	h.mu.Unlock()

	// Metering goes on from the replicated cursor: usage equals what was
	// acknowledged, exactly, once it stops moving.
	var u wire.Usage
	eventually(t, 40*time.Second, func() bool {
		u, err = ucUsage(gw, key, from)
		return err == nil && u.Totals.JobsEnqueued == enqueued && u.Totals.JobsCompleted == acked
	}, fmt.Sprintf("usage equals enqueued=%d completed=%d", enqueued, acked))
	time.Sleep(3 * 2 * time.Second) // three pulls
	u, err = ucUsage(gw, key, from)
	require.NoError(t, err)
	require.Equal(t, enqueued, u.Totals.JobsEnqueued, "no usage counted twice")
	require.Equal(t, acked, u.Totals.JobsCompleted, "no usage counted twice")
	require.Equal(t, acked, u.Totals.Executions)
}

func TestClusterControlAllDown(t *testing.T) {
	const queue = "ha.down"
	outage := 6 * time.Second
	if haLong() {
		outage = 25 * time.Second // under the gateway's 30 s placement TTL
	}
	c := launchCluster(t, 1, 3)
	ctls := controlProcs(c)
	require.Len(t, ctls, 3)
	_, ok := controlLeader(c, 0, 30*time.Second)
	require.True(t, ok, "no control leader")
	op := client.New(c.control, c.operatorKey, client.WithHTTPClient(c.ops))
	ct, err := op.CreateTenant(ctx(t), fmt.Sprintf("down-%d", time.Now().UnixNano()%1e9))
	require.NoError(t, err)
	gw := c.gateway
	// An existing key, used once so the gateway has its signing key,
	// placement and revocations cached.
	r, err := post(gw+"/api/v1/keys", ct.OwnerKey, map[string]any{"name": "worker", "role": "developer", "namespaces": []string{"default"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.status, "%v", r.body)
	key, _ := r.body["key"].(string)
	require.NotEmpty(t, key)
	roundTrip := func() error {
		var e wire.EnqueueResponse
		if status, err := ucDo("POST", gw+"/api/v1/enqueue", key, map[string]any{"queue": queue, "payload": 1}, &e); err != nil || status/100 != 2 {
			return fmt.Errorf("enqueue: %d %v", status, err)
		}
		var j wire.FetchedJob
		if status, err := ucDo("POST", gw+"/api/v1/fetch", key, map[string]any{"queues": []string{queue}, "worker_id": "w", "timeout": 2}, &j); err != nil || status != 200 {
			return fmt.Errorf("fetch: %d %v", status, err)
		}
		if status, err := ucDo("POST", gw+"/api/v1/ack/"+j.JobID, key, map[string]any{"worker_id": "w"}, nil); err != nil || status != 200 {
			return fmt.Errorf("ack: %d %v", status, err)
		}
		return nil
	}
	// A first round trip needs control (the namespace's placement), whose
	// leadership may still move on a loaded machine: wait for one to pass.
	var first error
	eventually(t, 30*time.Second, func() bool { first = roundTrip(); return first == nil }, "no round trip before the outage")
	require.NoError(t, first)

	// Stop every control node (SIGSTOP: the dev supervisor would restart
	// a killed one).
	for _, p := range ctls {
		require.NoError(t, syscall.Kill(p.PID, syscall.SIGSTOP))
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			for _, p := range ctls {
				_ = syscall.Kill(p.PID, syscall.SIGCONT)
			}
		}
	}
	t.Cleanup(resume)
	down := time.Now()
	trips := 0
	var adminTook time.Duration
	for time.Since(down) < outage {
		require.NoError(t, roundTrip(), "an existing key works with control down (%s into the outage)", time.Since(down))
		trips++
		if adminTook == 0 {
			began := time.Now()
			r, err := post(gw+"/api/v1/keys", ct.OwnerKey, map[string]any{"name": "new", "role": "producer", "namespaces": []string{"default"}})
			adminTook = time.Since(began)
			require.NoError(t, err)
			require.Equal(t, http.StatusServiceUnavailable, r.status, "tenant administration with control down: %v", r.body)
			body, _ := json.Marshal(r.body)
			require.Contains(t, string(body), string(wire.CodeUnavailable))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if haLong() {
		// Past the revocation list's freshness bound (60 s from the last
		// list fetched, just before the outage) keys are refused rather
		// than trusted against a stale list.
		eventually(t, 60*time.Second, func() bool {
			var e wire.ErrorBody
			req, _ := newRequest("POST", gw+"/api/v1/enqueue", key, map[string]any{"queue": queue, "payload": 1})
			res, err := chaosClient.Do(req)
			if err != nil {
				return false
			}
			defer res.Body.Close()
			_ = json.NewDecoder(res.Body).Decode(&e)
			return res.StatusCode == http.StatusServiceUnavailable && e.Error != nil && e.Error.Code == wire.CodeRevocationsStale
		}, "keys refused once the revocation list is stale")
		t.Logf("keys refused with revocations_stale %s into the outage", time.Since(down))
	}
	resume()
	back := time.Now()
	eventually(t, 30*time.Second, func() bool {
		r, err := post(gw+"/api/v1/keys", ct.OwnerKey, map[string]any{"name": "after", "role": "producer", "namespaces": []string{"default"}})
		return err == nil && r.status == http.StatusCreated
	}, "tenant administration works again once control is back")
	t.Logf("control down %s: %d enqueue/fetch/ack round trips with an existing key; create key answered 503 in %s; admin back %s after resume",
		outage, trips, adminTook, time.Since(back))
	require.NoError(t, roundTrip())
}
