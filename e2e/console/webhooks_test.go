package console

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// The Webhooks screens: an endpoint made in the dialog (a queue pattern
// the server refuses is shown in it and makes nothing; its secret is shown
// once); its screen's delivery log shows an enqueue's event delivered to
// the test's handler, which verifies it with that secret; the test button
// and a redelivery say what happened and add to the log; an edit stops
// deliveries; a rotation shows a new secret; delete removes it.
func TestConsoleWebhooks(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	var (
		mu      sync.Mutex
		headers []http.Header
		bodies  [][]byte
	)
	recv := httptest.NewUnstartedServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		headers, bodies = append(headers, r.Header.Clone()), append(bodies, b)
		mu.Unlock()
	}))
	recv.TLS = &tls.Config{Certificates: []tls.Certificate{receiverCert}}
	recv.StartTLS()
	t.Cleanup(recv.Close)
	url := recv.URL + "/events"
	hooks := func() []client.Webhook {
		t.Helper()
		ws, err := tn.owner.ListWebhooks(ctx(t))
		require.NoError(t, err)
		return ws
	}

	p := signedIn(t, tn.ownerKey, "/console/webhooks", "webhooks")
	p.waitText(`[data-screen="webhooks"] .empty`, "No webhook endpoints")
	p.click("#webhook-new")
	p.setValue("#webhook-url", url)
	p.click("#webhook-all-events") // untick: choose the events
	p.click(`input[data-event="job.enqueued"]`)
	p.setValue("#webhook-queues", "bad queue")
	p.setValue("#webhook-description", "mail outcomes")
	p.click("#webhook-secret")
	p.click("#webhook-save")
	p.waitText("#webhook-error", "queues[0]")
	assert.Equal(t, "true", eval[string](p, `document.querySelector('#webhook-queues').getAttribute('aria-invalid')`))
	assert.Empty(t, hooks(), "a refused create made an endpoint")
	p.setValue("#webhook-queues", "wh.*")
	p.click("#webhook-save")
	p.waitFor("#key-secret")
	secret := eval[string](p, `document.querySelector('#key-secret').value`)
	require.True(t, strings.HasPrefix(secret, "whsec_"), secret)
	p.click("#key-done")
	p.waitNoDialog("#webhook-form")
	p.waitText("#webhooks-notice", "created")
	ws := hooks()
	require.Len(t, ws, 1)
	w := ws[0]
	assert.Equal(t, url, w.URL)
	assert.Equal(t, []string{"job.enqueued"}, w.Events)
	assert.Equal(t, []string{"wh.*"}, w.Queues)
	assert.Equal(t, "mail outcomes", w.Description)
	assert.Len(t, w.SecretIDs, 1)
	row := `#webhooks tr[data-webhook="` + w.ID + `"]`
	p.waitText(row+" .webhook-events", "enqueued")
	p.waitText(row, "enabled")

	// The endpoint's screen: an enqueue's event in the delivery log.
	p.click(row + " .webhook-url a")
	p.waitScreen("webhook")
	p.waitText("#webhook-queues-value", "wh.*")
	p.waitText("#webhook-secrets", w.SecretIDs[0])
	tn.seed(t, "wh.mail", 1)
	delivered := `#webhook-deliveries tr[data-ok="true"]`
	p.waitText(delivered+" .delivery-type", "dev.jobbie.job.enqueued")
	p.waitText(delivered+" .delivery-status", "200")
	eventID := eval[string](p, `document.querySelector('`+delivered+`').dataset.event`)
	require.True(t, strings.HasPrefix(eventID, "s1:"), eventID)
	mu.Lock()
	require.NotEmpty(t, bodies)
	require.NoError(t, client.VerifyWebhook(headers[0], bodies[0], []string{secret}, 0), "the secret shown verifies the delivery")
	mu.Unlock()

	p.click("#webhook-test")
	p.waitText("#webhook-notice", "Test event: delivered (200 in")
	p.waitText("#webhook-deliveries", "dev.jobbie.test")
	assert.Equal(t, 0, eval[int](p, `[...document.querySelectorAll('#webhook-deliveries tr')].filter((r) =>
  r.querySelector('.delivery-type')?.innerText === 'dev.jobbie.test' && r.querySelector('.delivery-redeliver')).length`),
		"a test event (not in the log) has no Redeliver button")
	p.click(`#webhook-deliveries tr[data-event="` + eventID + `"] .delivery-redeliver`)
	p.waitText("#webhook-notice", "Redelivery of "+eventID+": delivered (200")
	p.until(waitTimeout, `document.querySelectorAll('#webhook-deliveries tr[data-event="`+eventID+`"]').length >= 2`, "the redelivery logged")
	p.shot("webhook-deliveries")

	// An edit that stops deliveries, kept by the API.
	p.click("#webhook-edit")
	p.waitFor("#webhook-form")
	assert.Equal(t, "wh.*", eval[string](p, `document.querySelector('#webhook-queues').value`))
	p.click("#webhook-enabled")
	p.setValue("#webhook-description", "paused for now")
	p.click("#webhook-save")
	p.waitNoDialog("#webhook-form")
	p.waitText("#webhook-status", "off")
	got, err := tn.owner.GetWebhook(ctx(t), w.ID)
	require.NoError(t, err)
	assert.False(t, got.Enabled)
	assert.Equal(t, "paused for now", got.Description)
	assert.Equal(t, []string{"job.enqueued"}, got.Events, "the edit kept the events")

	// A rotation shows the new secret once.
	p.click("#webhook-rotate")
	p.click("#webhook-rotate-ok")
	p.waitFor("#key-secret")
	rotated := eval[string](p, `document.querySelector('#key-secret').value`)
	assert.True(t, strings.HasPrefix(rotated, "whsec_"), rotated)
	assert.NotEqual(t, secret, rotated)
	p.click("#key-done")
	p.waitNoDialog("#webhook-rotate-form")
	got, err = tn.owner.GetWebhook(ctx(t), w.ID)
	require.NoError(t, err)
	assert.Len(t, got.SecretIDs, 2)
	assert.Empty(t, got.Secret)

	p.click("#webhook-delete")
	p.click("#confirm-ok")
	p.waitScreen("webhooks")
	p.waitText(`[data-screen="webhooks"] .empty`, "No webhook endpoints")
	assert.Empty(t, hooks())
}
