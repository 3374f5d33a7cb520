package shard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func allowPrivate(c *Config) { c.PushAllowPrivate = true }

// A queue's push settings read back as sent, with their defaults filled
// in; a PUT without push makes it a pull queue again.
func TestQueuePushRoundTrips(t *testing.T) {
	t.Parallel()
	b := setup(t, allowPrivate)
	q := b.putQueue("hooks", map[string]any{"push": map[string]any{"url": "https://127.0.0.1:8443/jobs"}})
	require.Equal(t, map[string]any{"url": "https://127.0.0.1:8443/jobs", "mode": "always", "timeout": "30s",
		"max_in_flight": 10.0, "headers": map[string]any{}}, q["push"])

	spec := map[string]any{"url": "https://localhost:8443/j", "mode": "when_no_workers", "timeout": 90, "max_in_flight": 3,
		"headers": map[string]any{"x-token": "abc", "Authorization": "Bearer t"}}
	want := map[string]any{"url": "https://localhost:8443/j", "mode": "when_no_workers", "timeout": "1m30s",
		"max_in_flight": 3.0, "headers": map[string]any{"X-Token": "abc", "Authorization": "Bearer t"}}
	require.Equal(t, want, b.putQueue("hooks", map[string]any{"push": spec})["push"])
	got := b.queueView("hooks")
	require.Equal(t, want, got["push"])
	// What was read goes back unchanged.
	require.Equal(t, want, b.putQueue("hooks", map[string]any{"push": got["push"]})["push"])

	require.Nil(t, b.putQueue("hooks", map[string]any{})["push"])
	require.Nil(t, b.queueView("hooks")["push"])
}

// Each bad push field is a 400 naming it, and the queue stays as it was.
func TestQueuePushBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, allowPrivate)
	good := map[string]any{"url": "https://127.0.0.1:8443/jobs", "max_in_flight": 2}
	before := b.putQueue("q", map[string]any{"push": good})
	many := map[string]any{}
	for i := range 21 {
		many["X-H"+strings.Repeat("a", i)] = "v"
	}
	cases := []struct {
		field string
		push  map[string]any
	}{
		{"push.url", map[string]any{"url": ""}},
		{"push.url", map[string]any{"url": "http://127.0.0.1:8443/jobs"}},
		{"push.url", map[string]any{"url": "https://user:pw@127.0.0.1:8443/jobs"}},
		{"push.url", map[string]any{"url": "https://127.0.0.1:22/jobs"}},
		{"push.mode", map[string]any{"url": good["url"], "mode": "sometimes"}},
		{"push.timeout", map[string]any{"url": good["url"], "timeout": "0s"}},
		{"push.timeout", map[string]any{"url": good["url"], "timeout": "16m"}},
		{"push.timeout", map[string]any{"url": good["url"], "timeout": "soon"}},
		{"push.max_in_flight", map[string]any{"url": good["url"], "max_in_flight": 0}},
		{"push.max_in_flight", map[string]any{"url": good["url"], "max_in_flight": 1001}},
		{"push.max_in_flight", map[string]any{"url": good["url"], "max_in_flight": "many"}},
		{"push.headers", map[string]any{"url": good["url"], "headers": many}},
		{"push.headers", map[string]any{"url": good["url"], "headers": map[string]any{"bad name": "v"}}},
		{"push.headers", map[string]any{"url": good["url"], "headers": map[string]any{"Webhook-Id": "x"}}},
		{"push.headers", map[string]any{"url": good["url"], "headers": map[string]any{"content-type": "x"}}},
		{"push.headers", map[string]any{"url": good["url"], "headers": map[string]any{"X-Big": strings.Repeat("v", 1100)}}},
		{"push.headers", map[string]any{"url": good["url"], "headers": map[string]any{"X-A": "v", "x-a": "w"}}},
	}
	for _, c := range cases {
		r := b.call("PUT", "/api/v1/queues/q", map[string]any{"push": c.push})
		require.Equal(t, 400, r.Status, "%v: %s", c.push, r.Raw)
		require.Equal(t, c.field, errField(r), "%v: %s", c.push, r.Raw)
	}
	require.Equal(t, before["push"], b.queueView("q")["push"], "a refused PUT changes nothing")
}

// Without --push-allow-private a loopback or private target is refused
// when the queue is configured, by name or by address.
func TestQueuePushRefusesPrivateTargets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, u := range []string{"https://127.0.0.1:8443/j", "https://localhost:8443/j", "https://10.0.0.1/j",
		"https://169.254.169.254/latest", "https://[::1]:8443/j"} {
		r := b.call("PUT", "/api/v1/queues/q", map[string]any{"push": map[string]any{"url": u}})
		require.Equal(t, 400, r.Status, "%s: %s", u, r.Raw)
		require.Equal(t, "push.url", errField(r), u)
	}
	require.Equal(t, 404, b.call("GET", "/api/v1/queues/q", nil).Status, "nothing was created")
}
