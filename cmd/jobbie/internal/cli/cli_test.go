package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
)

// fakeAPI is a gateway stand-in for the CLI: it records search and bulk
// requests and answers them with what the test sets.
type fakeAPI struct {
	srv *httptest.Server

	mu       sync.Mutex
	searches []map[string]any
	bulks    []client.BulkRequest
	rawBulks []map[string]any
	paths    []string
	header   http.Header

	// searchReply answers the n-th search (from 0).
	searchReply func(n int, body map[string]any) (int, string)
	// bulkReply answers a bulk request.
	bulkReply func(req client.BulkRequest) (int, string)
	progress  string // the progress stream of bulk_1
	status    string // GET and DELETE /api/v1/bulk/bulk_1
}

func newFakeAPI(t *testing.T) *fakeAPI {
	t.Helper()
	f := &fakeAPI{
		searchReply: func(int, map[string]any) (int, string) { return 200, searchPage("", false) },
		bulkReply: func(req client.BulkRequest) (int, string) {
			return 200, fmt.Sprintf(`{"affected":%d,"skipped":0,"errors":0,"duration_ms":1}`, len(req.JobIDs))
		},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/jobs/search", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		f.mu.Lock()
		n := len(f.searches)
		f.searches = append(f.searches, body)
		f.header = r.Header.Clone()
		reply := f.searchReply
		f.mu.Unlock()
		status, out := reply(n, body)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	})
	mux.HandleFunc("POST /api/v1/jobs/bulk", func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req client.BulkRequest
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &req))
		require.NoError(t, json.Unmarshal(raw, &m))
		f.mu.Lock()
		f.bulks = append(f.bulks, req)
		f.rawBulks = append(f.rawBulks, m)
		f.header = r.Header.Clone()
		reply := f.bulkReply
		f.mu.Unlock()
		status, out := reply(req)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	})
	mux.HandleFunc("/api/v1/bulk/", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.header = r.Header.Clone()
		f.paths = append(f.paths, r.Method+" "+r.URL.Path)
		progress, status := f.progress, f.status
		f.mu.Unlock()
		switch r.URL.Path {
		case "/api/v1/bulk/bulk_1/progress":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, progress)
		case "/api/v1/bulk/bulk_1":
			_, _ = io.WriteString(w, status)
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"code":"not_found","message":"no such bulk operation"}}`)
		}
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) searchBodies() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.searches...)
}

func (f *fakeAPI) lastHeader() http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.header
}

func (f *fakeAPI) bulkRequests() []client.BulkRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]client.BulkRequest(nil), f.bulks...)
}

// run executes the jobbie command line args in process against f, the way
// main does, and returns stdout, stderr and the error main would print.
func (f *fakeAPI) run(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	return runJobbie(t, stdin, append(args, "--url", f.srv.URL, "--key", "k3y")...)
}

func runJobbie(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	root := &cobra.Command{Use: "jobbie"}
	root.AddCommand(Commands()...)
	control := &cobra.Command{Use: "control"}
	control.AddCommand(ControlCommands()...)
	root.AddCommand(control)
	return clitest.Run(t, root, stdin, args...)
}

// searchJob is a job as search answers with it.
func searchJob(id, queue, lastError string) string {
	le := ""
	if lastError != "" {
		le = fmt.Sprintf(`,"last_error":%q`, lastError)
	}
	return fmt.Sprintf(`{"id":%q,"queue":%q,"payload":{"n":1},"state":"dead","priority":"normal","attempt":3,
		"max_retries":2,"created_at":"2026-02-10T09:30:00Z","tags":{"tenant":"acme"},"timeline":null%s}`, id, queue, le)
}

func searchPage(cursor string, hasMore bool, jobs ...string) string {
	c := "null"
	if cursor != "" {
		c = fmt.Sprintf("%q", cursor)
	}
	return fmt.Sprintf(`{"jobs":[%s],"total":5,"total_exact":true,"cursor":%s,"has_more":%t,"duration_ms":1.5,"partial":false}`,
		strings.Join(jobs, ","), c, hasMore)
}

func TestAPIFlagsFromEnvironment(t *testing.T) {
	f := newFakeAPI(t)
	f.status = opStatus("completed")
	t.Setenv("JOBBIE_URL", f.srv.URL)
	t.Setenv("JOBBIE_KEY", "")
	t.Setenv("JOBBIE_KEY_FILE", "")
	t.Setenv("JOBBIE_NAMESPACE", "")

	_, _, err := runJobbie(t, "", "search")
	require.EqualError(t, err, "no API key: pass --key or --key-file, or set $JOBBIE_KEY or $JOBBIE_KEY_FILE")

	t.Setenv("JOBBIE_KEY", "from-env")
	t.Setenv("JOBBIE_NAMESPACE", "ops")
	_, _, err = runJobbie(t, "", "search")
	require.NoError(t, err)
	require.Equal(t, "Bearer from-env", f.lastHeader().Get("Authorization"))
	require.Equal(t, "ops", f.lastHeader().Get(client.NamespaceHeader))
	require.Equal(t, "jobbie-cli", f.lastHeader().Get("User-Agent"))

	keyFile := filepath.Join(t.TempDir(), "owner.key")
	require.NoError(t, os.WriteFile(keyFile, []byte("from-file\n"), 0o600))
	_, _, err = runJobbie(t, "", "search", "--key-file", keyFile, "--namespace", "flagged")
	require.NoError(t, err)
	require.Equal(t, "Bearer from-file", f.lastHeader().Get("Authorization"), "a flag beats a variable")
	require.Equal(t, "flagged", f.lastHeader().Get(client.NamespaceHeader))

	t.Setenv("JOBBIE_KEY", "")
	t.Setenv("JOBBIE_KEY_FILE", keyFile)
	_, _, err = runJobbie(t, "", "bulk", "show", "bulk_1")
	require.NoError(t, err)
	require.Equal(t, "Bearer from-file", f.lastHeader().Get("Authorization"))

	_, _, err = runJobbie(t, "", "search", "--key", "a", "--key-file", keyFile)
	require.ErrorContains(t, err, "not both")
	_, _, err = runJobbie(t, "", "search", "--key", "a", "-o", "xml")
	require.ErrorContains(t, err, "--output must be table, json or yaml")
	_, _, err = runJobbie(t, "", "search", "--key", "a", "--url", "http://127.0.0.1:1")
	require.ErrorContains(t, err, "connection refused", "the --url flag beats $JOBBIE_URL")
}

func opStatus(status string) string {
	fin := `"2026-02-10T10:00:00Z"`
	if status == client.BulkProcessing {
		fin = "null"
	}
	return fmt.Sprintf(`{"id":"bulk_1","action":"retry","status":%q,"total":20000,"processed":20000,"affected":19990,
		"skipped":10,"errors":0,"created_at":"2026-02-10T09:30:00Z","finished_at":%s}`, status, fin)
}
