package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// cliRun is one finished `jobbie` process.
type cliRun struct {
	stdout, stderr string
	code           int
}

func (r cliRun) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// cliEnv is the environment a user would have: the gateway and a key in
// JOBBIE_URL and JOBBIE_KEY, and no other JOBBIE_ variable. Extra entries
// (NAME=value) are added; NAME= removes a variable.
func cliEnv(key string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "JOBBIE_") {
			env = append(env, kv)
		}
	}
	env = append(env, "JOBBIE_URL="+shared.gateway)
	if key != "" {
		env = append(env, "JOBBIE_KEY="+key)
	}
	for _, kv := range extra {
		name, val, _ := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		if val != "" {
			env = append(env, kv)
		}
	}
	return env
}

func cliCommand(t *testing.T, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx(t), binary, args...)
	cmd.Env = env
	return cmd
}

// jobbie runs the binary with args and stdin (nil: no input, as from
// /dev/null).
func jobbie(t *testing.T, env []string, stdin io.Reader, args ...string) cliRun {
	t.Helper()
	cmd := cliCommand(t, env, args...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return finish(t, cmd.Run(), &out, &errb)
}

func finish(t *testing.T, err error, out, errb *bytes.Buffer) cliRun {
	t.Helper()
	r := cliRun{stdout: out.String(), stderr: errb.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("run jobbie: %v", err)
	}
	return r
}

// pipe runs `jobbie first… | jobbie second…` the way a shell does: the
// first's stdout is an OS pipe into the second's stdin.
func pipe(t *testing.T, env []string, first, second []string) (cliRun, cliRun) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	c1, c2 := cliCommand(t, env, first...), cliCommand(t, env, second...)
	var err1, out2, err2 bytes.Buffer
	c1.Stdout, c1.Stderr = w, &err1
	c2.Stdin, c2.Stdout, c2.Stderr = r, &out2, &err2
	require.NoError(t, c1.Start())
	require.NoError(t, c2.Start())
	// The children hold their own ends now.
	w.Close()
	r.Close()
	e1 := c1.Wait()
	e2 := c2.Wait()
	return finish(t, e1, &bytes.Buffer{}, &err1), finish(t, e2, &out2, &err2)
}

func requireOK(t *testing.T, r cliRun, what string) {
	t.Helper()
	require.Equal(t, 0, r.code, "%s: %s", what, r)
}

func requireFails(t *testing.T, r cliRun, what string, wantInStderr ...string) {
	t.Helper()
	require.NotEqual(t, 0, r.code, "%s should fail: %s", what, r)
	require.Contains(t, r.stderr, "jobbie: ", "%s: the message is on stderr: %s", what, r)
	for _, s := range wantInStderr {
		require.Contains(t, r.stderr, s, "%s: %s", what, r)
	}
}

// jsonJobs decodes `jobbie search -o json`.
func jsonJobs(t *testing.T, r cliRun) []map[string]any {
	t.Helper()
	var jobs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &jobs), "stdout is a JSON array: %s", r)
	return jobs
}

func jobIDs(jobs []map[string]any) []string {
	var ids []string
	for _, j := range jobs {
		ids = append(ids, j["id"].(string))
	}
	return ids
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestCLISearchPipedIntoBulk(t *testing.T) {
	t.Parallel()
	c, ct := shared.tenant(t)
	dead := makeDead(t, c, "cli.q", 3, func(i int) any { return map[string]any{"n": i} },
		func(id string) string { return "SMTP timeout on " + id })
	pending := enqueueIDs(t, c, client.EnqueueRequest{Queue: "cli.q", Payload: map[string]any{"n": 10}},
		client.EnqueueRequest{Queue: "cli.q", Payload: map[string]any{"n": 11}})
	env := cliEnv(ct.OwnerKey)

	// -o json: one JSON array of the jobs as the API has them.
	r := jobbie(t, env, nil, "search", "--queue", "cli.q", "--state", "dead", "-o", "json")
	requireOK(t, r, "search -o json")
	jobs := jsonJobs(t, r)
	require.Equal(t, rev(dead), jobIDs(jobs), "newest first")
	for _, j := range jobs {
		require.Equal(t, "cli.q", j["queue"])
		require.Equal(t, "dead", j["state"])
		require.Equal(t, "SMTP timeout on "+j["id"].(string), j["last_error"])
	}
	r = jobbie(t, env, nil, "search", "--queue", "cli.q", "--payload-jq", ".n >= 10", "--output", "json")
	requireOK(t, r, "search --payload-jq")
	require.Equal(t, rev(pending), jobIDs(jsonJobs(t, r)))
	r = jobbie(t, env, nil, "search", "--error-contains", "SMTP", "--created-after", time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), "-o", "json")
	requireOK(t, r, "search --error-contains --created-after")
	require.Equal(t, rev(dead), jobIDs(jsonJobs(t, r)))
	r = jobbie(t, env, nil, "search", "--queue", "nothing-here", "-o", "json")
	requireOK(t, r, "empty search")
	require.Empty(t, jsonJobs(t, r))

	// The table: a header, one line per job starting with its id, and a
	// count on stderr.
	r = jobbie(t, env, nil, "search", "--queue", "cli.q", "--state", "dead")
	requireOK(t, r, "search table")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 4, r.String())
	require.Equal(t, []string{"ID", "QUEUE", "STATE"}, strings.Fields(lines[0])[:3])
	for i, l := range lines[1:] {
		f := strings.Fields(l)
		require.Equal(t, []string{dead[2-i], "cli.q", "dead"}, f[:3])
	}
	require.Contains(t, r.stderr, "3 jobs")
	for _, limit := range []string{"1", "2"} {
		r = jobbie(t, env, nil, "search", "--queue", "cli.q", "--limit", limit, "--page-size", "1")
		requireOK(t, r, "search --limit")
		require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 1+int(limit[0]-'0'), r.String())
		require.Regexp(t, `^`+limit+` of 5 jobs \(`, r.stderr)
	}

	// The table piped into bulk retry.
	s, b := pipe(t, env, []string{"search", "--queue", "cli.q", "--state", "dead"}, []string{"bulk", "retry"})
	requireOK(t, s, "search | …")
	requireOK(t, b, "… | bulk retry")
	require.Equal(t, "retry: 3 affected, 0 skipped, 0 errors", strings.TrimSpace(b.stdout))
	for _, id := range dead {
		d := requireState(t, c, id, client.StatePending)
		require.Equal(t, 0, d.Attempt)
		require.Equal(t, "cli.q", d.Queue)
	}
	require.Empty(t, searchIDs(t, c, filter(client.SearchFilter{Queue: "cli.q", State: []string{client.StateDead}})))

	// JSON piped into bulk move.
	s, b = pipe(t, env, []string{"search", "--queue", "cli.q", "--state", "pending", "-o", "json"}, []string{"bulk", "move", "cli.other"})
	requireOK(t, s, "search -o json | …")
	requireOK(t, b, "… | bulk move")
	require.Equal(t, "move: 5 affected, 0 skipped, 0 errors", strings.TrimSpace(b.stdout))
	moved := append(slices.Clone(dead), pending...)
	for _, id := range moved {
		require.Equal(t, "cli.other", requireState(t, c, id, client.StatePending).Queue)
	}
	require.Empty(t, searchIDs(t, c, filter(client.SearchFilter{Queue: "cli.q"})))
	require.Equal(t, sorted(moved), sorted(searchIDs(t, c, filter(client.SearchFilter{Queue: "cli.other"}))))

	// Through a real shell, as docs/cli.md shows it, with --output json
	// into change-priority.
	if sh, err := exec.LookPath("sh"); err == nil {
		cmd := exec.CommandContext(ctx(t), sh, "-c",
			`"$JOBBIE" search --queue cli.other --payload-jq '.n >= 10' --output json | "$JOBBIE" bulk change-priority critical`)
		cmd.Env = append(slices.Clone(env), "JOBBIE="+binary)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		r := finish(t, cmd.Run(), &out, &errb)
		requireOK(t, r, "sh -c search | bulk change-priority")
		require.Equal(t, "change_priority: 2 affected, 0 skipped, 0 errors", strings.TrimSpace(r.stdout))
		for _, id := range pending {
			require.Equal(t, client.PriorityCritical, requireState(t, c, id, client.StatePending).Priority)
		}
		require.Equal(t, client.PriorityNormal, requireState(t, c, dead[0], client.StatePending).Priority)
	}

	// Inline filter.
	dead2 := makeDead(t, c, "cli.dead2", 2, nil, func(string) string { return "boom" })
	r = jobbie(t, env, nil, "bulk", "retry", "--filter", `{"queue":"cli.dead2","state":["dead"]}`)
	requireOK(t, r, "bulk retry --filter")
	require.Equal(t, "retry: 2 affected, 0 skipped, 0 errors", strings.TrimSpace(r.stdout))
	for _, id := range dead2 {
		require.Equal(t, 0, requireState(t, c, id, client.StatePending).Attempt)
	}
	r = jobbie(t, env, nil, "bulk", "cancel", "--filter", `{"queue":"cli.dead2"}`, "-o", "json")
	requireOK(t, r, "bulk cancel --filter -o json")
	var sum struct {
		Action                    string
		Requests                  int
		Affected, Skipped, Errors int64
		Failures                  []client.BulkFailure
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sum), r.String())
	require.Equal(t, "cancel", sum.Action)
	require.Equal(t, 1, sum.Requests)
	require.Equal(t, int64(2), sum.Affected)
	for _, id := range dead2 {
		requireState(t, c, id, client.StateCancelled)
	}

	// Ids that are not there: counted, named on stderr, exit 1; the
	// others are done.
	missing := missingJobID(t, c)
	r = jobbie(t, env, strings.NewReader(missing+"\n"+dead2[0]+"\n"), "bulk", "delete")
	requireFails(t, r, "bulk delete of a missing id", missing, "not found", "1 jobs failed")
	require.Equal(t, "delete: 1 affected, 0 skipped, 1 errors", strings.TrimSpace(r.stdout))
	_, err := c.GetJob(ctx(t), dead2[0])
	require.True(t, client.IsNotFound(err), "%v", err)
}

func TestCLIErrors(t *testing.T) {
	t.Parallel()
	c, ct := shared.tenant(t)
	id := enqueueIDs(t, c, client.EnqueueRequest{Queue: "q"})[0]
	env := cliEnv(ct.OwnerKey)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"search", "--bogus"}, []string{"unknown flag: --bogus"}},
		{[]string{"search", "--created-after", "yesterday"}, []string{"--created-after", "RFC 3339"}},
		{[]string{"search", "--tag", "novalue"}, []string{"--tag", "key=value"}},
		{[]string{"search", "--page-size", "1001"}, []string{"--page-size"}},
		{[]string{"search", "-o", "xml"}, []string{"--output"}},
		{[]string{"search", "--state", "sleeping"}, []string{"400", "state", "sleeping"}},
		{[]string{"search", "--payload-jq", "input"}, []string{"400", "payload_jq"}},
		{[]string{"search", "--payload-jq", ".[]"}, []string{"400", "payload_jq"}},
		{[]string{"search", "--priority", "urgent"}, []string{"400", "priority"}},
		{[]string{"bulk", "explode"}, []string{"unknown bulk action", "explode"}},
		{[]string{"bulk", "move"}, []string{"accepts 1 arg"}},
		{[]string{"bulk", "retry", "--filter", `{"queue":"q","colour":"red"}`}, []string{"--filter", "colour"}},
		{[]string{"bulk", "retry", "--filter", `{}`}, []string{"--filter", "every job"}},
		{[]string{"bulk", "retry", "--filter", `{"state":["gone"]}`}, []string{"400", "state"}},
		{[]string{"bulk", "change-priority", "urgent", "--filter", `{"queue":"q"}`}, []string{"400", "priority"}},
		{[]string{"bulk", "move", "bad queue!", "--filter", `{"queue":"q"}`}, []string{"400", "move_to_queue"}},
		{[]string{"bulk", "retry"}, []string{"no job ids on stdin"}},
		{[]string{"bulk", "show", noSuchOp}, []string{"404", "not found"}},
		{[]string{"bulk", "abort", noSuchOp}, []string{"404", "not found"}},
	} {
		r := jobbie(t, env, nil, tc.args...)
		requireFails(t, r, strings.Join(tc.args, " "), tc.want...)
		require.Empty(t, strings.TrimSpace(r.stdout), "%v prints nothing on stdout: %s", tc.args, r)
	}
	// A search that fails leaves bulk nothing to act on: both fail.
	for _, out := range [][]string{nil, {"-o", "json"}} {
		s, b := pipe(t, env, append([]string{"search", "--state", "sleeping"}, out...), []string{"bulk", "delete"})
		requireFails(t, s, "failing search", "400", "state")
		requireFails(t, b, "bulk after a failing search", "no job ids")
	}
	requireState(t, c, id, client.StatePending)

	// A bad id on stdin is the server's 400 naming it.
	r := jobbie(t, env, strings.NewReader("not-an-id\n"), "bulk", "retry")
	requireFails(t, r, "bulk retry of a malformed id", "400", "job_ids")
	requireState(t, c, id, client.StatePending)

	// Keys: none, a bad one, one whose role may not, one from a file.
	r = jobbie(t, cliEnv(""), nil, "search", "--queue", "q")
	requireFails(t, r, "no key", "no API key", "JOBBIE_KEY")
	r = jobbie(t, cliEnv(""), strings.NewReader(id), "bulk", "delete")
	requireFails(t, r, "no key (bulk)", "no API key")
	r = jobbie(t, cliEnv("not.a.key"), nil, "search")
	requireFails(t, r, "bad key", "401", "JOBBIE_KEY")
	r = jobbie(t, cliEnv("", "JOBBIE_KEY_FILE="+filepath.Join(t.TempDir(), "missing.key")), nil, "search")
	requireFails(t, r, "missing key file", "JOBBIE_KEY_FILE")
	viewer, err := c.CreateKey(ctx(t), clientKey("v", tenancy.RoleViewer))
	require.NoError(t, err)
	r = jobbie(t, cliEnv(viewer.Token), strings.NewReader(id), "bulk", "delete")
	requireFails(t, r, "viewer bulk delete", "403")
	requireState(t, c, id, client.StatePending)
	r = jobbie(t, cliEnv(viewer.Token), nil, "search", "--queue", "q", "-o", "json")
	requireOK(t, r, "viewer search")
	require.Equal(t, []string{id}, jobIDs(jsonJobs(t, r)))

	keyFile := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(keyFile, []byte(ct.OwnerKey+"\n"), 0o600))
	r = jobbie(t, cliEnv("", "JOBBIE_KEY_FILE="+keyFile), nil, "search", "--queue", "q", "-o", "json")
	requireOK(t, r, "JOBBIE_KEY_FILE")
	require.Equal(t, []string{id}, jobIDs(jsonJobs(t, r)))

	// JOBBIE_NAMESPACE picks another namespace of the key; one it does
	// not have is refused.
	_, err = c.CreateNamespace(ctx(t), "cli-ns")
	require.NoError(t, err)
	nsID := enqueueIDs(t, c.WithNamespace("cli-ns"), client.EnqueueRequest{Queue: "q"})[0]
	r = jobbie(t, cliEnv(ct.OwnerKey, "JOBBIE_NAMESPACE=cli-ns"), nil, "search", "--queue", "q", "-o", "json")
	requireOK(t, r, "JOBBIE_NAMESPACE")
	require.Equal(t, []string{nsID}, jobIDs(jsonJobs(t, r)))
	r = jobbie(t, cliEnv(ct.OwnerKey, "JOBBIE_NAMESPACE=nope"), nil, "search")
	requireFails(t, r, "unknown namespace", "404")
}

var opIDPattern = regexp.MustCompile(`bulk_[0-9A-Za-z]+`)

// A filter over more than 10,000 jobs: the CLI follows the background
// operation to its end, or with --no-wait leaves it to `bulk show`.
func TestCLIBulkBackgroundOperation(t *testing.T) {
	t.Parallel()
	c, ct := shared.tenant(t)
	ids := enqueueMany(t, c, "cli.big", client.MaxBulkJobIDs+1)
	n := len(ids)
	env := cliEnv(ct.OwnerKey)

	r := jobbie(t, env, nil, "bulk", "change-priority", "high", "--filter", `{"queue":"cli.big","state":["pending"]}`)
	requireOK(t, r, "bulk change-priority in the background")
	require.Contains(t, r.stderr, fmt.Sprintf("started for about %d jobs", n), r.String())
	op := opIDPattern.FindString(r.stderr)
	require.NotEmpty(t, op, r.String())
	require.Equal(t, fmt.Sprintf("change_priority: %d affected, 0 skipped, 0 errors (bulk operation %s completed, %d processed)", n, op, n),
		strings.TrimSpace(r.stdout))
	require.Len(t, searchIDs(t, c, client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "cli.big", Priority: client.PriorityHigh},
		Limit: client.MaxSearchLimit}), n)

	r = jobbie(t, env, nil, "bulk", "show", op, "-o", "json")
	requireOK(t, r, "bulk show")
	var st client.BulkOperation
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.String())
	require.Equal(t, op, st.ID)
	require.Equal(t, client.BulkCompleted, st.Status)
	require.Equal(t, int64(n), st.Affected)
	r = jobbie(t, env, nil, "bulk", "show", op)
	requireOK(t, r, "bulk show table")
	require.Regexp(t, `STATUS\s+completed`, r.stdout)
	require.Regexp(t, fmt.Sprintf(`AFFECTED\s+%d`, n), r.stdout)

	// --no-wait: the id on stdout; show follows it to the end.
	r = jobbie(t, env, nil, "bulk", "change-priority", "critical", "--no-wait", "--filter", `{"queue":"cli.big"}`)
	requireOK(t, r, "bulk --no-wait")
	op2 := opIDPattern.FindString(r.stdout)
	require.NotEmpty(t, op2, r.String())
	require.NotEqual(t, op, op2)
	eventually(t, 20*time.Second, func() bool {
		r := jobbie(t, env, nil, "bulk", "show", op2, "-o", "json")
		var st client.BulkOperation
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &st) == nil && st.Done()
	}, "the operation finishes")
	r = jobbie(t, env, nil, "bulk", "abort", op2, "-o", "json")
	requireOK(t, r, "bulk abort of a finished operation")
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.String())
	require.Equal(t, client.BulkCompleted, st.Status)
	require.Equal(t, int64(n), st.Affected)

	// More than 1,000 ids piped in go in several requests.
	s, b := pipe(t, env, []string{"search", "--queue", "cli.big", "-o", "json"}, []string{"bulk", "change-priority", "normal", "-o", "json"})
	requireOK(t, s, "search of 10,001 jobs")
	requireOK(t, b, "bulk of 10,001 ids")
	var sum struct {
		Requests int   `json:"requests"`
		Affected int64 `json:"affected"`
		Errors   int64 `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(b.stdout), &sum), b.String())
	require.Equal(t, 11, sum.Requests)
	require.Equal(t, int64(n), sum.Affected)
	require.Empty(t, searchIDs(t, c, filter(client.SearchFilter{Queue: "cli.big", Priority: client.PriorityCritical})))

	// Another tenant's key does not find it.
	_, other := shared.tenant(t)
	r = jobbie(t, cliEnv(other.OwnerKey), nil, "bulk", "show", op)
	requireFails(t, r, "another tenant's operation", "404")
	r = jobbie(t, cliEnv(other.OwnerKey), nil, "bulk", "abort", op)
	requireFails(t, r, "another tenant's abort", "404")
}
