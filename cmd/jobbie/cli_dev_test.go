package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/wire"
)

// The job, queue, worker, schedule, key, namespace and status commands
// against jobbie dev, in the order an operator would use them: each as a
// table and as JSON, checked against what the API then holds.
func TestAPICommandsAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDev(t)
	ctx := context.Background()
	ownerFile := filepath.Join(d.dir, "owner.key")
	owner := client.New(d.gateway, readKey(t, ownerFile))
	t.Cleanup(owner.CloseIdleConnections)

	// as runs the CLI with a key file; stdin is empty unless given.
	as := func(key, stdin string, args ...string) (string, error) {
		t.Helper()
		out, _, err := runJobbie(t, stdin, append(args, "--url", d.gateway, "--key-file", key)...)
		return out, err
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := as(ownerFile, "", args...)
		require.NoError(t, err, "%v", args)
		return out
	}
	runJSON := func(v any, args ...string) {
		t.Helper()
		out := run(append(args, "-o", "json")...)
		require.NoError(t, json.Unmarshal([]byte(out), v), out)
	}

	// enqueue: the payload from the argument and from stdin, every flag.
	out := run("enqueue", "emails.send", `{"to":"user@example.com"}`, "--tag", "tenant=acme", "--priority", "high")
	require.Regexp(t, `^job_\S+ enqueued on emails.send \(pending\)\n$`, out)
	first := strings.Fields(out)[0]
	var enq client.EnqueueResult
	out, err := as(ownerFile, `{"n": 2}`, "enqueue", "emails.send", "-", "--delay", "1h", "--unique-key", "n2", "-o", "json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &enq))
	require.Equal(t, client.StateScheduled, enq.Status)
	second := enq.JobID
	out = run("enqueue", "emails.send", `{"n": 3}`, "--unique-key", "n2")
	require.Equal(t, second+` already holds unique key "n2" (scheduled): nothing enqueued`+"\n", out)

	t.Run("Inspect", func(t *testing.T) {
		out := run("inspect", first)
		require.Equal(t, "pending", clitest.Field(out, "STATE"), out)
		require.Equal(t, "high", clitest.Field(out, "PRIORITY"), out)
		require.Equal(t, "tenant=acme", clitest.Field(out, "TAGS"), out)
		require.Equal(t, `{"to":"user@example.com"}`, clitest.Field(out, "PAYLOAD"), out)
		require.Contains(t, out, "TIMELINE\n")
		var got wire.JobDetail
		runJSON(&got, "inspect", second)
		require.Equal(t, second, got.ID)
		require.Equal(t, client.StateScheduled, got.State)
		require.JSONEq(t, `{"n":2}`, string(got.Payload))
		require.Equal(t, "n2", *got.UniqueKey)
		require.WithinDuration(t, time.Now().Add(time.Hour), *got.ScheduledAt, time.Minute)
		require.JSONEq(t, apiGet(t, d.gateway+"/api/v1/jobs/"+second, ownerFile), run("inspect", second, "-o", "json"),
			"-o json is the API's answer")
	})

	t.Run("Queues", func(t *testing.T) {
		out := run("queues")
		f := clitest.TableRows(out)["emails.send active"]
		require.Equal(t, []string{"1", "1"}, f[2:4], "one pending, one scheduled: %s", out)
		var qs []client.Queue
		runJSON(&qs, "queues")
		require.Len(t, qs, 1)
		require.Equal(t, client.QueueCounts{Pending: 1, Scheduled: 1}, qs[0].Counts)

		require.Equal(t, "emails.send paused (1 pending, 0 active)\n", run("pause", "emails.send"))
		require.Equal(t, "paused", clitest.Field(run("queues", "get", "emails.send"), "STATE"))
		var q client.Queue
		runJSON(&q, "queues", "get", "emails.send")
		require.True(t, q.Paused)
		require.Equal(t, "emails.send resumed (1 pending)\n", run("resume", "emails.send"))
		runJSON(&q, "queues", "get", "emails.send")
		require.False(t, q.Paused)
	})

	t.Run("JobOperations", func(t *testing.T) {
		require.Equal(t, first+" cancelled\n", run("cancel", first))
		require.Equal(t, first+" retried: pending\n", run("retry", first))
		var op cli.JobOp
		runJSON(&op, "move", first, "emails.v2")
		require.Equal(t, cli.JobOp{JobID: first, Status: client.StatePending, Queue: "emails.v2"}, op)
		d, err := owner.GetJob(ctx, first)
		require.NoError(t, err)
		require.Equal(t, "emails.v2", d.Queue)
		require.Equal(t, first+" deleted\n", run("delete", first))

		// A running job: cancel asks its worker, drain waits for it.
		long := strings.Fields(run("enqueue", "long", `{}`))[0]
		w := owner.ForWorker("w-2")
		job, err := w.Fetch(ctx, client.FetchRequest{Queues: []string{"long"}, Hostname: "host-2", Timeout: 10 * time.Second})
		require.NoError(t, err)
		require.Equal(t, long, job.ID)
		require.Equal(t, long+" is running: cancel requested, its worker is told by its next heartbeat\n", run("cancel", long))
		require.Equal(t, "active (cancel requested)", clitest.Field(run("inspect", long), "STATE"))
		require.Equal(t, "long draining: paused, 1 job still active (`jobbie queues get long` shows when drained)\n", run("drain", "long"))
		fr, err := w.Fail(ctx, long, "stopped", "")
		require.NoError(t, err)
		require.Equal(t, client.StateCancelled, fr.Status)
		require.Equal(t, "drained", clitest.Field(run("queues", "get", "long"), "STATE"))
		_, err = as(ownerFile, "", "inspect", first)
		require.True(t, client.IsNotFound(err), "%v", err)
		require.Regexp(t, `^job `+first+`: 404 not_found: `, err.Error())
	})

	t.Run("Dead", func(t *testing.T) {
		id := strings.Fields(run("enqueue", "work", `{}`, "--max-retries", "0"))[0]
		w := owner.ForWorker("w-1")
		job, err := w.Fetch(ctx, client.FetchRequest{Queues: []string{"work"}, Hostname: "host-1", Timeout: 10 * time.Second})
		require.NoError(t, err)
		require.Equal(t, id, job.ID)
		_, err = w.Fail(ctx, id, "SMTP 550 mailbox unavailable", "")
		require.NoError(t, err)

		out := run("dead", "--queue", "work")
		require.Equal(t, []string{id, "work", "1", "retries_exhausted"}, clitest.TableRows(out)[id+" work"][:4], out)
		require.Contains(t, out, "SMTP 550 mailbox unavailable")
		var dead []client.DeadJob
		runJSON(&dead, "dead")
		require.Len(t, dead, 1)
		require.Equal(t, id, dead[0].ID)

		out = run("inspect", id)
		require.Equal(t, "dead (retries_exhausted)", clitest.Field(out, "STATE"), out)
		require.Equal(t, "w-1 (host-1)", clitest.Field(out, "WORKER"), out)
		require.Contains(t, out, "ERRORS\nATTEMPT  AT")
		require.Contains(t, out, "SMTP 550 mailbox unavailable")

		require.JSONEq(t, apiGet(t, d.gateway+"/api/v1/jobs/"+id, ownerFile), run("inspect", id, "-o", "json"))

		out = run("workers")
		require.Equal(t, []string{"w-1", "host-1", "active", "0"}, clitest.TableRows(out)["w-1 host-1"][:4], out)
		var ws []client.WorkerInfo
		runJSON(&ws, "workers")
		require.Len(t, ws, 2)
		require.Equal(t, []string{"work"}, ws[0].Queues)
	})

	t.Run("ClearDrainDestroy", func(t *testing.T) {
		run("enqueue", "old", `{}`)
		run("enqueue", "old", `{}`)
		require.Equal(t, "old cleared: 2 jobs deleted\n", run("clear", "old"))
		require.Equal(t, "old drained: paused, no job active\n", run("drain", "old"))
		run("enqueue", "old", `{}`)
		_, err := as(ownerFile, "", "destroy", "old")
		require.EqualError(t, err, "destroy old: this deletes for good: add --confirm")
		var dr cli.DestroyResult
		runJSON(&dr, "destroy", "old", "--confirm")
		require.Equal(t, cli.DestroyResult{Queue: "old", Deleted: true, JobsDeleted: 1}, dr)
		_, err = owner.GetQueue(ctx, "old")
		require.True(t, client.IsNotFound(err), "%v", err)
	})

	t.Run("Schedules", func(t *testing.T) {
		_, err := owner.CreateSchedule(ctx, client.ScheduleRequest{Name: "nightly", Queue: "reports", Cron: "0 3 * * *"})
		require.NoError(t, err)
		out := run("schedules")
		require.Contains(t, out, " nightly  reports  0 3 * * *  UTC       true ")
		out = run("schedules", "disable", "nightly")
		require.Contains(t, out, " false ")
		var s client.Schedule
		runJSON(&s, "schedules", "get", "nightly")
		require.False(t, s.Enabled)
		require.Nil(t, s.NextRun)
		runJSON(&s, "schedules", "enable", s.ID)
		require.True(t, s.Enabled)
		require.Equal(t, "schedule nightly deleted\n", run("schedules", "delete", "nightly"))
		var ss []client.Schedule
		runJSON(&ss, "schedules")
		require.Empty(t, ss)
	})

	t.Run("Namespaces", func(t *testing.T) {
		out := run("namespaces", "create", "staging", "--retention", "168h", "--description", "pre-prod")
		require.Equal(t, []string{"staging", "168h", "false"}, clitest.TableRows(out)["staging 168h"][:3], out)
		run("enqueue", "q", `{}`, "--namespace", "staging")
		var ns []client.Namespace
		runJSON(&ns, "namespaces")
		require.Len(t, ns, 2)
		var n client.Namespace
		runJSON(&n, "namespaces", "get", "staging")
		require.Equal(t, "pre-prod", n.Description)
		_, err := as(ownerFile, "", "namespaces", "delete", "staging")
		require.Equal(t, client.CodeNamespaceNotEmpty, client.ErrorCode(err), "%v", err)
		require.ErrorContains(t, err, "(--force deletes it with them)")
		require.Equal(t, "namespace staging deleted\n", run("namespaces", "delete", "staging", "--force"))
		_, err = owner.GetNamespace(ctx, "staging")
		require.True(t, client.IsNotFound(err), "%v", err)
	})

	t.Run("Status", func(t *testing.T) {
		qs, err := owner.ListQueues(ctx)
		require.NoError(t, err)
		out := run("status")
		queues := fmt.Sprintf("%d queues", len(qs))
		if len(qs) == 1 {
			queues = "1 queue"
		}
		require.Equal(t, queues+" (1 paused)", clitest.Field(out, "QUEUES"), out) // long, drained
		require.Equal(t, "pending 0, scheduled 1, active 0, retrying 0, held 0, completed 0, dead 1, cancelled 1", clitest.Field(out, "JOBS"), out)
		require.Equal(t, "2 active", clitest.Field(out, "WORKERS"), out)
		require.Regexp(t, `^s1: healthy, leader \S+$`, clitest.Field(out, "SHARD"))
		var st cli.Status
		runJSON(&st, "status", "--namespace", "default")
		require.Equal(t, "default", st.Namespace)
		require.Equal(t, len(qs), st.Queues)
		require.Equal(t, int64(1), st.Counts.Dead)
		require.True(t, st.Cluster.Healthy)
		require.Equal(t, "s1", st.Cluster.ShardID)
		require.Len(t, st.Cluster.Nodes, 1)
		require.Equal(t, wire.NodeLeader, st.Cluster.Nodes[0].Role)
		require.Equal(t, st.Cluster.LeaderID, st.Cluster.Nodes[0].ID)
	})

	t.Run("KeysAndAViewerRefused", func(t *testing.T) {
		out := run("keys", "create", "--name", "dashboards", "--role", "viewer", "--namespaces", "*")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Equal(t, "secret (shown this once; store it now):", lines[len(lines)-2], out)
		viewerFile := clitest.KeyFile(t, lines[len(lines)-1])
		id := clitest.TableLines(out)[1][0]
		require.Equal(t, []string{id, "dashboards", "viewer", "*", "active"}, clitest.TableLines(out)[1][:5])

		var ks []client.Key
		runJSON(&ks, "keys")
		require.Len(t, ks, 2)
		var k client.Key
		runJSON(&k, "keys", "get", id)
		require.Equal(t, "dashboards", k.Name)

		// A viewer reads, and is refused every write with the roles that may.
		_, err := as(viewerFile, "", "queues")
		require.NoError(t, err)
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"enqueue", "emails.send", "{}"}, `^enqueue: 403 forbidden: .+ \(this needs a key with job\.enqueue: owner, admin, developer or producer\)$`},
			{[]string{"pause", "emails.send"}, `^pause emails.send: 403 forbidden: .+ \(this needs a key with queue\.manage: owner, admin or developer\)$`},
			{[]string{"retry", second}, `^job ` + second + `: 403 forbidden: .+ \(this needs a key with job\.manage: owner, admin or developer\)$`},
			{[]string{"keys", "create", "--name", "x", "--role", "viewer"}, `^create key x: 403 forbidden: .+ \(this needs a key with key\.manage: owner or admin\)$`},
		} {
			out, err := as(viewerFile, "", tc.args...)
			require.True(t, client.IsForbidden(err), "%v: %v", tc.args, err)
			require.Regexp(t, tc.want, err.Error())
			require.Empty(t, out)
		}
		var q client.Queue
		runJSON(&q, "queues", "get", "emails.send")
		require.False(t, q.Paused, "the refused pause changed nothing")

		var rk client.RotatedKey
		runJSON(&rk, "keys", "rotate", id, "--grace", "1m")
		require.NotEmpty(t, rk.Token)
		require.WithinDuration(t, time.Now().Add(time.Minute), rk.PreviousKeyValidUntil, 30*time.Second)

		require.Equal(t, "key "+id+" revoked\n", run("keys", "revoke", id))
		runJSON(&k, "keys", "get", id)
		require.NotNil(t, k.RevokedAt)
		require.Contains(t, run("keys"), " revoked ")
	})
}

// apiGet is the body of a GET of url with the key in keyFile.
func apiGet(t *testing.T, url, keyFile string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+readKey(t, keyFile))
	req.Close = true // no idle connection left behind
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	return string(body)
}

func readKey(t *testing.T, path string) string {
	t.Helper()
	k, err := cli.ReadSecretFile(path)
	require.NoError(t, err)
	return k
}
