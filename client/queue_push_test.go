package client_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// A push queue's settings go out as the spec's push, come back as the
// queue's push (with its disabled state), and QueueSpecOf gives back the
// same spec.
func TestPutQueuePush(t *testing.T) {
	t.Parallel()
	reply := strings.Replace(queueReply, `"paused":true`, `"paused":true,"push":{"url":"https://hooks.example.com/jobs",
		"mode":"when_no_workers","timeout":"45s","max_in_flight":3,"headers":{"Authorization":"Bearer x"},
		"disabled":{"reason":"the handler answered 410 Gone","at":"2026-11-28T12:00:00Z"}}`, 1)
	rec := newRecorder(t, http.StatusOK, reply)
	c := rec.client(t)
	spec := client.QueueSpec{Push: &client.QueuePushSpec{URL: "https://hooks.example.com/jobs", Mode: wire.PushWhenNoWorkers,
		Timeout: 45 * time.Second, MaxInFlight: 3, Headers: map[string]string{"Authorization": "Bearer x"}}}
	q, err := c.PutQueue(context.Background(), "emails", spec)
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/queues/emails", `{"description":"","paused":false,"concurrency":null,"throttle":null,
		"defaults":{"max_retries":null,"retry_backoff":null,"retry_base_delay":null,"retry_max_delay":null,"lease_duration":null,
		"expire_after":null,"retention":null},"push":{"url":"https://hooks.example.com/jobs","mode":"when_no_workers",
		"timeout":"45s","max_in_flight":3,"headers":{"Authorization":"Bearer x"}}}`)
	require.NotNil(t, q.Push)
	require.NotNil(t, q.Push.Disabled)
	require.Equal(t, "the handler answered 410 Gone", q.Push.Disabled.Reason)
	require.Equal(t, time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC), q.Push.Disabled.At)

	back, err := client.QueueSpecOf(q)
	require.NoError(t, err)
	require.Equal(t, spec.Push, back.Push)

	// Zero fields are left to the server's defaults: sent as null.
	_, err = c.PutQueue(context.Background(), "emails", client.QueueSpec{Push: &client.QueuePushSpec{URL: "https://h.example.com/"}})
	require.NoError(t, err)
	rec.requireRequest(t, "PUT", "/api/v1/queues/emails", `{"description":"","paused":false,"concurrency":null,"throttle":null,
		"defaults":{"max_retries":null,"retry_backoff":null,"retry_base_delay":null,"retry_max_delay":null,"lease_duration":null,
		"expire_after":null,"retention":null},"push":{"url":"https://h.example.com/","mode":"","timeout":null,"max_in_flight":null,
		"headers":null}}`)

	// A pull queue reads back as a spec without push.
	rec.respond(http.StatusOK, queueReply)
	q, err = c.GetQueue(context.Background(), "emails")
	require.NoError(t, err)
	back, err = client.QueueSpecOf(q)
	require.NoError(t, err)
	require.Nil(t, back.Push)
}

func TestWebhookSigningKeys(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, http.StatusOK, `{"keys":[{"id":"whk_1","scheme":"v1a","public_key":"whpk_AAA",
		"not_after":"2026-11-29T12:00:00Z"},{"id":"whk_2","scheme":"v1a","public_key":"whpk_BBB","not_after":null}]}`)
	c := rec.client(t)
	keys, err := c.WebhookSigningKeys(context.Background())
	require.NoError(t, err)
	rec.requireRequest(t, "GET", "/api/v1/signing-keys", "")
	require.Len(t, keys, 2)
	require.Equal(t, "whpk_AAA", keys[0].Key)
	require.Equal(t, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), *keys[0].NotAfter)
	require.Nil(t, keys[1].NotAfter)

	keys, err = c.RotateWebhookSigningKeys(context.Background())
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/signing-keys/rotate", "{}")
	require.Len(t, keys, 2)

	rec.respond(http.StatusForbidden, `{"error":{"code":"forbidden","message":"webhook.manage needed"}}`)
	_, err = c.RotateWebhookSigningKeys(context.Background())
	var ae *client.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusForbidden, ae.Status)
}
