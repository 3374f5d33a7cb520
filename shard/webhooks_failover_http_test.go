package shard

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// One tenant's endpoints that never answer do not delay another
// tenant's: every event of the other tenant arrives while the first
// tenant's first deliveries are still hanging.
func TestWebhookSilentEndpointDoesNotDelayAnotherTenant(t *testing.T) {
	t.Parallel()
	silent, ok := newHookReceiver(t, nil), newHookReceiver(t, nil)
	silent.block = make(chan struct{})
	t.Cleanup(func() { close(silent.block) })
	b := setup(t, hookConfig(silent, ok))
	silent.keys.Store(publicKeys(t, b, testNS))
	ok.keys.Store(publicKeys(t, b, otherTestNS))
	a, other := b.in(testNS), b.in(otherTestNS)
	for range 3 {
		a.ok("POST", "/api/v1/webhooks", map[string]any{"url": silent.srv.URL, "events": []string{"*"}}, 201)
	}
	other.ok("POST", "/api/v1/webhooks", map[string]any{"url": ok.srv.URL, "events": []string{"job.enqueued"}}, 201)
	for range 20 {
		a.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": 1}, 201)
	}
	eventually(t, 30*time.Second, func() bool { return silent.inFlight.Load() == 3 }, "the silent endpoints are called")
	var ids []string
	sent := map[string]time.Time{}
	for range 20 {
		id := other.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": 1}, 201).Body["job_id"].(string)
		ids, sent[id] = append(ids, id), time.Now()
	}
	var lat []time.Duration
	for _, id := range ids {
		lat = append(lat, ok.waitJob(t, "dev.jobbie.job.enqueued", id).at.Sub(sent[id]))
	}
	slices.Sort(lat)
	t.Logf("the other tenant's enqueue to delivery, 20 events: p50 %s, max %s", lat[len(lat)/2], lat[len(lat)-1])
	require.EqualValues(t, 3, silent.calls.Load(), "the silent endpoints are still on their first delivery: the other tenant's came meanwhile")
	require.EqualValues(t, 3, silent.inFlight.Load())
}

// A leader killed during a flood of events: every event of a job whose
// enqueue was answered reaches the endpoint at least once, through the
// new leader, which resumes from the replicated cursor.
func TestWebhooksSurviveALeaderKill(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t, nil)
	g := newShardGroup(t, 3, hookConfig(rcv))
	rcv.keys.Store(publicKeys(t, g.nodes[0], testNS))
	r := retry(t, g.nodes[1], "POST", "/api/v1/webhooks", map[string]any{"url": rcv.srv.URL, "events": []string{"job.enqueued"}})
	created(t, r)

	var mu sync.Mutex
	var enqueued []string
	// Each enqueue is sent again while the group has no leader (503: not
	// landed); one whose answer was lost with the leader is not counted.
	flood := func(via *bundle, n int) {
		for range n {
			r := via.call("POST", "/api/v1/enqueue", map[string]any{"queue": "flood", "payload": 1})
			for end := time.Now().Add(20 * time.Second); r.Status == 503 && time.Now().Before(end); {
				time.Sleep(20 * time.Millisecond)
				r = via.call("POST", "/api/v1/enqueue", map[string]any{"queue": "flood", "payload": 1})
			}
			if r.Status == 201 {
				mu.Lock()
				enqueued = append(enqueued, r.Body["job_id"].(string))
				mu.Unlock()
			}
		}
	}
	// The flood goes through the two members that do not lead, so the
	// one that leads can go mid-flood (a loaded machine may have moved
	// the lead since the group formed).
	leader, rest := g.leaderAndRest()
	var wg sync.WaitGroup
	for _, via := range rest {
		wg.Add(1)
		go func() { defer wg.Done(); flood(via, 150) }()
	}
	eventually(t, 30*time.Second, func() bool { return len(rcv.delivered()) >= 50 }, "deliveries under way")
	require.NoError(t, leader.srv.Stop()) // the leader goes mid-flood
	wg.Wait()
	eventually(t, 20*time.Second, func() bool { return rest[0].srv.IsLeader() || rest[1].srv.IsLeader() }, "a new leader")
	for _, via := range rest {
		flood(via, 20) // and after the change
	}

	mu.Lock()
	want := append([]string(nil), enqueued...)
	mu.Unlock()
	require.Greater(t, len(want), 200, "the flood went on through the election")
	eventually(t, 60*time.Second, func() bool {
		got := map[string]bool{}
		for _, c := range rcv.delivered() {
			got[c.ev.Subject] = true
		}
		for _, id := range want {
			if !got[id] {
				return false
			}
		}
		return true
	}, "an enqueued job's event was never delivered")
	require.Zero(t, rcv.bad.Load())

	// The delivery log is the leader's; a follower forwards its read.
	hook := r.Body["id"].(string)
	follower := rest[0]
	if follower.srv.IsLeader() {
		follower = rest[1]
	}
	log := retry(t, follower, "GET", "/api/v1/webhooks/"+hook+"/deliveries", nil)
	require.Equal(t, 200, log.Status, string(log.Raw))
	require.NotEmpty(t, log.Body["deliveries"], "the new leader's deliveries, read through a follower")
	t.Logf("%d enqueues answered, %d deliveries (the rest: sent again after the leader change, or of enqueues whose answer was lost)",
		len(want), len(rcv.delivered()))
}
