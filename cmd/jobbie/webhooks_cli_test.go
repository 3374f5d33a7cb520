package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
)

// `jobbie webhooks` against jobbie dev (allowed to deliver to loopback):
// each change checked against what the API then holds, bad flags refused
// with the field named and nothing changed. The receiver is the test's
// own TLS server, whose certificate jobbie dev does not trust (it runs in
// this process, whose roots the test cannot change), so every attempt
// fails at the handshake: the attempts, their errors and the delivery log
// are what the commands show.
func TestWebhookCommandsAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t, "--push-allow-private")
	ctx, owner := context.Background(), d.owner
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(recv.Close)
	hookURL := recv.URL + "/hook"
	read := func(id string) *client.Webhook {
		t.Helper()
		w, err := owner.GetWebhook(ctx, id)
		require.NoError(t, err)
		return w
	}

	out := d.run(t, "webhooks", "create", "--endpoint-url", hookURL, "--event", "job.enqueued", "--event", "job.completed",
		"--queue", "emails.*", "--description", "mail outcomes", "--secret")
	id := clitest.Field(out, "WEBHOOK")
	require.True(t, strings.HasPrefix(id, "wh_"), out)
	secret, _, _ := strings.Cut(clitest.Field(out, "SECRET"), " ")
	require.True(t, strings.HasPrefix(secret, "whsec_"), out)
	require.Equal(t, "enabled", clitest.Field(out, "STATE"), out)
	w := read(id)
	require.Equal(t, hookURL, w.URL)
	require.Equal(t, []string{"job.enqueued", "job.completed"}, w.Events)
	require.Equal(t, []string{"emails.*"}, w.Queues)
	require.Equal(t, "mail outcomes", w.Description)
	require.Len(t, w.SecretIDs, 1)
	require.Empty(t, w.Secret, "a read never shows the secret")
	require.NotContains(t, d.run(t, "webhooks", "get", id), "whsec_")

	lines := clitest.TableLines(d.run(t, "webhooks"))
	require.Equal(t, [][]string{{"ID", "URL", "EVENTS", "QUEUES", "STATE", "DESCRIPTION"},
		{id, hookURL, "job.enqueued,job.completed", "emails.*", "enabled", "mail", "outcomes"}}, lines)
	var listed []client.Webhook
	require.NoError(t, json.Unmarshal([]byte(d.run(t, "webhooks", "list", "-o", "json")), &listed))
	require.Len(t, listed, 1)
	require.Equal(t, *w, listed[0])

	// update changes what it is given and keeps the rest.
	out = d.run(t, "webhooks", "update", id, "--description", "off for now", "--disabled")
	require.Equal(t, "off", clitest.Field(out, "STATE"), out)
	w = read(id)
	require.False(t, w.Enabled)
	require.Equal(t, "off for now", w.Description)
	require.Equal(t, []string{"job.enqueued", "job.completed"}, w.Events)
	require.Equal(t, []string{"emails.*"}, w.Queues)
	d.run(t, "webhooks", "update", id, "--enabled", "--event", "*", "--all-queues")
	w = read(id)
	require.True(t, w.Enabled)
	require.Equal(t, []string{"*"}, w.Events)
	require.Empty(t, w.Queues)
	require.Equal(t, "all", clitest.Field(d.run(t, "webhooks", "get", id), "QUEUES"))
	d.run(t, "webhooks", "update", id, "--event", "job.enqueued", "--queue", "emails.*")
	before := read(id)

	// Bad values: the API's 400 naming the field, and nothing changed.
	for _, tc := range []struct {
		args  []string
		field string
	}{
		{[]string{"--event", "job.enqueued", "--event", "job.nope"}, "events[1]"},
		{[]string{"--endpoint-url", "http://127.0.0.1:8443/hook"}, "url"},
		{[]string{"--queue", "bad queue"}, "queues[0]"},
		{[]string{"--description", strings.Repeat("x", 513)}, "description"},
	} {
		_, err := d.as(t, d.ownerFile, append([]string{"webhooks", "update", id}, tc.args...)...)
		e, ok := client.AsError(err)
		require.True(t, ok, "%v: %v", tc.args, err)
		require.Equal(t, 400, e.Status, "%v", err)
		require.Equal(t, tc.field, e.Field, "%v", err)
		require.Equal(t, before, read(id), "%v changed nothing", tc.args)
	}
	_, err := d.as(t, d.ownerFile, "webhooks", "create", "--endpoint-url", hookURL)
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "events", e.Field, "%v", err)
	// Refused before anything is sent.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "nothing to change: give --endpoint-url, --event, --queue, --all-queues, --description, --enabled or --disabled"},
		{[]string{"--enabled", "--disabled"}, "--enabled cannot go with --disabled"},
		{[]string{"--all-queues", "--queue", "a"}, "--all-queues cannot go with --queue"},
	} {
		_, err := d.as(t, d.ownerFile, append([]string{"webhooks", "update", id}, tc.args...)...)
		require.EqualError(t, err, tc.want)
	}
	ws, err := owner.ListWebhooks(ctx)
	require.NoError(t, err)
	require.Len(t, ws, 1, "the refused create made nothing")

	// test: one attempt, answered and logged; it fails at the handshake.
	lines = clitest.TableLines(d.run(t, "webhooks", "test", id))
	require.Len(t, lines, 2, "%v", lines)
	require.Equal(t, []string{"AT", "EVENT", "TYPE", "ATTEMPT", "STATUS", "LATENCY", "OK", "ERROR"}, lines[0])
	require.Equal(t, "dev.jobbie.test", lines[1][2])
	require.Equal(t, "-", lines[1][4], "no answer")
	require.Equal(t, "false", lines[1][6])
	require.Contains(t, strings.Join(lines[1][7:], " "), "certificate")

	// An enqueue on a subscribed queue is delivered (and fails); its event
	// can be sent again by its id.
	_, err = owner.Enqueue(ctx, client.EnqueueRequest{Queue: "emails.send", Payload: map[string]int{"n": 1}})
	require.NoError(t, err)
	var eventID string
	require.Eventually(t, func() bool {
		ds, err := owner.WebhookDeliveries(ctx, id)
		require.NoError(t, err)
		i := slices.IndexFunc(ds, func(d client.WebhookDelivery) bool { return d.Type == "dev.jobbie.job.enqueued" })
		if i >= 0 {
			eventID = ds[i].EventID
		}
		return i >= 0
	}, 60*time.Second, 50*time.Millisecond, "the enqueue's event attempted")
	var got []client.WebhookDelivery
	require.NoError(t, json.Unmarshal([]byte(d.run(t, "webhooks", "redeliver", id, eventID, "-o", "json")), &got))
	require.Len(t, got, 1)
	require.Equal(t, eventID, got[0].EventID)
	require.Equal(t, "dev.jobbie.job.enqueued", got[0].Type)
	require.False(t, got[0].OK)
	var logged []client.WebhookDelivery
	require.NoError(t, json.Unmarshal([]byte(d.run(t, "webhooks", "deliveries", id, "-o", "json")), &logged))
	require.True(t, slices.ContainsFunc(logged, func(d client.WebhookDelivery) bool { return d.Type == "dev.jobbie.test" }), "%v", logged)
	dl := clitest.TableLines(d.run(t, "webhooks", "deliveries", id))
	require.Len(t, dl, len(logged)+1)
	_, err = d.as(t, d.ownerFile, "webhooks", "redeliver", id, "s1:1")
	require.Error(t, err, "an event not in the log")

	// rotate-secret shows the new secret once; both sign for now.
	out = d.run(t, "webhooks", "rotate-secret", id)
	newSecret, _, _ := strings.Cut(clitest.Field(out, "SECRET"), " ")
	require.True(t, strings.HasPrefix(newSecret, "whsec_"), out)
	require.NotEqual(t, secret, newSecret)
	require.Len(t, read(id).SecretIDs, 2)

	// A viewer reads and is refused a change.
	viewerFile := d.keyFile(t, "hooks", "viewer")
	out, err = d.as(t, viewerFile, "webhooks", "get", id)
	require.NoError(t, err)
	require.Equal(t, id, clitest.Field(out, "WEBHOOK"))
	out, err = d.as(t, viewerFile, "webhooks", "delete", id)
	require.True(t, client.IsForbidden(err), "%v", err)
	require.Regexp(t, `^webhook wh_\S+: 403 forbidden: .+ \(this needs a key with webhook\.manage: owner, admin or developer\)$`, err.Error())
	require.Empty(t, out)

	require.Equal(t, "webhook "+id+" deleted\n", d.run(t, "webhooks", "delete", id))
	_, err = owner.GetWebhook(ctx, id)
	require.True(t, client.IsNotFound(err), "%v", err)
	_, err = d.as(t, d.ownerFile, "webhooks", "get", id)
	require.True(t, client.IsNotFound(err), "%v", err)
}
