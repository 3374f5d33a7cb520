package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

func TestSearchFlagsMapToTheFilter(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	_, _, err := f.run(t, "", "search",
		"--queue", "emails.send", "--state", "dead", "--state", "pending,scheduled", "--priority", "high",
		"--tag", "tenant=acme", "--tag", "note=a=b", "--payload-contains", "user@example.com",
		"--payload-jq", `.template == "welcome"`,
		"--created-after", "2026-02-10", "--created-before", "2026-02-11T23:59:59Z",
		"--scheduled-after", "2026-02-10T08:00:00+01:00", "--scheduled-before", "2026-02-12",
		"--started-after", "2026-02-13T10:11", "--started-before", "2026-02-14T10:11:12",
		"--completed-after", "2026-02-15", "--completed-before", "2026-02-16",
		"--expire-after", "2026-02-17", "--expire-before", "2026-02-18T00:00:00.5Z",
		"--worker-id", "worker-abc", "--has-errors", "--error-contains", "SMTP", "--batch-id", "bat_1",
		"--unique-key", "welcome:42", "--attempt-min", "0", "--attempt-max", "5", "--job-id-prefix", "job_01",
		"--sort", "priority", "--order", "asc", "--page-size", "200", "--namespace", "emails")
	require.NoError(t, err)
	want := `{"queue":"emails.send","state":["dead","pending","scheduled"],"priority":"high",
		"tags":{"tenant":"acme","note":"a=b"},"payload_contains":"user@example.com","payload_jq":".template == \"welcome\"",
		"created_after":"2026-02-10T00:00:00Z","created_before":"2026-02-11T23:59:59Z",
		"scheduled_after":"2026-02-10T08:00:00+01:00","scheduled_before":"2026-02-12T00:00:00Z",
		"started_after":"2026-02-13T10:11:00Z","started_before":"2026-02-14T10:11:12Z",
		"completed_after":"2026-02-15T00:00:00Z","completed_before":"2026-02-16T00:00:00Z",
		"expire_after":"2026-02-17T00:00:00Z","expire_before":"2026-02-18T00:00:00.5Z",
		"worker_id":"worker-abc","has_errors":true,"error_contains":"SMTP","batch_id":"bat_1",
		"unique_key":"welcome:42","attempt_min":0,"attempt_max":5,"job_id_prefix":"job_01",
		"sort":"priority","order":"asc","limit":200}`
	got, _ := json.Marshal(f.searchBodies()[0])
	require.JSONEq(t, want, string(got))
	h := f.lastHeader()
	require.Equal(t, "Bearer k3y", h.Get("Authorization"))
	require.Equal(t, "emails", h.Get(client.NamespaceHeader))

	// No flags: only the page size; --has-errors=false sends false.
	_, _, err = f.run(t, "", "search")
	require.NoError(t, err)
	_, _, err = f.run(t, "", "search", "--has-errors=false")
	require.NoError(t, err)
	bodies := f.searchBodies()
	got, _ = json.Marshal(bodies[1])
	require.JSONEq(t, `{"limit":1000}`, string(got))
	got, _ = json.Marshal(bodies[2])
	require.JSONEq(t, `{"has_errors":false,"limit":1000}`, string(got))
}

func TestSearchRejectsBadFlags(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	for _, args := range [][]string{
		{"--created-after", "last tuesday"},
		{"--tag", "novalue"},
		{"--attempt-min", "x"},
		{"--has-errors=maybe"},
		{"--page-size", "1001"},
		{"--page-size", "0"},
		{"--limit", "-1"},
		{"extra-arg"},
	} {
		_, _, err := f.run(t, "", append([]string{"search"}, args...)...)
		require.Error(t, err, "%v", args)
	}
	require.Empty(t, f.searchBodies(), "nothing was sent")
}

// pagedReplies serves pages by cursor: no cursor gets pages[0], "cN"
// gets pages[N].
func pagedReplies(pages ...string) func(int, map[string]any) (int, string) {
	return func(_ int, body map[string]any) (int, string) {
		n := 0
		if c, ok := body["cursor"].(string); ok {
			_, _ = fmt.Sscanf(c, "c%d", &n)
		}
		return 200, pages[n]
	}
}

func TestSearchFollowsCursorsIntoOneJSONArray(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.searchReply = pagedReplies(
		searchPage("c1", true, searchJob("job_1", "emails.send", "SMTP timeout"), searchJob("job_2", "reports", "")),
		searchPage("c2", true, searchJob("job_3", "emails.send", "")),
		searchPage("", false, searchJob("job_4", "reports", ""), searchJob("job_5", "emails.send", "")))
	stdout, stderr, err := f.run(t, "", "search", "--queue", "q", "--output", "json", "--page-size", "2")
	require.NoError(t, err)
	require.Empty(t, stderr)
	var jobs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &jobs), stdout)
	require.Len(t, jobs, 5)
	require.Equal(t, "job_1", jobs[0]["id"])
	require.Equal(t, "emails.send", jobs[0]["queue"], "jobs keep the API's shape, so jq can group_by(.queue)")
	require.Equal(t, "SMTP timeout", jobs[0]["last_error"])
	require.Equal(t, map[string]any{"n": float64(1)}, jobs[0]["payload"])
	require.Equal(t, "job_5", jobs[4]["id"])

	bodies := f.searchBodies()
	require.Len(t, bodies, 3)
	for i, wantCursor := range []any{nil, "c1", "c2"} {
		require.Equal(t, wantCursor, bodies[i]["cursor"])
		require.Equal(t, "q", bodies[i]["queue"])
		require.EqualValues(t, 2, bodies[i]["limit"])
	}
}

func TestSearchLimitStopsEarly(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.searchReply = pagedReplies(
		searchPage("c1", true, searchJob("job_1", "q", ""), searchJob("job_2", "q", "")),
		searchPage("c2", true, searchJob("job_3", "q", "")),
		searchPage("", false, searchJob("job_4", "q", "")))
	stdout, stderr, err := f.run(t, "", "search", "--limit", "3", "--page-size", "2")
	require.NoError(t, err)
	bodies := f.searchBodies()
	require.Len(t, bodies, 2)
	require.EqualValues(t, 2, bodies[0]["limit"])
	require.EqualValues(t, 1, bodies[1]["limit"], "the last page asks only for what is left")
	require.Equal(t, 4, strings.Count(stdout, "\n"), "header and three jobs:\n%s", stdout)
	require.Regexp(t, `^3 of 5 jobs \(3\.0 ms\)\n$`, stderr)

	stdout, _, err = f.run(t, "", "search", "--limit", "0", "-o", "json")
	require.NoError(t, err)
	var jobs []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &jobs))
	require.Len(t, jobs, 4)
}

func TestSearchTable(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	long := "connection refused\n\tat smtp.Dial " + strings.Repeat("x", 100)
	f.searchReply = pagedReplies(
		strings.Replace(searchPage("c1", true, searchJob("job_1", "emails.send", long)), `"partial":false`, `"partial":true`, 1),
		searchPage("", false, searchJob("job_22", "q", ""), `{"id":"job_3","queue":"q","state":"pending","priority":"high","attempt":0}`))
	stdout, stderr, err := f.run(t, "", "search")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 4)
	require.Regexp(t, `^ID +QUEUE +STATE +PRIORITY +ATTEMPT +CREATED +LAST ERROR$`, lines[0])
	require.Regexp(t, `^job_1 +emails\.send +dead +normal +3 +2026-02-10T09:30:00Z +connection refused at smtp\.Dial x+…$`, lines[1])
	require.Regexp(t, `^job_22 +q +dead +normal +3 +2026-02-10T09:30:00Z +-$`, lines[2])
	require.Regexp(t, `^job_3 +q +pending +high +0 +- +-$`, lines[3])
	col := strings.Index(lines[0], "QUEUE")
	for _, l := range lines[1:] {
		require.Equal(t, ' ', rune(l[col-1]), "columns line up:\n%s", stdout)
		require.NotEqual(t, ' ', rune(l[col]), "columns line up:\n%s", stdout)
	}
	require.Contains(t, stderr, "note: page 1 is partial: the payload_jq scan ran out of its time budget; continuing")
	require.Regexp(t, `(?m)^3 jobs \(3\.0 ms\)$`, stderr)
	require.NotContains(t, stdout, "jobs (", "the count stays off stdout")
}

func TestSearchEmptyResult(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	stdout, _, err := f.run(t, "", "search", "-o", "json")
	require.NoError(t, err)
	require.Equal(t, "[]\n", stdout)
	stdout, stderr, err := f.run(t, "", "search")
	require.NoError(t, err)
	require.Regexp(t, `^ID +QUEUE`, stdout)
	require.Equal(t, "0 jobs (1.5 ms)\n", stderr)
}

func TestSearchBadRequest(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.searchReply = func(int, map[string]any) (int, string) {
		return 400, `{"error":{"code":"bad_request","message":"payload_jq: unexpected token \"==\"","field":"payload_jq","request_id":"req_9"}}`
	}
	stdout, _, err := f.run(t, "", "search", "--payload-jq", "== 1")
	require.EqualError(t, err, `search: 400 bad_request: payload_jq: unexpected token "==" (field payload_jq) [request req_9]`)
	require.Empty(t, stdout)
	require.True(t, client.IsBadRequest(err), "the API error stays reachable")

	// An error after a first page: the table is withheld, JSON left unclosed.
	f2 := newFakeAPI(t)
	f2.searchReply = func(n int, _ map[string]any) (int, string) {
		if n == 0 {
			return 200, searchPage("c1", true, searchJob("job_1", "q", ""))
		}
		return 401, `{"error":{"code":"unauthenticated","message":"key revoked"}}`
	}
	stdout, _, err = f2.run(t, "", "search")
	require.ErrorContains(t, err, "search: 401 unauthenticated: key revoked (check --key")
	require.Empty(t, stdout, "a pipe into bulk must not act on part of the result")
	stdout, _, err = f2.run(t, "", "search", "-o", "json")
	require.Error(t, err)
	require.Error(t, json.Unmarshal([]byte(stdout), new(any)), "the JSON is left invalid: %s", stdout)
}

func TestCountLine(t *testing.T) {
	t.Parallel()
	p := &client.SearchPage{Total: 142, TotalExact: false}
	require.Equal(t, "1 job", countLine(1, p, false))
	require.Equal(t, "50 of about 142 jobs", countLine(50, p, true))
	p.TotalExact = true
	require.Equal(t, "50 of 142 jobs", countLine(50, p, true))
	require.Equal(t, "142 jobs", countLine(142, p, false))
	require.Equal(t, "12 ms", formatMS(12_400_000))
	require.Equal(t, "0.4 ms", formatMS(400_000))
}
