package shard

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// redirector is an HTTPS server on 127.0.0.1 that answers every request
// 307 to target's URL; hits counts the requests each received.
type redirector struct {
	srv, target *httptest.Server
	hits        atomic.Int64 // the redirector's
	targetHits  atomic.Int64 // the target's: must stay 0
}

func newRedirector(t *testing.T) *redirector {
	r := &redirector{}
	r.target = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		r.targetHits.Add(1)
		w.WriteHeader(200)
	}))
	t.Cleanup(r.target.Close)
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		http.Redirect(w, req, r.target.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// location is the redirect's target as the answer names it.
func (r *redirector) location() string { return r.target.URL + "/elsewhere" }

// A node that may call loopback (--push-allow-private) and trusts both
// servers: nothing but the certificate stands between it and the target.
func redirectNode(t *testing.T, r *redirector) *bundle {
	pool := x509.NewCertPool()
	pool.AddCert(r.srv.Certificate())
	pool.AddCert(r.target.Certificate())
	return setup(t, func(c *Config) {
		c.PushAllowPrivate, c.PushRootCAs, c.WebhookRetryBase = true, pool, 50*time.Millisecond
	})
}

// A push handler answering 307 to a second receiver: the second is never
// called, and the attempt fails with an error naming the status and the
// Location, saying the redirect is not followed.
func TestPushNeverFollowsARedirect(t *testing.T) {
	t.Parallel()
	r := newRedirector(t)
	b := redirectNode(t, r)
	b.putQueue("hooks", map[string]any{"push": map[string]any{"url": r.srv.URL + "/jobs"}})
	id := b.enqueue(map[string]any{"queue": "hooks", "payload": 1, "max_retries": 0})
	j := b.waitState(id, "dead")
	errs := j["errors"].([]any)
	require.Len(t, errs, 1)
	msg := errs[0].(map[string]any)["error"].(string)
	require.Contains(t, msg, "307")
	require.Contains(t, msg, r.location())
	require.Contains(t, msg, "redirects are not followed")
	require.EqualValues(t, 1, r.hits.Load())
	require.Zero(t, r.targetHits.Load(), "the redirect's target was never called")
}

// A webhook endpoint answering 307 to a second receiver: the second is
// never called, and the endpoint's delivery log shows each attempt
// refused with the status and the Location.
func TestWebhookNeverFollowsARedirect(t *testing.T) {
	t.Parallel()
	r := newRedirector(t)
	b := redirectNode(t, r)
	n := b.in(testNS)
	hook := n.ok("POST", "/api/v1/webhooks", map[string]any{"url": r.srv.URL + "/hook", "events": []string{"job.enqueued"}}, 201).Body["id"].(string)
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": 1}, 201)
	var refused map[string]any
	eventually(t, 30*time.Second, func() bool {
		for _, d := range n.ok("GET", "/api/v1/webhooks/"+hook+"/deliveries", nil, 200).Body["deliveries"].([]any) {
			d := d.(map[string]any)
			if e, _ := d["error"].(string); strings.Contains(e, "redirects are not followed") {
				refused = d
				return r.hits.Load() >= 2 // and retried: each attempt refused alike
			}
		}
		return false
	}, "the delivery log never showed the refused redirect")
	require.EqualValues(t, 307, refused["status"])
	require.Equal(t, false, refused["ok"])
	require.Contains(t, refused["error"], r.location())
	require.Equal(t, "dev.jobbie.job.enqueued", refused["type"])
	require.Zero(t, r.targetHits.Load(), "the redirect's target was never called")
}
