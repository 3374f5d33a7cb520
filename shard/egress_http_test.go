package shard

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/wire"
)

// A namespace's egress allow-list reads back as sent, leaves the
// retention as it was (and a retention change leaves the list); a bad
// entry is a 400 naming it and changes nothing; null clears it.
func TestNamespaceEgressAllowRoundTrips(t *testing.T) {
	t.Parallel()
	b := setup(t, allowPrivate)
	n := b.in(testNS)
	n.ok("PUT", "/api/v1/namespace", map[string]any{"retention": "2h"}, 200)
	u := n.ok("PUT", "/api/v1/namespace", map[string]any{"egress_allow": []string{"hooks.example.com", "*.example.net"}}, 200).Body
	require.Equal(t, "2h", u["retention"], "the retention was kept")
	require.Equal(t, []any{"hooks.example.com", "*.example.net"}, u["egress_allow"])
	u = n.ok("PUT", "/api/v1/namespace", map[string]any{"retention": "3h"}, 200).Body
	require.Equal(t, []any{"hooks.example.com", "*.example.net"}, u["egress_allow"], "the list was kept")

	many := make([]string, outbound.MaxAllowList+1)
	for i := range many {
		many[i] = "h.example.com"
	}
	for _, c := range []struct {
		field string
		allow any
	}{
		{"egress_allow[1]", []string{"ok.example.com", "not a host"}},
		{"egress_allow[0]", []string{"*.*.example.com"}},
		{"egress_allow[0]", []string{""}},
		{"egress_allow[0]", []string{strings.Repeat("a", 254)}},
		{"egress_allow", "hooks.example.com"},
		{"egress_allow", many},
	} {
		r := n.call("PUT", "/api/v1/namespace", map[string]any{"egress_allow": c.allow})
		require.Equal(t, 400, r.Status, "%v: %s", c.allow, r.Raw)
		require.Equal(t, c.field, errField(r), "%v: %s", c.allow, r.Raw)
	}
	require.Equal(t, []any{"hooks.example.com", "*.example.net"}, n.usage()["egress_allow"], "a refused PUT changes nothing")

	u = n.ok("PUT", "/api/v1/namespace", map[string]any{"egress_allow": nil}, 200).Body
	require.Nil(t, u["egress_allow"])
	require.Equal(t, "3h", u["retention"])
	require.Nil(t, b.in(otherTestNS).usage()["egress_allow"], "another namespace's list is its own")
}

// A push queue or webhook whose host is off the list is refused when it
// is configured (400 naming push.url / url), and nothing is created.
func TestEgressAllowRefusesConfiguration(t *testing.T) {
	t.Parallel()
	b := setup(t, allowPrivate)
	n := b.in(testNS)
	n.ok("PUT", "/api/v1/namespace", map[string]any{"egress_allow": []string{"*.example.net", "127.0.0.1"}}, 200)
	r := n.call("PUT", "/api/v1/queues/q", map[string]any{"push": map[string]any{"url": "https://hooks.example.com/jobs"}})
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "push.url", errField(r))
	require.Contains(t, string(r.Raw), "egress allow-list")
	require.Equal(t, 404, n.call("GET", "/api/v1/queues/q", nil).Status, "nothing was created")

	r = n.call("POST", "/api/v1/webhooks", map[string]any{"url": "https://example.net/h", "events": []string{"*"}})
	require.Equal(t, 400, r.Status, "*.example.net is its subdomains only: %s", r.Raw)
	require.Equal(t, "url", errField(r))
	require.Empty(t, n.ok("GET", "/api/v1/webhooks", nil, 200).Body["webhooks"])

	n.ok("PUT", "/api/v1/queues/q", map[string]any{"push": map[string]any{"url": "https://127.0.0.1:8443/jobs"}}, 200)
	// Another namespace's list does not bind this one.
	b.in(otherTestNS).ok("PUT", "/api/v1/queues/q", map[string]any{"push": map[string]any{"url": "https://localhost:8443/jobs"}}, 200)
}

// The list is held at delivery too: a queue configured while its host was
// allowed fails its attempts, with an error that says why, once the list
// leaves the host out, and completes once it is allowed again. A webhook
// endpoint's attempts fail the same way, in its delivery log.
func TestEgressAllowHeldAtDelivery(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) { w.WriteHeader(204) })
	hook := newHookReceiver(t, nil)
	pool := hookPool(hook)
	pool.AddCert(rcv.srv.Certificate())
	b := setup(t, func(c *Config) {
		c.PushAllowPrivate, c.PushRootCAs, c.WebhookRetryBase = true, pool, 50*time.Millisecond
	})
	n := b.in(testNS)
	rcv.keys.Store(publicKeys(t, b, testNS))
	hook.keys.Store(publicKeys(t, b, testNS))
	n.ok("PUT", "/api/v1/namespace", map[string]any{"egress_allow": []string{"127.0.0.1"}}, 200)
	n.ok("PUT", "/api/v1/queues/hooks", map[string]any{"push": map[string]any{"url": rcv.srv.URL + "/jobs"},
		"defaults": map[string]any{"retry_base_delay": 1, "retry_max_delay": 1, "max_retries": 1000}}, 200)
	wh := n.ok("POST", "/api/v1/webhooks", map[string]any{"url": hook.srv.URL, "events": []string{"job.enqueued"}}, 201).Body["id"].(string)

	n.ok("PUT", "/api/v1/namespace", map[string]any{"egress_allow": []string{"hooks.example.com"}}, 200)
	id := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "hooks", "payload": 1}, 201).Body["job_id"].(string)
	eventually(t, 30*time.Second, func() bool {
		for _, e := range b.job(id)["errors"].([]any) {
			if strings.Contains(e.(map[string]any)["error"].(string), `host "127.0.0.1" is not in the namespace's egress allow-list`) {
				return true
			}
		}
		return false
	}, "the push attempt never failed for the allow-list")
	eventually(t, 30*time.Second, func() bool {
		for _, d := range n.ok("GET", "/api/v1/webhooks/"+wh+"/deliveries", nil, 200).Body["deliveries"].([]any) {
			if e, _ := d.(map[string]any)["error"].(string); strings.Contains(e, "egress allow-list") {
				return true
			}
		}
		return false
	}, "the webhook attempt never failed for the allow-list")
	require.Zero(t, hook.calls.Load(), "the endpoint off the list was never called")

	n.ok("PUT", "/api/v1/namespace", map[string]any{"egress_allow": []string{"127.0.0.1"}}, 200)
	b.waitState(id, "completed")
	hook.waitJob(t, "dev.jobbie.job.enqueued", id)
}
