package shard

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// alertConfig evaluates alert rules every 100 ms.
func alertConfig(c *Config) { c.AlertInterval = 100 * time.Millisecond }

// alertEvents are the alert events delivered of rule, in order.
func (r *hookReceiver) alertEvents(t *testing.T, rule string) (typs []string, data []wire.WebhookAlertData) {
	t.Helper()
	for _, c := range r.delivered() {
		if c.ev.Subject != rule || (c.ev.Type != "dev.jobbie.alert.firing" && c.ev.Type != "dev.jobbie.alert.resolved") {
			continue
		}
		var d wire.WebhookAlertData
		require.NoError(t, json.Unmarshal(c.ev.Data, &d))
		typs, data = append(typs, c.ev.Type), append(data, d)
	}
	return typs, data
}

// waitAlert waits for the n-th alert event of rule (from 1) and returns it.
func (r *hookReceiver) waitAlert(t *testing.T, rule string, n int, typ string) wire.WebhookAlertData {
	t.Helper()
	var d wire.WebhookAlertData
	eventually(t, 30*time.Second, func() bool {
		typs, data := r.alertEvents(t, rule)
		if len(typs) < n {
			return false
		}
		require.Equal(t, "dev.jobbie.alert."+typ, typs[n-1], "alert event %d of %s", n, rule)
		d = data[n-1]
		return true
	}, fmt.Sprintf("alert event %d (%s) of %s", n, typ, rule))
	return d
}

// Every kind of rule fires once its condition holds and resolves once it
// no longer does, each delivered to a webhook subscribed to them, with
// the rule, queue, value, threshold and since; the API shows the state.
func TestAlertRulesFireAndResolve(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t, nil)
	b := setup(t, hookConfig(rcv), alertConfig)
	rcv.keys.Store(publicKeys(t, b, testNS))
	n := b.in(testNS)
	n.ok("POST", "/api/v1/webhooks", map[string]any{"url": rcv.srv.URL, "events": []string{"alert.firing", "alert.resolved"}}, 201)
	rule := func(name, kind, queue string, threshold float64, dur string, extra ...any) {
		body := map[string]any{"name": name, "kind": kind, "queue": queue, "threshold": threshold, "for": dur}
		for i := 0; i < len(extra); i += 2 {
			body[extra[i].(string)] = extra[i+1]
		}
		r := n.ok("POST", "/api/v1/alerts", body, 201)
		require.Equal(t, "ok", r.Body["state"])
	}
	fetch := func(queue string) string {
		f := n.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{queue}, "worker_id": "w", "timeout": 0}, 200)
		return f.Body["job_id"].(string)
	}
	die := func(queue string) {
		n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": queue, "max_retries": 0}, 201)
		n.ok("POST", "/api/v1/fail/"+fetch(queue), map[string]any{"error": "boom"}, 200)
	}

	// queue_depth_above: three pending jobs above 2, at once (for 0s).
	rule("deep", wire.AlertQueueDepth, "depth", 2, "0s")
	for range 3 {
		n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "depth"}, 201)
	}
	d := rcv.waitAlert(t, "deep", 1, "firing")
	require.Equal(t, wire.WebhookAlertData{Rule: "deep", Kind: wire.AlertQueueDepth, Queue: "depth", Value: 3, Threshold: 2, Since: d.Since}, d)
	got := n.ok("GET", "/api/v1/alerts/deep", nil, 200).Body
	require.Equal(t, "firing", got["state"])
	require.Equal(t, []any{map[string]any{"queue": "depth", "since": d.Since.Format(time.RFC3339Nano), "value": 3.0}}, got["firing"])
	fetch("depth")
	r := rcv.waitAlert(t, "deep", 2, "resolved")
	require.Equal(t, 2.0, r.Value, "two left pending: not above 2")
	require.Equal(t, d.Since, r.Since, "since when it fired")
	require.Equal(t, "ok", n.ok("GET", "/api/v1/alerts/deep", nil, 200).Body["state"])

	// oldest_pending_above: a job pending longer than 300ms; not before.
	rule("stale", wire.AlertOldest, "old", 0, "300ms")
	enq := time.Now()
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "old"}, 201)
	d = rcv.waitAlert(t, "stale", 1, "firing")
	require.Greater(t, d.Value, 0.3)
	require.Equal(t, 0.3, d.Threshold)
	require.False(t, d.Since.Before(enq.Add(300*time.Millisecond)), "fired at %s, before the job was 300ms old (%s)", d.Since, enq)
	t.Logf("oldest_pending_above fired %s after its condition held (interval 100ms)", d.Since.Sub(enq.Add(300*time.Millisecond)))
	fetch("old")
	rcv.waitAlert(t, "stale", 2, "resolved")

	// dead_increase: two jobs died within 2s; then the window passes.
	rule("dying", wire.AlertDead, "dead", 2, "2s")
	die("dead")
	die("dead")
	d = rcv.waitAlert(t, "dying", 1, "firing")
	require.Equal(t, 2.0, d.Value)
	r = rcv.waitAlert(t, "dying", 2, "resolved")
	require.False(t, time.Time(r.Since).IsZero())

	// failure_rate_above: under min_count nothing fires; 2 dead of 3
	// finished is above 50 %.
	rule("failing", wire.AlertFailureRate, "flaky", 50, "3s", "min_count", 3)
	die("flaky")
	die("flaky")
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "flaky"}, 201)
	n.ok("POST", "/api/v1/ack/"+fetch("flaky"), map[string]any{}, 200)
	d = rcv.waitAlert(t, "failing", 1, "firing")
	require.InDelta(t, 200.0/3, d.Value, 0.01)
	require.Equal(t, 50.0, d.Threshold)
	rcv.waitAlert(t, "failing", 2, "resolved")

	// no_worker: a pending job nobody fetched for 500ms; a fetch resolves.
	rule("idle", wire.AlertNoWorker, "lonely", 0, "500ms")
	enq = time.Now()
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "lonely"}, 201)
	d = rcv.waitAlert(t, "idle", 1, "firing")
	require.GreaterOrEqual(t, d.Value, 0.5)
	require.False(t, d.Since.Before(enq.Add(500*time.Millisecond)), "fired before 500ms without a fetch")
	t.Logf("no_worker fired %s after its condition held (interval 100ms)", d.Since.Sub(enq.Add(500*time.Millisecond)))
	fetch("lonely")
	rcv.waitAlert(t, "idle", 2, "resolved")

	// Every rule fired and resolved once only.
	for _, name := range []string{"deep", "stale", "dying", "failing", "idle"} {
		typs, _ := rcv.alertEvents(t, name)
		require.Equal(t, []string{"dev.jobbie.alert.firing", "dev.jobbie.alert.resolved"}, typs, name)
	}
	require.Zero(t, rcv.bad.Load(), "every request verified")
}

// A rule over every queue fires on each queue apart; disabling it
// resolves them, and deleting a firing rule resolves it too.
func TestAlertRuleOverEveryQueue(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t, nil)
	b := setup(t, hookConfig(rcv), alertConfig)
	rcv.keys.Store(publicKeys(t, b, testNS))
	n := b.in(testNS)
	n.ok("POST", "/api/v1/webhooks", map[string]any{"url": rcv.srv.URL, "events": []string{"*"}}, 201)
	n.ok("POST", "/api/v1/alerts", map[string]any{"name": "any", "kind": wire.AlertQueueDepth, "threshold": 0, "for": "0s"}, 201)
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "a"}, 201)
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "b"}, 201)
	eventually(t, 30*time.Second, func() bool {
		_, data := rcv.alertEvents(t, "any")
		return len(data) == 2
	}, "firing on both queues")
	typs, data := rcv.alertEvents(t, "any")
	require.Equal(t, []string{"dev.jobbie.alert.firing", "dev.jobbie.alert.firing"}, typs)
	require.ElementsMatch(t, []string{"a", "b"}, []string{data[0].Queue, data[1].Queue})
	got := n.ok("GET", "/api/v1/alerts", nil, 200).Body["alerts"].([]any)[0].(map[string]any)
	require.Len(t, got["firing"], 2)
	require.Len(t, got["values"], 2)

	n.ok("PUT", "/api/v1/alerts/any", map[string]any{"kind": wire.AlertQueueDepth, "threshold": 0, "for": "0s", "enabled": false}, 200)
	rcv.waitAlert(t, "any", 4, "resolved")
	require.Equal(t, "ok", n.ok("GET", "/api/v1/alerts/any", nil, 200).Body["state"])

	n.ok("PUT", "/api/v1/alerts/any", map[string]any{"kind": wire.AlertQueueDepth, "queue": "a", "threshold": 0, "for": "0s"}, 200)
	rcv.waitAlert(t, "any", 5, "firing")
	require.Equal(t, 204, n.call("DELETE", "/api/v1/alerts/any", nil).Status)
	d := rcv.waitAlert(t, "any", 6, "resolved")
	require.Equal(t, "a", d.Queue)
	require.Equal(t, 404, n.call("GET", "/api/v1/alerts/any", nil).Status)
}

// Bad rules are refused naming the field, and nothing is stored; a name
// is unique in its namespace; another namespace's rules are not found.
func TestAlertRulesBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	n := b.in(testNS)
	good := func() map[string]any {
		return map[string]any{"name": "r", "kind": wire.AlertFailureRate, "queue": "q", "threshold": 10, "for": "1m"}
	}
	for _, c := range []struct {
		field string
		set   map[string]any
	}{
		{"name", map[string]any{"name": ""}},
		{"name", map[string]any{"name": "a b"}},
		{"kind", map[string]any{"kind": "louder_than"}},
		{"queue", map[string]any{"queue": "bad queue"}},
		{"for", map[string]any{"for": "soon"}},
		{"for", map[string]any{"for": "-1s"}},
		{"for", map[string]any{"for": "0s"}},
		{"for", map[string]any{"for": "200h"}},
		{"threshold", map[string]any{"threshold": 101}},
		{"threshold", map[string]any{"threshold": -1}},
		{"threshold", map[string]any{"kind": wire.AlertNoWorker, "threshold": 3}},
		{"threshold", map[string]any{"kind": wire.AlertDead, "threshold": 1.5}},
		{"threshold", map[string]any{"kind": wire.AlertDead, "threshold": 0}},
		{"min_count", map[string]any{"min_count": -1}},
		{"min_count", map[string]any{"kind": wire.AlertQueueDepth, "min_count": 5}},
	} {
		body := good()
		for k, v := range c.set {
			body[k] = v
		}
		r := n.call("POST", "/api/v1/alerts", body)
		require.Equal(t, 400, r.Status, "%v: %s", c.set, r.Raw)
		require.Equal(t, c.field, r.Body["error"].(map[string]any)["field"], "%v: %s", c.set, r.Raw)
	}
	require.Empty(t, n.ok("GET", "/api/v1/alerts", nil, 200).Body["alerts"], "nothing stored")
	r := n.call("POST", "/api/v1/alerts", map[string]any{"name": "r", "kind": "x", "for": "1m", "colour": "red"})
	require.Equal(t, 400, r.Status, "unknown fields refused: %s", r.Raw)

	made := n.ok("POST", "/api/v1/alerts", good(), 201).Body
	require.EqualValues(t, wire.DefaultAlertMinCount, made["min_count"])
	require.Equal(t, true, made["enabled"])
	require.Equal(t, 409, n.call("POST", "/api/v1/alerts", good()).Status)
	r = n.call("PUT", "/api/v1/alerts/r", map[string]any{"name": "s", "kind": wire.AlertDead, "threshold": 1, "for": "1m"})
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "10m", n.ok("PUT", "/api/v1/alerts/r", map[string]any{"kind": wire.AlertDead, "threshold": 1, "for": "10m"}, 200).Body["for"])

	other := b.in(otherTestNS)
	require.Equal(t, 404, other.call("GET", "/api/v1/alerts/r", nil).Status)
	require.Equal(t, 404, other.call("PUT", "/api/v1/alerts/r", good()).Status)
	require.Equal(t, 404, other.call("DELETE", "/api/v1/alerts/r", nil).Status)
	require.Empty(t, other.ok("GET", "/api/v1/alerts", nil, 200).Body["alerts"])

	for i := 1; i < wire.MaxAlertRules; i++ {
		body := good()
		body["name"] = fmt.Sprint("r", i)
		n.ok("POST", "/api/v1/alerts", body, 201)
	}
	body := good()
	body["name"] = "one-too-many"
	require.Equal(t, 409, n.call("POST", "/api/v1/alerts", body).Status)
}

// A leader killed while rules fire: the new leader keeps them firing
// from the replicated state and does not fire them again (each firing's
// event may be delivered more than once, never made twice), then
// resolves them once their condition ends.
func TestAlertRulesSurviveALeaderKill(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t, nil)
	g := newShardGroup(t, 3, hookConfig(rcv), alertConfig)
	leader, via := g.leaderAndFollower() // a loaded machine may have elected another node than the first
	rcv.keys.Store(publicKeys(t, leader, testNS))
	created(t, retry(t, via, "POST", "/api/v1/webhooks", map[string]any{"url": rcv.srv.URL, "events": []string{"alert.firing", "alert.resolved"}}))
	createRule(t, via, map[string]any{"name": "deep", "kind": wire.AlertQueueDepth, "queue": "k", "for": "0s"})
	createRule(t, via, map[string]any{"name": "idle", "kind": wire.AlertNoWorker, "queue": "k", "for": "300ms"})
	created(t, retry(t, via, "POST", "/api/v1/enqueue", map[string]any{"queue": "k"}))
	rcv.waitAlert(t, "deep", 1, "firing")
	rcv.waitAlert(t, "idle", 1, "firing")

	killed := time.Now()
	require.NoError(t, leader.srv.Stop())
	eventually(t, 20*time.Second, func() bool {
		for _, n := range g.nodes {
			if n != leader && n.srv.IsLeader() {
				return true
			}
		}
		return false
	}, "a new leader")
	// The new leader evaluated both rules, more than For after it took
	// over, and they still fire once.
	eventually(t, 30*time.Second, func() bool {
		r := via.call("GET", "/api/v1/alerts", nil)
		if r.Status != 200 {
			return false
		}
		for _, a := range r.Body["alerts"].([]any) {
			at, _ := a.(map[string]any)["evaluated_at"].(string)
			if ts, err := time.Parse(time.RFC3339Nano, at); err != nil || ts.Before(killed.Add(time.Second)) {
				return false
			}
			require.Equal(t, "firing", a.(map[string]any)["state"])
		}
		return true
	}, "the new leader evaluates the rules")
	firings := func(rule, typ string) map[string]bool {
		ids := map[string]bool{}
		for _, c := range rcv.delivered() {
			if c.ev.Subject == rule && c.ev.Type == "dev.jobbie.alert."+typ {
				ids[c.ev.ID] = true
			}
		}
		return ids
	}
	require.Len(t, firings("deep", "firing"), 1, "fired once across the kill")
	require.Len(t, firings("idle", "firing"), 1, "fired once across the kill")

	// A worker fetches again after a 503 that may have leased the job (the
	// leader changed while it was replicated): nothing to fetch then means
	// the first lease held.
	var f resp
	ambiguous := false
	eventually(t, 20*time.Second, func() bool {
		f = retry(t, via, "POST", "/api/v1/fetch", map[string]any{"queues": []string{"k"}, "worker_id": "w", "timeout": 0})
		ambiguous = ambiguous || f.Status == 503
		return f.Status != 503
	}, "a fetch answered")
	if !ambiguous || f.Status != 204 {
		require.Equal(t, 200, f.Status, string(f.Raw))
	}
	eventually(t, 30*time.Second, func() bool {
		return len(firings("deep", "resolved")) == 1 && len(firings("idle", "resolved")) == 1
	}, "both resolve through the new leader")
	require.Len(t, firings("deep", "firing"), 1)
	require.Len(t, firings("idle", "firing"), 1)
	require.Zero(t, rcv.bad.Load())
}

// createRule creates an alert rule through b as a careful caller would:
// a 503 that may have been applied (the leader changed while it was
// replicated) is checked against the rules before it is sent again.
func createRule(t *testing.T, b *bundle, rule map[string]any) {
	t.Helper()
	eventually(t, 20*time.Second, func() bool {
		r := retry(t, b, "POST", "/api/v1/alerts", rule)
		if r.Status != 503 {
			require.Equal(t, 201, r.Status, string(r.Raw))
			return true
		}
		l := retry(t, b, "GET", "/api/v1/alerts", nil)
		require.Equal(t, 200, l.Status, string(l.Raw))
		for _, a := range l.Body["alerts"].([]any) {
			if a.(map[string]any)["name"] == rule["name"] {
				return true
			}
		}
		return false
	}, "the rule is created")
}
