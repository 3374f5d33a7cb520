package shard

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Another namespace's webhooks are 404 on every route and absent from
// its list; bad input is a 400 naming the field and changes nothing; a
// key limited to some queues is 403; a namespace holds at most 20.
func TestWebhookTenancyAndBadInput(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t, nil)
	b := setup(t, hookConfig(rcv))
	n, other := b.in(testNS), b.in(otherTestNS)
	url := rcv.srv.URL + "/h"
	id := n.ok("POST", "/api/v1/webhooks", map[string]any{"url": url, "events": []string{"job.completed"}}, 201).Body["id"].(string)
	before := n.ok("GET", "/api/v1/webhooks/"+id, nil, 200).Raw

	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/webhooks/" + id}, {"PUT", "/api/v1/webhooks/" + id}, {"DELETE", "/api/v1/webhooks/" + id},
		{"POST", "/api/v1/webhooks/" + id + "/rotate-secret"}, {"POST", "/api/v1/webhooks/" + id + "/test"},
		{"POST", "/api/v1/webhooks/" + id + "/redeliver"}, {"GET", "/api/v1/webhooks/" + id + "/deliveries"},
	} {
		var body any = map[string]any{"url": url, "events": []string{"job.dead"}}
		if strings.HasSuffix(c.path, "/redeliver") {
			body = map[string]any{"event_id": "1"}
		}
		require.Equal(t, 404, other.call(c.method, c.path, body).Status, "%s %s from another namespace", c.method, c.path)
	}
	require.Empty(t, other.ok("GET", "/api/v1/webhooks", nil, 200).Body["webhooks"])

	bad := []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"events": []string{"job.completed"}}, "url"},
		{map[string]any{"url": strings.Replace(url, "https", "http", 1), "events": []string{"job.completed"}}, "url"},
		{map[string]any{"url": url}, "events"},
		{map[string]any{"url": url, "events": []string{"job.completed", "job.nope"}}, "events[1]"},
		{map[string]any{"url": url, "events": []string{"job.completed", "job.completed"}}, "events[1]"},
		{map[string]any{"url": url, "events": []string{"*"}, "queues": []string{"ok", "bad queue"}}, "queues[1]"},
		{map[string]any{"url": url, "events": []string{"*"}, "description": strings.Repeat("x", 513)}, "description"},
	}
	for _, c := range bad {
		r := n.call("POST", "/api/v1/webhooks", c.body)
		require.Equal(t, 400, r.Status, "%v: %s", c.body, r.Raw)
		require.Equal(t, c.field, errField(r), "%v: %s", c.body, r.Raw)
		r = n.call("PUT", "/api/v1/webhooks/"+id, c.body)
		require.Equal(t, 400, r.Status, "%v: %s", c.body, r.Raw)
		require.Equal(t, c.field, errField(r), "%v: %s", c.body, r.Raw)
	}
	require.Equal(t, 400, n.call("POST", "/api/v1/webhooks", map[string]any{"url": url, "events": []string{"*"}, "nope": 1}).Status)
	require.Equal(t, before, n.ok("GET", "/api/v1/webhooks/"+id, nil, 200).Raw, "refusals changed nothing")
	require.Len(t, n.ok("GET", "/api/v1/webhooks", nil, 200).Body["webhooks"], 1)

	require.Equal(t, 403, b.withScope("a*").call("GET", "/api/v1/webhooks", nil).Status)
	require.Equal(t, 403, b.withScope("a*").call("POST", "/api/v1/webhooks", map[string]any{"url": url, "events": []string{"*"}}).Status)

	for i := 1; i < 20; i++ {
		n.ok("POST", "/api/v1/webhooks", map[string]any{"url": fmt.Sprintf("%s/%d", url, i), "events": []string{"*"}}, 201)
	}
	r := n.call("POST", "/api/v1/webhooks", map[string]any{"url": url, "events": []string{"*"}})
	require.Equal(t, 409, r.Status, string(r.Raw))
	require.Contains(t, string(r.Raw), "limit is 20")
}

// Without allow-private, a loopback URL is refused naming url.
func TestWebhookLoopbackRefusedWithoutAllowPrivate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, u := range []string{"https://127.0.0.1/h", "https://[::1]:8443/h", "https://10.0.0.1/h", "https://169.254.169.254/latest"} {
		r := b.in(testNS).call("POST", "/api/v1/webhooks", map[string]any{"url": u, "events": []string{"*"}})
		require.Equal(t, 400, r.Status, "%s: %s", u, r.Raw)
		require.Equal(t, "url", errField(r), u)
	}
	require.Empty(t, b.in(testNS).ok("GET", "/api/v1/webhooks", nil, 200).Body["webhooks"])
}

// An update replaces the settings and keeps the cursor; disabling stops
// deliveries; a rotation adds a secret the next deliveries are signed
// with beside the old; a delete removes the endpoint.
func TestWebhookUpdateRotateDelete(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t, nil)
	b := setup(t, hookConfig(rcv))
	n := b.in(testNS)
	mk := n.ok("POST", "/api/v1/webhooks", map[string]any{"url": rcv.srv.URL, "events": []string{"job.enqueued"}, "secret": true}, 201)
	id, first := mk.Body["id"].(string), mk.Body["secret"].(string)
	rot := n.ok("POST", "/api/v1/webhooks/"+id+"/rotate-secret", nil, 200)
	second := rot.Body["secret"].(string)
	require.NotEqual(t, first, second)
	require.Len(t, rot.Body["secret_ids"], 2, "the old secret signs through the overlap")

	for _, k := range []string{first, second} {
		rcv.keys.Store([]string{k})
		job := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": 1}, 201).Body["job_id"].(string)
		rcv.waitJob(t, "dev.jobbie.job.enqueued", job)
	}

	off := n.ok("PUT", "/api/v1/webhooks/"+id, map[string]any{"url": rcv.srv.URL, "events": []string{"job.enqueued"}, "enabled": false}, 200)
	require.Equal(t, false, off.Body["enabled"])
	require.Len(t, off.Body["secret_ids"], 2, "an update keeps the secrets")
	quiet := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": 1}, 201).Body["job_id"].(string)
	// Enabled again, it resumes at its cursor: the event of the disabled
	// time comes, before the next one.
	n.ok("PUT", "/api/v1/webhooks/"+id, map[string]any{"url": rcv.srv.URL, "events": []string{"job.enqueued"}}, 200)
	after := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": 1}, 201).Body["job_id"].(string)
	rcv.waitJob(t, "dev.jobbie.job.enqueued", after)
	var order []string
	for _, c := range rcv.delivered() {
		order = append(order, c.ev.Subject)
	}
	require.Equal(t, quiet, order[len(order)-2], "in order, the backlog first")

	n.ok("DELETE", "/api/v1/webhooks/"+id, nil, 204)
	require.Equal(t, 404, n.call("GET", "/api/v1/webhooks/"+id, nil).Status)
	require.Equal(t, 404, n.call("DELETE", "/api/v1/webhooks/"+id, nil).Status)
}

// An endpoint that keeps failing reads as failing, then, past the
// disable bound, as disabled with the reason; a PUT enables it again and
// the event it was stuck on is delivered.
func TestWebhookFailingEndpointIsDisabled(t *testing.T) {
	t.Parallel()
	var healthy atomic.Bool
	rcv := newHookReceiver(t, func(int) int {
		if healthy.Load() {
			return 200
		}
		return 503
	})
	b := setup(t, hookConfig(rcv), func(c *Config) { c.WebhookDisableAfter = 500 * time.Millisecond })
	rcv.keys.Store(publicKeys(t, b, testNS))
	n := b.in(testNS)
	id := n.ok("POST", "/api/v1/webhooks", map[string]any{"url": rcv.srv.URL, "events": []string{"job.enqueued"}}, 201).Body["id"].(string)
	job := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": 1}, 201).Body["job_id"].(string)
	var w resp
	eventually(t, 30*time.Second, func() bool {
		w = n.ok("GET", "/api/v1/webhooks/"+id, nil, 200)
		return w.Body["disabled"] != nil
	}, "the failing endpoint was never disabled")
	require.NotNil(t, w.Body["failing_since"], string(w.Raw))
	require.Contains(t, w.Body["disabled"].(map[string]any)["reason"], "503", string(w.Raw))
	require.Equal(t, true, w.Body["enabled"], "the tenant's setting stays; disabled says why it is not delivered")

	healthy.Store(true)
	on := n.ok("PUT", "/api/v1/webhooks/"+id, map[string]any{"url": rcv.srv.URL, "events": []string{"job.enqueued"}}, 200)
	require.Nil(t, on.Body["disabled"], string(on.Raw))
	require.Nil(t, on.Body["failing_since"], string(on.Raw))
	rcv.waitJob(t, "dev.jobbie.job.enqueued", job)
}
