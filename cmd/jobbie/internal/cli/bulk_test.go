package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

func TestBulkReadsEveryInputForm(t *testing.T) {
	t.Parallel()
	want := []string{"job_1", "job_2", "job_3"}
	for name, stdin := range map[string]string{
		"search table": "ID      QUEUE  STATE\njob_1   q      dead\n\njob_2   q      dead\n   job_3 q dead   \n",
		"plain ids":    "job_1\njob_2\r\njob_3\njob_1\n",
		"json objects": `[{"id":"job_1","queue":"q"},{"id":"job_2"},{"id":"job_3","payload":{"id":"inner"}}]`,
		"json ids":     ` ["job_1","job_2","job_3"] `,
		"jobs object":  `{"jobs":[{"id":"job_1"},{"id":"job_2"},{"id":"job_3"}],"total":3}`,
		"ndjson":       "{\"id\":\"job_1\"}\n{\"id\":\"job_2\"}\n\"job_3\"\n",
	} {
		f := newFakeAPI(t)
		stdout, _, err := f.run(t, stdin, "bulk", "retry")
		require.NoError(t, err, name)
		reqs := f.bulkRequests()
		require.Len(t, reqs, 1, name)
		require.Equal(t, client.BulkRequest{JobIDs: want, Action: "retry"}, reqs[0], name)
		require.Equal(t, "retry: 3 affected, 0 skipped, 0 errors\n", stdout, name)
	}
}

func TestBulkRejectsBadInput(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	for stdin, msg := range map[string]string{
		"":                     "no job ids on stdin",
		" \n\t\n":              "no job ids on stdin",
		`[{"queue":"q"}]`:      `neither "id" nor "jobs"`,
		`[1,2]`:                "want job ids or job objects",
		`[["job_1"]]`:          "want job ids or job objects",
		`["job_1"`:             "stdin: JSON",
		`{"jobs":[{"id":""}]}`: `neither "id" nor "jobs"`,
	} {
		_, _, err := f.run(t, stdin, "bulk", "delete")
		require.ErrorContains(t, err, msg, "stdin %q", stdin)
	}
	for _, args := range [][]string{
		{"bulk", "move"},
		{"bulk", "retry", "extra"},
		{"bulk", "explode"},
		{"bulk", "retry", "--filter", `{"queue":"q"} x`},
		{"bulk", "retry", "--filter", `{"states":["dead"]}`},
		{"bulk", "retry", "--filter", `{}`},
		{"bulk", "retry", "--filter", `{"created_after":"yesterday"}`},
	} {
		_, _, err := f.run(t, "job_1", args...)
		require.Error(t, err, "%v", args)
	}
	require.Empty(t, f.bulkRequests(), "nothing was sent")
}

func TestBulkWithNothingToDo(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	for _, stdin := range []string{"[]", "ID  QUEUE  STATE\n", `{"jobs":[]}`} {
		stdout, _, err := f.run(t, stdin, "bulk", "retry")
		require.NoError(t, err, "a search that found nothing is no error: %q", stdin)
		require.Equal(t, "retry: 0 affected, 0 skipped, 0 errors\n", stdout)
	}
	require.Empty(t, f.bulkRequests())
}

func TestBulkSendsIDsInChunksAndSums(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.bulkReply = func(req client.BulkRequest) (int, string) {
		return 200, fmt.Sprintf(`{"affected":%d,"skipped":1,"errors":0,"duration_ms":10,"failures":[]}`, len(req.JobIDs)-1)
	}
	var in strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&in, "job_%04d\n", i)
	}
	stdout, stderr, err := f.run(t, in.String(), "bulk", "move", "emails.v2")
	require.NoError(t, err)
	require.Empty(t, stderr)
	require.Equal(t, "move: 2497 affected, 3 skipped, 0 errors\n", stdout)
	reqs := f.bulkRequests()
	require.Len(t, reqs, 3)
	for i, n := range []int{1000, 1000, 500} {
		require.Len(t, reqs[i].JobIDs, n)
		require.Equal(t, fmt.Sprintf("job_%04d", i*1000), reqs[i].JobIDs[0], "in input order")
		require.Equal(t, "move", reqs[i].Action)
		require.Equal(t, "emails.v2", reqs[i].MoveToQueue)
		require.Nil(t, reqs[i].Filter)
	}

	stdout, _, err = f.run(t, in.String(), "bulk", "move", "emails.v2", "-o", "json")
	require.NoError(t, err)
	var sum bulkSummary
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	require.Equal(t, bulkSummary{Action: "move", Requests: 3, Affected: 2497, Skipped: 3, DurationMS: 30,
		Failures: []client.BulkFailure{}}, sum)
}

func TestBulkReportsFailuresAndStopsOnAnError(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	var calls atomic.Int32
	f.bulkReply = func(req client.BulkRequest) (int, string) {
		if calls.Add(1) == 2 {
			return 403, `{"error":{"code":"forbidden","message":"the key may not manage queue secret"}}`
		}
		return 200, `{"affected":998,"skipped":0,"errors":2,"duration_ms":1,
			"failures":[{"job_id":"job_0007","error":"job is active"},{"job_id":"job_0008","error":"job is active"}]}`
	}
	var in strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&in, "job_%04d\n", i)
	}
	_, stderr, err := f.run(t, in.String(), "bulk", "cancel")
	require.EqualError(t, err, "cancel: 403 forbidden: the key may not manage queue secret")
	require.Equal(t, "cancel: stopped after 1000 of 1500 ids: 998 affected, 0 skipped, 2 errors\n", stderr)

	f.bulkReply = func(client.BulkRequest) (int, string) {
		return 200, `{"affected":1,"skipped":0,"errors":1,"duration_ms":1,"failures":[{"job_id":"job_2","error":"job is active"}]}`
	}
	stdout, stderr, err := f.run(t, "job_1 job_2", "bulk", "change_priority", "critical")
	require.EqualError(t, err, "change_priority: 1 jobs failed")
	require.Equal(t, "change_priority: 1 affected, 0 skipped, 1 errors\n", stdout)
	require.Equal(t, "  job_2: job is active\n", stderr)
	reqs := f.bulkRequests()
	require.Equal(t, client.BulkRequest{JobIDs: []string{"job_1"}, Action: "change_priority", Priority: "critical"}, reqs[len(reqs)-1])

	f.bulkReply = func(client.BulkRequest) (int, string) {
		return 400, `{"error":{"code":"bad_request","message":"unknown priority \"urgent\"","field":"priority"}}`
	}
	_, _, err = f.run(t, "job_1", "bulk", "change-priority", "urgent")
	require.EqualError(t, err, `change_priority: 400 bad_request: unknown priority "urgent" (field priority)`)
}

// compact is s as one line, for an SSE data field.
func compact(t *testing.T, s string) string {
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, []byte(s)))
	return b.String()
}

func TestBulkFilterFollowsABackgroundOperation(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.bulkReply = func(client.BulkRequest) (int, string) {
		return 202, `{"bulk_operation_id":"bulk_1","status":"processing","estimated_total":20000,"progress_url":"/api/v1/bulk/bulk_1/progress"}`
	}
	f.progress = "event: progress\ndata: {\"id\":\"bulk_1\",\"status\":\"processing\",\"total\":20000,\"processed\":10000,\"affected\":9995,\"skipped\":5}\n\n" +
		": keep-alive\n\n" +
		"event: progress\ndata: {\"id\":\"bulk_1\",\"status\":\"processing\",\"total\":20000,\"processed\":20000,\"affected\":19990,\"skipped\":10}\n\n" +
		"event: done\ndata: " + compact(t, opStatus(client.BulkCompleted)) + "\n\n"
	filter := `{"queue":"emails.send","state":["dead"],"created_after":"2026-02-10T00:00:00Z"}`
	stdout, stderr, err := f.run(t, "ignored", "bulk", "retry", "--filter", filter)
	require.NoError(t, err)
	require.Equal(t, "retry: 19990 affected, 10 skipped, 0 errors (bulk operation bulk_1 completed, 20000 processed)\n", stdout)
	require.Equal(t, "retry: bulk operation bulk_1 started for about 20000 jobs\n"+
		"bulk_1: processing, 10000 of 20000 processed, 9995 affected, 5 skipped, 0 errors\n"+
		"bulk_1: processing, 20000 of 20000 processed, 19990 affected, 10 skipped, 0 errors\n", stderr)
	f.mu.Lock()
	raw, _ := json.Marshal(f.rawBulks[0])
	f.mu.Unlock()
	require.JSONEq(t, `{"action":"retry","filter":`+filter+`}`, string(raw))

	// JSON: the final operation in the summary.
	stdout, _, err = f.run(t, "", "bulk", "retry", "--filter", filter, "-o", "json")
	require.NoError(t, err)
	var sum bulkSummary
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	require.Equal(t, int64(19990), sum.Affected)
	require.Len(t, sum.Operations, 1)
	require.Equal(t, client.BulkCompleted, sum.Operations[0].Status)

	// --no-wait: the id, and no progress stream.
	f.mu.Lock()
	f.paths = nil
	f.mu.Unlock()
	stdout, stderr, err = f.run(t, "", "bulk", "retry", "--filter", filter, "--no-wait")
	require.NoError(t, err)
	require.Equal(t, "retry: bulk operation bulk_1 is processing about 20000 jobs (`jobbie bulk show bulk_1`)\n", stdout)
	require.Empty(t, stderr)
	stdout, _, err = f.run(t, "", "bulk", "retry", "--filter", filter, "--no-wait", "-o", "json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	require.Equal(t, "bulk_1", sum.Operations[0].ID)
	require.Equal(t, "/api/v1/bulk/bulk_1/progress", sum.Operations[0].ProgressURL)
	f.mu.Lock()
	require.Empty(t, f.paths)
	f.mu.Unlock()
}

func TestBulkCancelledOperationFails(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.bulkReply = func(client.BulkRequest) (int, string) {
		return 202, `{"bulk_operation_id":"bulk_1","status":"processing","estimated_total":20000}`
	}
	f.progress = "event: done\n\n" // no status: the CLI asks for it
	f.status = strings.Replace(opStatus(client.BulkCancelled), `"processed":20000`, `"processed":500`, 1)
	stdout, _, err := f.run(t, "", "bulk", "delete", "--filter", `{"queue":"q"}`)
	require.EqualError(t, err, "delete: bulk operation bulk_1 was cancelled after 500 of 20000 jobs")
	require.Contains(t, stdout, "(bulk operation bulk_1 cancelled, 500 processed)")
}

func TestBulkShowAndAbort(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.status = opStatus(client.BulkProcessing)
	stdout, _, err := f.run(t, "", "bulk", "show", "bulk_1")
	require.NoError(t, err)
	require.Regexp(t, `(?s)^ID +bulk_1\nACTION +retry\nSTATUS +processing\nPROCESSED +20000 of 20000\n`+
		`AFFECTED +19990\nSKIPPED +10\nERRORS +0\nCREATED +2026-02-10T09:30:00Z\nFINISHED +-\n$`, stdout)
	stdout, _, err = f.run(t, "", "bulk", "abort", "bulk_1", "-o", "json")
	require.NoError(t, err)
	var op client.BulkOperation
	require.NoError(t, json.Unmarshal([]byte(stdout), &op))
	require.Equal(t, "bulk_1", op.ID)
	_, _, err = f.run(t, "", "bulk", "show", "bulk_2")
	require.EqualError(t, err, "bulk_2: 404 not_found: no such bulk operation")
	f.mu.Lock()
	require.Equal(t, []string{"GET /api/v1/bulk/bulk_1", "DELETE /api/v1/bulk/bulk_1", "GET /api/v1/bulk/bulk_2"}, f.paths)
	f.mu.Unlock()
}

// TestSearchPipesIntoBulk runs the seed's pipes: search's table and its
// JSON both feed bulk.
func TestSearchPipesIntoBulk(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.searchReply = pagedReplies(
		searchPage("c1", true, searchJob("job_01HX1", "emails.send", "SMTP timeout: 421 try later")),
		searchPage("", false, searchJob("job_01HX2", "emails.send", "")))
	for _, out := range []string{"table", "json"} {
		found, _, err := f.run(t, "", "search", "--queue", "emails.send", "--state", "dead", "-o", out)
		require.NoError(t, err)
		stdout, _, err := f.run(t, found, "bulk", "retry")
		require.NoError(t, err, out)
		require.Equal(t, "retry: 2 affected, 0 skipped, 0 errors\n", stdout)
		reqs := f.bulkRequests()
		require.Equal(t, []string{"job_01HX1", "job_01HX2"}, reqs[len(reqs)-1].JobIDs, out)
	}
}
