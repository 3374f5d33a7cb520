package e2e

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
	"github.com/jobbie/jobbie/wire"
)

// A job of a push queue delivered to a handler, and the job.completed
// webhook about it, show in GET /api/v1/usage as one push delivery and
// one webhook delivery, in the namespace and the totals. The handler and
// the endpoint are one TLS server on 127.0.0.1 that jobbie dev trusts
// (SSL_CERT_FILE) and may call (--push-allow-private).
func TestUsageMetersPushAndWebhookDeliveries(t *testing.T) {
	t.Parallel()
	var pushed, hooked atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/jobs":
			pushed.Add(1)
			fmt.Fprint(w, `{"result":{"ok":true}}`)
		case "/hooks":
			hooked.Add(1)
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	certFile := filepath.Join(dir, "receiver.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))
	ports, err := freeport.Loopback(4)
	require.NoError(t, err)
	d, err := startDev(devproc.Config{Dir: filepath.Join(dir, "dev"), Addr: ports[0], ControlAddr: ports[1], ShardAddr: ports[2],
		MetricsAddr: ports[3], Flags: []string{"--push-allow-private"}, Env: []string{"SSL_CERT_FILE=" + certFile}})
	require.NoError(t, err)
	t.Cleanup(d.stop)
	owner := client.New(d.gateway, d.ownerKey)

	var hook reply
	eventually(t, usageLag, func() bool { // the first create waits for the event log to be on
		hook = call(t, http.MethodPost, d.gateway+"/api/v1/webhooks", d.ownerKey,
			map[string]any{"url": srv.URL + "/hooks", "events": []string{"job.completed"}})
		return hook.Status == http.StatusCreated
	}, "the webhook is created")
	_, err = owner.PutQueue(ctx(t), "hooks", client.QueueSpec{Push: &client.QueuePushSpec{URL: srv.URL + "/jobs"}})
	require.NoError(t, err)
	res, err := owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "hooks", Payload: json.RawMessage(`{"n":1}`)})
	require.NoError(t, err)

	var u wire.Usage
	eventually(t, usageLag, func() bool {
		r := call(t, http.MethodGet, d.gateway+"/api/v1/usage", d.ownerKey, nil)
		require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
		u = wire.Usage{}
		require.NoError(t, json.Unmarshal(r.Raw, &u))
		return u.Totals.PushDeliveries >= 1 && u.Totals.WebhookDeliveries >= 1
	}, "usage shows the push and the webhook delivery of job "+res.JobID)
	require.EqualValues(t, 1, pushed.Load())
	require.EqualValues(t, 1, hooked.Load())
	require.EqualValues(t, 1, u.Totals.PushDeliveries)
	require.EqualValues(t, 1, u.Totals.WebhookDeliveries)
	require.EqualValues(t, 1, u.Totals.JobsCompleted)
	require.Len(t, u.Namespaces, 1)
	require.Equal(t, "default", u.Namespaces[0].Namespace)
	require.EqualValues(t, 1, u.Namespaces[0].Totals.PushDeliveries)
	require.EqualValues(t, 1, u.Namespaces[0].Totals.WebhookDeliveries)
}
