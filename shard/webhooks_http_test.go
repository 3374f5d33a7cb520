package shard

import (
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sdk "github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// hookReceiver is a webhook endpoint on 127.0.0.1 over TLS: it verifies
// every request with the SDK's verifier against its keys, keeps what it
// received, and answers answer(n) to the n-th call (after block closes,
// when set).
type hookReceiver struct {
	srv    *httptest.Server
	keys   atomic.Value // []string
	answer func(n int) int
	block  chan struct{}

	calls    atomic.Int64
	inFlight atomic.Int64
	bad      atomic.Int64
	mu       sync.Mutex
	got      []hookCall
}

type hookCall struct {
	at     time.Time // when it arrived
	id     string    // webhook-id
	ev     wire.CloudEvent
	data   wire.WebhookJobData
	status int
}

func newHookReceiver(t *testing.T, answer func(n int) int) *hookReceiver {
	r := &hookReceiver{answer: answer}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.inFlight.Add(1)
		defer r.inFlight.Add(-1)
		n := int(r.calls.Add(1))
		body, _ := io.ReadAll(req.Body)
		keys, _ := r.keys.Load().([]string)
		if err := sdk.VerifyWebhook(req.Header, body, keys, 5*time.Minute); err != nil {
			r.bad.Add(1)
			http.Error(w, err.Error(), 401)
			return
		}
		if r.block != nil {
			select {
			case <-r.block:
			case <-req.Context().Done():
				return
			}
		}
		c := hookCall{at: time.Now(), id: req.Header.Get("webhook-id"), status: 200}
		if r.answer != nil {
			c.status = r.answer(n)
		}
		require.NoError(t, json.Unmarshal(body, &c.ev))
		_ = json.Unmarshal(c.ev.Data, &c.data)
		r.mu.Lock()
		r.got = append(r.got, c)
		r.mu.Unlock()
		w.WriteHeader(c.status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// delivered is what the receiver accepted (2xx).
func (r *hookReceiver) delivered() []hookCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []hookCall
	for _, c := range r.got {
		if c.status < 300 {
			out = append(out, c)
		}
	}
	return out
}

// all is every verified call, accepted or not.
func (r *hookReceiver) all() []hookCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookCall(nil), r.got...)
}

// waitJob waits for an accepted event of type typ about job id.
func (r *hookReceiver) waitJob(t *testing.T, typ, id string) hookCall {
	t.Helper()
	var found hookCall
	eventually(t, 30*time.Second, func() bool {
		for _, c := range r.delivered() {
			if c.ev.Type == typ && c.ev.Subject == id {
				found = c
				return true
			}
		}
		return false
	}, "no "+typ+" for "+id)
	return found
}

func hookPool(rcvs ...*hookReceiver) *x509.CertPool {
	pool := x509.NewCertPool()
	for _, r := range rcvs {
		pool.AddCert(r.srv.Certificate())
	}
	return pool
}

// hookConfig lets a node call the receivers on loopback, retrying fast.
func hookConfig(rcvs ...*hookReceiver) func(*Config) {
	return func(c *Config) {
		c.PushAllowPrivate, c.PushRootCAs, c.WebhookRetryBase = true, hookPool(rcvs...), 50*time.Millisecond
	}
}

// publicKeys is namespace ns's public signing keys.
func publicKeys(t *testing.T, b *bundle, ns string) []string {
	r := b.in(ns).ok("GET", "/api/v1/signing-keys", nil, 200)
	var keys []string
	for _, k := range r.Body["keys"].([]any) {
		keys = append(keys, k.(map[string]any)["public_key"].(string))
	}
	return keys
}

// complete enqueues a job on queue and acks it as a worker.
func (n *nsCaller) complete(queue string) string {
	n.b.t.Helper()
	id := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": queue, "payload": 1}, 201).Body["job_id"].(string)
	f := n.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{queue}, "worker_id": "w", "timeout": 0}, 200)
	require.Equal(n.b.t, id, f.Body["job_id"])
	n.ok("POST", "/api/v1/ack/"+id, map[string]any{}, 200)
	return id
}

// A completed job reaches its endpoint as a CloudEvent signed with the
// namespace's key (v1a) and the endpoint's secret (v1), each verifying
// alone; the type and queue filters hold; a test event and a
// redelivery (the same webhook-id) arrive and are in the delivery log.
func TestWebhookDeliversSignedCloudEvents(t *testing.T) {
	t.Parallel()
	mail, dead := newHookReceiver(t, nil), newHookReceiver(t, nil)
	b := setup(t, hookConfig(mail, dead))
	nsKeys := publicKeys(t, b, testNS)
	n := b.in(testNS)
	mk := n.ok("POST", "/api/v1/webhooks", map[string]any{"url": mail.srv.URL + "/hooks", "events": []string{"job.completed"},
		"queues": []string{"mail*"}, "secret": true, "description": "mail done"}, 201)
	secret := mk.Body["secret"].(string)
	require.True(t, strings.HasPrefix(secret, "whsec_"), mk.Raw)
	mail.keys.Store([]string{secret}) // the endpoint's secret alone verifies
	dead.keys.Store(nsKeys)
	id := mk.Body["id"].(string)
	n.ok("POST", "/api/v1/webhooks", map[string]any{"url": dead.srv.URL, "events": []string{"job.dead"}}, 201)
	got := n.ok("GET", "/api/v1/webhooks/"+id, nil, 200)
	require.NotContains(t, string(got.Raw), "whsec_", "a read never shows the secret")
	require.Len(t, n.ok("GET", "/api/v1/webhooks", nil, 200).Body["webhooks"], 2)

	other := n.complete("reports") // not a mail queue
	job := n.complete("mail.send")
	c := mail.waitJob(t, "dev.jobbie.job.completed", job)
	require.Equal(t, "1.0", c.ev.SpecVersion)
	require.Equal(t, "/namespaces/"+testNS, c.ev.Source)
	require.Equal(t, c.ev.ID, c.id, "webhook-id is the event's id")
	require.True(t, strings.HasPrefix(c.id, "s1:"), "an event's id as the event stream names it: %s", c.id)
	require.Equal(t, wire.WebhookJobData{JobID: job, Queue: "mail.send", State: "completed", From: "active", Attempt: 1}, c.data)
	require.False(t, c.ev.Time.IsZero())
	for _, d := range mail.delivered() {
		require.NotEqual(t, other, d.ev.Subject, "the queue filter holds")
		require.Equal(t, "dev.jobbie.job.completed", d.ev.Type, "the type filter holds")
	}

	// The namespace's key alone verifies the same endpoint's requests.
	mail.keys.Store(nsKeys)
	test := n.ok("POST", "/api/v1/webhooks/"+id+"/test", nil, 200)
	require.Equal(t, true, test.Body["ok"], test.Raw)
	require.EqualValues(t, 200, test.Body["status"])
	last := mail.delivered()[len(mail.delivered())-1]
	require.Equal(t, wire.WebhookTestType, last.ev.Type)

	re := n.ok("POST", "/api/v1/webhooks/"+id+"/redeliver", map[string]any{"event_id": c.ev.ID}, 200)
	require.Equal(t, true, re.Body["ok"], re.Raw)
	last = mail.delivered()[len(mail.delivered())-1]
	require.Equal(t, c.id, last.id, "a redelivery keeps the webhook-id")
	require.Equal(t, c.ev.Subject, last.ev.Subject)
	require.Equal(t, 404, n.call("POST", "/api/v1/webhooks/"+id+"/redeliver", map[string]any{"event_id": "1"}).Status)
	require.Equal(t, 404, n.call("POST", "/api/v1/webhooks/"+id+"/redeliver", map[string]any{"event_id": "s9" + c.ev.ID[2:]}).Status,
		"another shard's id")
	require.Equal(t, "event_id", errField(n.call("POST", "/api/v1/webhooks/"+id+"/redeliver", map[string]any{"event_id": "x"})))

	var log []any
	eventually(t, 10*time.Second, func() bool {
		log = n.ok("GET", "/api/v1/webhooks/"+id+"/deliveries", nil, 200).Body["deliveries"].([]any)
		return len(log) >= 3
	}, "the delivery log holds the runner's attempts (recorded with its progress), the test and the redelivery")
	require.Equal(t, c.ev.ID, log[0].(map[string]any)["event_id"], "newest first: the redelivery")
	require.Equal(t, wire.WebhookTestType, log[1].(map[string]any)["type"])
	require.Zero(t, mail.bad.Load()+dead.bad.Load(), "every request verified")
	require.Empty(t, dead.delivered(), "no job died")
}

// A receiver that fails (500) gets the event again, with the same
// webhook-id, until it accepts; the endpoint reads as failing meanwhile
// and not after.
func TestWebhookRetriesUntilTheReceiverRecovers(t *testing.T) {
	t.Parallel()
	recovered := make(chan struct{})
	var once sync.Once
	rcv := newHookReceiver(t, func(n int) int {
		if n <= 3 {
			return 500
		}
		once.Do(func() { close(recovered) })
		return 204
	})
	b := setup(t, hookConfig(rcv))
	rcv.keys.Store(publicKeys(t, b, testNS))
	n := b.in(testNS)
	id := n.ok("POST", "/api/v1/webhooks", map[string]any{"url": rcv.srv.URL, "events": []string{"*"}}, 201).Body["id"].(string)
	job := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": 1}, 201).Body["job_id"].(string)

	c := rcv.waitJob(t, "dev.jobbie.job.enqueued", job)
	<-recovered
	all := rcv.all()
	require.Len(t, all, 4, "three refusals, then the delivery")
	for _, a := range all {
		require.Equal(t, c.id, a.id, "the same webhook-id on every attempt")
	}
	var log []any
	eventually(t, 10*time.Second, func() bool {
		log = n.ok("GET", "/api/v1/webhooks/"+id+"/deliveries", nil, 200).Body["deliveries"].([]any)
		return len(log) == 4
	}, "the four attempts are in the delivery log")
	require.Equal(t, true, log[0].(map[string]any)["ok"])
	require.EqualValues(t, 500, log[3].(map[string]any)["status"])
	require.EqualValues(t, 1, log[3].(map[string]any)["attempt"])
	require.Contains(t, log[3].(map[string]any)["error"], "500")
	eventually(t, 10*time.Second, func() bool {
		_, failing := n.ok("GET", "/api/v1/webhooks/"+id, nil, 200).Body["failing_since"]
		return !failing
	}, "the endpoint reads as failing after it recovered")
}
