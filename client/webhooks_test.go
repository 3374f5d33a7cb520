package client_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

const webhookReply = `{"id":"wh_1","url":"https://hooks.example.com/j","events":["job.completed","job.dead"],
	"queues":["emails.*"],"enabled":true,"description":"mail","secret_ids":["whs_1"],"secret":"whsec_AAA",
	"disabled":{"reason":"failing for 72h0m0s","at":"2026-11-28T12:00:00Z"},
	"created_at":"2026-11-28T10:00:00Z","updated_at":"2026-11-28T11:00:00Z"}`

const deliveryReply = `{"event_id":"s1:42","type":"dev.jobbie.test","at":"2026-11-28T12:00:00Z","status":500,
	"latency_ms":12.5,"error":"500 Internal Server Error: boom","attempt":1,"ok":false}`

// Each webhook method sends its route and body and reads the answer.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := newRecorder(t, http.StatusCreated, webhookReply)
	c := rec.client(t)

	w, err := c.CreateWebhook(ctx, client.WebhookRequest{URL: "https://hooks.example.com/j",
		Events: []string{"job.completed", "job.dead"}, Queues: []string{"emails.*"}, Description: "mail", Secret: true})
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/webhooks", `{"url":"https://hooks.example.com/j",
		"events":["job.completed","job.dead"],"queues":["emails.*"],"description":"mail","secret":true}`)
	require.Equal(t, "wh_1", w.ID)
	require.Equal(t, "whsec_AAA", w.Secret)
	require.Equal(t, []string{"whs_1"}, w.SecretIDs)
	require.NotNil(t, w.Disabled)
	require.Equal(t, time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC), w.Disabled.At)

	rec.respond(http.StatusOK, webhookReply)
	off := false
	_, err = c.UpdateWebhook(ctx, "wh_1", client.WebhookRequest{URL: "https://h.example.com/", Events: []string{"*"}, Enabled: &off})
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/webhooks/wh_1", `{"url":"https://h.example.com/","events":["*"],"enabled":false}`)

	_, err = c.GetWebhook(ctx, "wh/1")
	require.NoError(t, err)
	rec.requireRequest(t, "GET", "/api/v1/webhooks/wh%2F1", "")

	_, err = c.RotateWebhookSecret(ctx, "wh_1")
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/webhooks/wh_1/rotate-secret", "{}")

	rec.respond(http.StatusOK, `{"webhooks":[`+webhookReply+`]}`)
	l, err := c.ListWebhooks(ctx)
	require.NoError(t, err)
	rec.requireRequest(t, "GET", "/api/v1/webhooks", "")
	require.Len(t, l, 1)
	require.Equal(t, []string{"emails.*"}, l[0].Queues)

	rec.respond(http.StatusOK, deliveryReply)
	d, err := c.TestWebhook(ctx, "wh_1")
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/webhooks/wh_1/test", "{}")
	require.Equal(t, 500, d.Status)
	require.False(t, d.OK)
	require.Equal(t, 12.5, d.LatencyMs)

	d, err = c.RedeliverWebhook(ctx, "wh_1", "s1:42")
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/webhooks/wh_1/redeliver", `{"event_id":"s1:42"}`)
	require.Equal(t, "s1:42", d.EventID)

	rec.respond(http.StatusOK, `{"deliveries":[`+deliveryReply+`]}`)
	ds, err := c.WebhookDeliveries(ctx, "wh_1")
	require.NoError(t, err)
	rec.requireRequest(t, "GET", "/api/v1/webhooks/wh_1/deliveries", "")
	require.Len(t, ds, 1)
	require.Equal(t, "500 Internal Server Error: boom", ds[0].Error)

	rec.respond(http.StatusNoContent, "")
	require.NoError(t, c.DeleteWebhook(ctx, "wh_1"))
	rec.requireRequest(t, "DELETE", "/api/v1/webhooks/wh_1", "")

	rec.respond(http.StatusNotFound, `{"error":{"code":"not_found","message":"webhook wh_9 not found"}}`)
	_, err = c.GetWebhook(ctx, "wh_9")
	var ae *client.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusNotFound, ae.Status)
}
