package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie queues set`'s push flags and `jobbie signing-keys` against
// jobbie dev (allowed to push to loopback, so that a 127.0.0.1 URL passes
// the configuration check; nothing is enqueued, so nothing is called):
// each change checked against what the API then holds, bad flags refused
// with the field named and nothing changed.
func TestPushCommandsAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t, "--push-allow-private")
	ctx, owner := context.Background(), d.owner
	queue := func(name string) *client.Queue {
		t.Helper()
		q, err := owner.GetQueue(ctx, name)
		require.NoError(t, err)
		return q
	}

	t.Run("QueuePush", func(t *testing.T) {
		three := int64(3)
		_, err := owner.PutQueue(ctx, "emails", client.QueueSpec{Description: "mail", Concurrency: &three})
		require.NoError(t, err)
		require.Equal(t, "pull", clitest.Field(d.run(t, "queues", "get", "emails"), "DELIVERY"))

		out := d.run(t, "queues", "set", "emails", "--push-url", "https://127.0.0.1:8443/jobs", "--push-mode", "when_no_workers",
			"--push-timeout", "45s", "--push-header", "Authorization=Bearer s3cret", "--push-header", "x-team=mail")
		require.Equal(t, "push to https://127.0.0.1:8443/jobs (when_no_workers, timeout 45s, at most 10 in flight)",
			clitest.Field(out, "DELIVERY"), out)
		require.Equal(t, "Authorization, X-Team", clitest.Field(out, "PUSH HEADERS"), out)
		require.NotContains(t, out, "s3cret", "header values stay out of the table")
		require.Empty(t, clitest.Field(out, "PUSH DISABLED"))
		want := &client.QueuePush{URL: "https://127.0.0.1:8443/jobs", Mode: wire.PushWhenNoWorkers, Timeout: "45s",
			MaxInFlight: 10, Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Team": "mail"}}
		q := queue("emails")
		require.Equal(t, want, q.Push)
		require.Equal(t, "mail", q.Description, "the rest of the configuration is kept")
		require.Equal(t, three, *q.Concurrency)

		// One flag changes one setting; -o json is the queue as the API shows it.
		var got client.Queue
		out = d.run(t, "queues", "set", "emails", "--push-max-in-flight", "50", "--push-mode", "always", "-o", "json")
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		want.MaxInFlight, want.Mode = 50, wire.PushAlways
		require.Equal(t, want, got.Push)
		require.Equal(t, want, queue("emails").Push)
		d.run(t, "queues", "set", "emails", "--push-clear-headers")
		want.Headers = map[string]string{}
		require.Equal(t, want, queue("emails").Push)

		// Bad values: the API's 400 naming the field, and nothing changed.
		for _, tc := range []struct {
			args  []string
			field string
		}{
			{[]string{"--push-mode", "sometimes"}, "push.mode"},
			{[]string{"--push-url", "http://127.0.0.1:8443/jobs"}, "push.url"},
			{[]string{"--push-timeout", "1h"}, "push.timeout"},
			{[]string{"--push-max-in-flight", "5000"}, "push.max_in_flight"},
			{[]string{"--push-header", "Webhook-Id=x"}, "push.headers"},
		} {
			_, err := d.as(t, d.ownerFile, append([]string{"queues", "set", "emails"}, tc.args...)...)
			require.Error(t, err, "%v", tc.args)
			e, ok := client.AsError(err)
			require.True(t, ok, "%v: %v", tc.args, err)
			require.Equal(t, 400, e.Status, "%v", err)
			require.Equal(t, tc.field, e.Field, "%v", err)
			require.Equal(t, want, queue("emails").Push, "%v changed nothing", tc.args)
		}
		// Refused before anything is sent.
		for _, tc := range []struct {
			args []string
			want string
		}{
			{nil, "nothing to change: give a setting (--concurrency, --throttle, --max-retries, …), --push-url and the other --push-* flags, or --no-push"},
			{[]string{"--no-push", "--push-timeout", "5s"}, "--no-push removes push: it cannot go with --push-timeout"},
			{[]string{"--push-header", "novalue"}, `--push-header "novalue": want Name=value`},
		} {
			_, err := d.as(t, d.ownerFile, append([]string{"queues", "set", "emails"}, tc.args...)...)
			require.EqualError(t, err, tc.want)
		}
		_, err = d.as(t, d.ownerFile, "queues", "set", "fresh", "--push-timeout", "5s")
		require.EqualError(t, err, "queue fresh: the queue is a pull queue: --push-url is needed to make it a push queue")
		_, err = owner.GetQueue(ctx, "fresh")
		require.True(t, client.IsNotFound(err), "nothing was created: %v", err)

		// A queue that does not exist is declared; --no-push makes a pull queue.
		d.run(t, "queues", "set", "fresh", "--push-url", "https://127.0.0.1:8443/fresh")
		require.Equal(t, "https://127.0.0.1:8443/fresh", queue("fresh").Push.URL)
		before := queue("fresh").Push
		d.run(t, "queues", "set", "fresh", "--push-enable")
		require.Equal(t, before, queue("fresh").Push, "--push-enable declares the queue as it is")
		require.Equal(t, "pull", clitest.Field(d.run(t, "queues", "set", "emails", "--no-push"), "DELIVERY"))
		q = queue("emails")
		require.Nil(t, q.Push)
		require.Equal(t, three, *q.Concurrency)
	})

	t.Run("SigningKeys", func(t *testing.T) {
		out := d.run(t, "signing-keys", "list")
		lines := clitest.TableLines(out)
		require.Len(t, lines, 2, out)
		require.Equal(t, []string{"ID", "SCHEME", "PUBLIC", "KEY", "NOT", "AFTER"}, lines[0])
		first := lines[1]
		require.Equal(t, "v1a", first[1])
		require.True(t, strings.HasPrefix(first[2], "whpk_"), out)
		require.Equal(t, "-", first[3])
		_, err := client.NewWebhookVerifier(first[2])
		require.NoError(t, err, "the key printed is one a handler can verify with")
		require.JSONEq(t, apiGet(t, d.gateway+"/api/v1/signing-keys", d.ownerFile),
			`{"keys":`+d.run(t, "signing-keys", "-o", "json")+`}`, "-o json is the API's keys")

		// A viewer reads the keys and is refused a rotation.
		viewerFile := d.keyFile(t, "hooks", "viewer")
		out, err = d.as(t, viewerFile, "signing-keys")
		require.NoError(t, err)
		require.Len(t, clitest.TableLines(out), 2)
		out, err = d.as(t, viewerFile, "signing-keys", "rotate")
		require.True(t, client.IsForbidden(err), "%v", err)
		require.Regexp(t, `^rotate signing keys: 403 forbidden: .+ \(this needs a key with webhook\.manage: owner, admin or developer\)$`,
			err.Error())
		require.Empty(t, out)
		keys, err := owner.WebhookSigningKeys(ctx)
		require.NoError(t, err)
		require.Len(t, keys, 1, "the refused rotation changed nothing")

		var rotated []client.WebhookKey
		require.NoError(t, json.Unmarshal([]byte(d.run(t, "signing-keys", "rotate", "-o", "json")), &rotated))
		require.Len(t, rotated, 2)
		require.Equal(t, first[0], rotated[0].ID)
		require.NotNil(t, rotated[0].NotAfter)
		require.WithinDuration(t, time.Now().Add(wire.SigningKeyOverlap), *rotated[0].NotAfter, time.Minute)
		require.Nil(t, rotated[1].NotAfter)
		lines = clitest.TableLines(d.run(t, "signing-keys"))
		require.Len(t, lines, 3)
		require.Equal(t, rotated[0].NotAfter.UTC().Format(time.RFC3339), lines[1][3])
		require.Equal(t, rotated[1].Key, lines[2][2])
	})
}
