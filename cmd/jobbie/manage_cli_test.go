package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/wire"
)

// queues create|set with every setting, schedules create|update with
// every field, roles and cluster status against jobbie dev, each checked
// against what the API then holds; bad flags are refused before any
// request.
func TestManageCommands(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	ctx := context.Background()

	var hits atomic.Int32
	counter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(counter.Close)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"queues", "create", "Bad Q"}, "queue"},
		{[]string{"queues", "create", "q", "--concurrency", "0"}, "--concurrency must be at least 1"},
		{[]string{"queues", "set", "q", "--concurrency", "2", "--no-concurrency"}, "--concurrency cannot go with --no-concurrency"},
		{[]string{"queues", "set", "q", "--key-concurrency", "10001"}, "--key-concurrency must be 1 to 10000"},
		{[]string{"queues", "set", "q", "--throttle", "10"}, `--throttle "10": want RATE/PERIOD`},
		{[]string{"queues", "set", "q", "--throttle", "10/100ms"}, `--throttle "10/100ms"`},
		{[]string{"queues", "set", "q", "--retry-backoff", "sometimes"}, "--retry-backoff must be one of exponential, linear, fixed, none"},
		{[]string{"queues", "set", "q", "--retention", "-1h"}, "--retention must be positive"},
		{[]string{"queues", "set", "q"}, "nothing to change"},
		{[]string{"schedules", "create", "--name", "n", "--queue", "q"}, "--cron is required"},
		{[]string{"schedules", "create", "--name", "sch_x", "--queue", "q", "--cron", "@hourly"}, `--name "sch_x"`},
		{[]string{"schedules", "create", "--name", "n", "--queue", "q", "--cron", "@hourly", "--timezone", "Mars/Base"}, "--timezone"},
		{[]string{"schedules", "create", "--name", "n", "--queue", "q", "--cron", "@hourly", "--payload", "{nope"}, "--payload is not JSON"},
		{[]string{"schedules", "create", "--name", "n", "--queue", "q", "--cron", "@hourly", "--priority", "urgent"}, "--priority must be"},
		{[]string{"schedules", "update", "n"}, "nothing to change"},
		{[]string{"schedules", "update", "n", "--max-retries", "-2"}, "--max-retries must not be negative"},
		{[]string{"roles", "create", "ops", "--permission", "job.read:*"}, "want ACTIONS:NAMESPACES:QUEUES"},
		{[]string{"roles", "create", "ops", "--permission", "job.fly:*:*"}, "--permission"},
		{[]string{"roles", "create", "ops"}, "at least one permission"},
		{[]string{"roles", "create", "Ops", "--permission", "job.read:*:*"}, "role name"},
		{[]string{"roles", "delete", "owner"}, "is a built-in role"},
	} {
		_, err := d.as(t, d.ownerFile, append(tc.args, "--url", counter.URL)...)
		require.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
	require.Zero(t, hits.Load(), "a bad flag sent a request")

	t.Run("Queues", func(t *testing.T) {
		d.run(t, "queues", "create", "mq.a", "--description", "the a queue", "--paused", "--concurrency", "4",
			"--key-concurrency", "2", "--throttle", "100/1m", "--max-retries", "7", "--retry-backoff", "linear",
			"--retry-base-delay", "3s", "--retry-max-delay", "2m", "--lease-duration", "45s", "--expire-after", "1h",
			"--retention", "72h")
		q, err := d.owner.GetQueue(ctx, "mq.a")
		require.NoError(t, err)
		require.Equal(t, "the a queue", q.Description)
		require.True(t, q.Paused)
		require.EqualValues(t, 4, *q.Concurrency)
		require.EqualValues(t, 2, q.KeyConcurrency.Max)
		require.Equal(t, wire.Throttle{Rate: 100, Period: "1m"}, *q.Throttle)
		require.Equal(t, 7, *q.Defaults.MaxRetries)
		require.Equal(t, "linear", *q.Defaults.RetryBackoff)
		require.JSONEq(t, `"3s"`, string(q.Defaults.RetryBaseDelay))
		require.JSONEq(t, `"72h"`, string(q.Defaults.Retention))

		_, err = d.as(t, d.ownerFile, "queues", "create", "mq.a", "--concurrency", "9")
		require.ErrorContains(t, err, "queue mq.a already exists")
		q, err = d.owner.GetQueue(ctx, "mq.a")
		require.NoError(t, err)
		require.EqualValues(t, 4, *q.Concurrency, "a refused create changed nothing")

		// set changes what it is given and keeps the rest.
		d.run(t, "queues", "set", "mq.a", "--paused=false", "--no-throttle", "--concurrency", "6", "--max-retries", "1")
		q, err = d.owner.GetQueue(ctx, "mq.a")
		require.NoError(t, err)
		require.False(t, q.Paused)
		require.Nil(t, q.Throttle)
		require.EqualValues(t, 6, *q.Concurrency)
		require.EqualValues(t, 2, q.KeyConcurrency.Max)
		require.Equal(t, 1, *q.Defaults.MaxRetries)
		require.Equal(t, "linear", *q.Defaults.RetryBackoff)
		require.Equal(t, "the a queue", q.Description)
		d.run(t, "queues", "set", "mq.a", "--no-defaults", "--no-concurrency", "--no-key-concurrency")
		q, err = d.owner.GetQueue(ctx, "mq.a")
		require.NoError(t, err)
		require.Nil(t, q.Concurrency)
		require.Nil(t, q.KeyConcurrency)
		require.Nil(t, q.Defaults.MaxRetries)
		require.Nil(t, q.Defaults.RetryBackoff)
	})

	t.Run("Schedules", func(t *testing.T) {
		out := d.run(t, "schedules", "create", "--name", "nightly", "--queue", "sq", "--cron", "0 2 * * *",
			"--timezone", "Europe/Paris", "--payload", `{"kind":"daily"}`, "--priority", "high", "--unique-key", "nightly",
			"--max-retries", "2", "--enabled=false", "-o", "json")
		var s wire.Schedule
		require.NoError(t, json.Unmarshal([]byte(out), &s), out)
		got, err := d.owner.GetSchedule(ctx, s.ID)
		require.NoError(t, err)
		require.Equal(t, "nightly", got.Name)
		require.Equal(t, "sq", got.Queue)
		require.Equal(t, "0 2 * * *", got.Cron)
		require.Equal(t, "Europe/Paris", got.Timezone)
		require.JSONEq(t, `{"kind":"daily"}`, string(got.Payload))
		require.Equal(t, "high", got.Priority)
		require.Equal(t, "nightly", *got.UniqueKey)
		require.Equal(t, 2, got.MaxRetries)
		require.False(t, got.Enabled)

		// update by name, from stdin; what is not given is kept.
		out, _, err = runJobbie(t, `{"kind":"daily","v":2}`, "schedules", "update", "nightly", "--cron", "30 3 * * *",
			"--payload", "-", "--enabled", "--url", d.gateway, "--key-file", d.ownerFile)
		require.NoError(t, err)
		require.Contains(t, out, s.ID)
		got, err = d.owner.GetSchedule(ctx, s.ID)
		require.NoError(t, err)
		require.Equal(t, "30 3 * * *", got.Cron)
		require.JSONEq(t, `{"kind":"daily","v":2}`, string(got.Payload))
		require.True(t, got.Enabled)
		require.Equal(t, "Europe/Paris", got.Timezone)
		require.Equal(t, "high", got.Priority)
		require.Equal(t, "nightly", *got.UniqueKey)
		require.Equal(t, 2, got.MaxRetries)

		// The server's refusal of a bad cron names the field, and changes nothing.
		_, err = d.as(t, d.ownerFile, "schedules", "update", "nightly", "--cron", "not a cron")
		require.ErrorContains(t, err, "cron")
		got, err = d.owner.GetSchedule(ctx, s.ID)
		require.NoError(t, err)
		require.Equal(t, "30 3 * * *", got.Cron)
	})

	t.Run("Roles", func(t *testing.T) {
		out := d.run(t, "roles")
		rows := clitest.TableLines(out)
		require.Equal(t, []string{"NAME", "KIND", "PERMISSIONS", "DESCRIPTION"}, rows[0])
		require.Equal(t, "owner", rows[1][0])
		d.run(t, "roles", "create", "emails-ops", "--description", "runs email", "--permission", "job.read,job.enqueue:*:emails.*",
			"--permission", "queue.read:default:*")
		r, err := d.owner.GetRole(ctx, "emails-ops")
		require.NoError(t, err)
		require.Equal(t, "runs email", r.Description)
		require.Equal(t, []wire.Permission{
			{Actions: []string{"job.read", "job.enqueue"}, Namespaces: []string{"*"}, Queues: []string{"emails.*"}},
			{Actions: []string{"queue.read"}, Namespaces: []string{"default"}, Queues: []string{"*"}}}, r.Permissions)
		out = d.run(t, "roles", "get", "emails-ops")
		require.Equal(t, "emails-ops (custom)", clitest.Field(out, "ROLE"))
		d.run(t, "roles", "update", "emails-ops", "--permission", "job.read:*:*")
		r, err = d.owner.GetRole(ctx, "emails-ops")
		require.NoError(t, err)
		require.Len(t, r.Permissions, 1)
		require.Equal(t, "", r.Description, "update replaces the description too")
		require.JSONEq(t, apiGet(t, d.gateway+"/api/v1/roles/emails-ops", d.ownerFile), d.run(t, "roles", "get", "emails-ops", "-o", "json"))
		d.run(t, "roles", "delete", "emails-ops")
		_, err = d.owner.GetRole(ctx, "emails-ops")
		require.Error(t, err)
	})

	t.Run("ClusterStatus", func(t *testing.T) {
		out := d.run(t, "cluster", "status")
		require.Equal(t, "healthy", clitest.Field(out, "HEALTH"), out)
		leader := clitest.Field(out, "LEADER")
		require.NotEqual(t, "-", leader)
		require.Regexp(t, `(?m)^NODE\s+ROLE\s+STATUS\s+APPLIED\s+LAG\s+CONTACT$`, out)
		require.Regexp(t, `(?m)^`+leader+`\s+leader\s+healthy\s+\d+\s+\d+\s+-$`, out, "its applied index and lag; no contact time on the leader")

		// -o json is the API's answer. Indexes move between two calls (the
		// leader's loops write): those are checked present, the rest equal.
		var api, cli wire.ClusterHealth
		require.NoError(t, json.Unmarshal([]byte(apiGet(t, d.gateway+"/api/v1/cluster", d.ownerFile)), &api))
		require.NoError(t, json.Unmarshal([]byte(d.run(t, "cluster", "status", "-o", "json")), &cli))
		for _, h := range []*wire.ClusterHealth{&api, &cli} {
			for i := range h.Nodes {
				n := &h.Nodes[i]
				require.NotNil(t, n.AppliedIndex)
				require.NotNil(t, n.LastIndex)
				require.NotNil(t, n.Lag)
				n.AppliedIndex, n.LastIndex, n.Lag, n.SinceContactMS = nil, nil, nil, nil
			}
		}
		require.Equal(t, api, cli)
		yaml := d.run(t, "cluster", "status", "-o", "yaml")
		for _, f := range []string{"applied_index:", "last_index:", "lag:"} {
			require.Contains(t, yaml, f)
		}
	})
}
