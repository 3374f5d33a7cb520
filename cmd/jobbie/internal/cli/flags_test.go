package cli

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
)

// fakeControl is a control plane over TLS for the operator commands: it
// answers the plan routes and records the key of each request.
func fakeControl(t *testing.T) (url, caFile string, keys func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "GET /control/v1/plans":
			_, _ = io.WriteString(w, `{"plans":[{"name":"free","currency":"USD","version":1,"effective_from":"2026-11-01T00:00:00Z"}]}`)
		case "PUT /control/v1/plans/bad":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"code":"bad_request","message":"currency must be three uppercase letters","field":"currency","request_id":"r1"}}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"code":"not_found","message":"no plan \"nope\"","request_id":"r2"}}`)
		}
	}))
	t.Cleanup(srv.Close)
	caFile = filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))
	return srv.URL, caFile, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
}

// The operator commands take the flags every command takes (--url, --key,
// --key-file) and their earlier spellings (--control, --operator-key-file),
// read the control plane's own variables, never the gateway's, and word
// control's refusals as its code, message and field.
func TestControlFlagsAndVariables(t *testing.T) {
	url, caFile, keys := fakeControl(t)
	for _, v := range []string{"JOBBIE_CONTROL_URL", "JOBBIE_OPERATOR_KEY", "JOBBIE_OPERATOR_KEY_FILE", "JOBBIE_CA"} {
		t.Setenv(v, "")
	}
	t.Setenv("JOBBIE_URL", "http://127.0.0.1:1")
	t.Setenv("JOBBIE_KEY", "a-gateway-key")
	key1, key2 := clitest.KeyFile(t, "op-1"), clitest.KeyFile(t, "op-2")
	missing := filepath.Join(t.TempDir(), "none")
	plans := func(args ...string) (string, error) {
		out, _, err := runJobbie(t, "", append([]string{"plans", "list"}, args...)...)
		return out, err
	}

	out, err := plans("--url", url, "--key-file", key1, "--ca", caFile)
	require.NoError(t, err)
	require.Equal(t, []string{"free", "1", "USD", "0", "2026-11-01T00:00:00Z"}, clitest.TableRows(out)["free 1"], out)
	_, err = plans("--control", url, "--operator-key-file", key2, "--ca", caFile)
	require.NoError(t, err, "the earlier spellings")
	_, err = plans("--url", url, "--key", "op-3", "--ca", caFile)
	require.NoError(t, err)
	require.Equal(t, []string{"Bearer op-1", "Bearer op-2", "Bearer op-3"}, keys())

	t.Setenv("JOBBIE_CONTROL_URL", url)
	t.Setenv("JOBBIE_CA", caFile)
	t.Setenv("JOBBIE_OPERATOR_KEY_FILE", key1)
	_, err = plans()
	require.NoError(t, err)
	t.Setenv("JOBBIE_OPERATOR_KEY", "op-4")
	_, err = plans()
	require.NoError(t, err, "a key beats a key file of the same rank")
	_, err = plans("--key-file", key2)
	require.NoError(t, err, "a flag beats a variable")
	require.Equal(t, []string{"Bearer op-1", "Bearer op-4", "Bearer op-2"}, keys())

	// Errors name the flag as it was given.
	_, err = plans("--operator-key-file", missing)
	require.ErrorContains(t, err, "--operator-key-file: open "+missing)
	_, err = plans("--key-file", missing)
	require.ErrorContains(t, err, "--key-file: open "+missing)
	_, err = plans("--key", "k", "--operator-key-file", key1)
	require.EqualError(t, err, "give --key or --operator-key-file, not both")
	_, err = plans("--ca", missing)
	require.ErrorContains(t, err, "--ca: open "+missing)
	_, err = plans("--ca", key1)
	require.EqualError(t, err, "--ca: "+key1+" holds no PEM certificate")
	_, err = plans("-o", "xml")
	require.EqualError(t, err, `--output must be table, json or yaml, not "xml"`)
	t.Setenv("JOBBIE_OPERATOR_KEY", "")
	t.Setenv("JOBBIE_OPERATOR_KEY_FILE", "")
	t.Chdir(t.TempDir())
	_, err = plans()
	require.ErrorContains(t, err, "--key-file: open jobbie-data/operator.key: ", "jobbie dev's operator key by default")
	require.Empty(t, keys(), "refused before any request")

	_, _, err = runJobbie(t, "", "plans", "show", "nope", "--key", "k")
	require.EqualError(t, err, `not_found: no plan "nope"`)
	_, _, err = runJobbie(t, `{"name":"bad","currency":"eur"}`, "plans", "put", "-", "--key", "k")
	require.EqualError(t, err, "bad_request: currency must be three uppercase letters (field currency)")
}
