package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// Options.Console serves the console on the listener: the owner key the
// node minted signs in over HTTP for a session cookie, the session says
// there is no control plane behind it and names the namespaces served,
// and the session reads a queue the program's own client filled. Tenant
// administration answers 404, not served. Without Listen, Console is
// refused.
func TestConsoleSignsInWithTheOwnerKey(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Open(ctx, Options{Dir: t.TempDir(), Console: true, Logger: slog.New(slog.DiscardHandler)})
	require.ErrorContains(t, err, "Options.Console needs Options.Listen")

	e, err := Open(ctx, Options{Dir: t.TempDir(), Listen: "127.0.0.1:0", Console: true, Namespaces: []string{"reports"},
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer e.Close()
	_, err = e.Client().Enqueue(ctx, client.EnqueueRequest{Queue: "emails", Payload: 1})
	require.NoError(t, err)

	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	browser := &http.Client{Jar: jar, Transport: tr, Timeout: 20 * time.Second}
	base := "http://" + e.Addr()
	do := func(method, path string, body any) (int, []byte) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			require.NoError(t, err)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Jobbie-CSRF", "1")
		res, err := browser.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		out, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, out
	}

	status, body := do(http.MethodGet, "/console/", nil)
	require.Equal(t, http.StatusOK, status, "the console's page: %s", body)
	status, body = do(http.MethodGet, "/api/v1/queues/emails", nil)
	require.Equal(t, http.StatusUnauthorized, status, "no session yet: %s", body)

	status, body = do(http.MethodPost, "/console/api/session", map[string]string{"api_key": e.OwnerKey()})
	require.Equal(t, http.StatusOK, status, "sign-in: %s", body)
	var sess struct {
		Role      string `json:"role"`
		Namespace string `json:"namespace"`
		Local     *struct {
			Namespaces []string `json:"namespaces"`
		} `json:"local"`
	}
	require.NoError(t, json.Unmarshal(body, &sess))
	require.Equal(t, "owner", sess.Role)
	require.Equal(t, "default", sess.Namespace)
	require.NotNil(t, sess.Local, "the session says no control plane is behind it: %s", body)
	require.Equal(t, []string{"default", "reports"}, sess.Local.Namespaces)

	status, body = do(http.MethodGet, "/api/v1/queues/emails", nil)
	require.Equal(t, http.StatusOK, status, "the session reads the queue: %s", body)
	var q struct {
		Name   string `json:"name"`
		Counts struct {
			Pending int `json:"pending"`
		} `json:"counts"`
	}
	require.NoError(t, json.Unmarshal(body, &q))
	require.Equal(t, "emails", q.Name)
	require.Equal(t, 1, q.Counts.Pending, "the job the program enqueued: %s", body)

	status, body = do(http.MethodGet, "/api/v1/keys", nil)
	require.Equal(t, http.StatusNotFound, status, "no key administration without control: %s", body)
	status, _ = do(http.MethodDelete, "/console/api/session", nil)
	require.Equal(t, http.StatusNoContent, status)
	status, _ = do(http.MethodGet, "/api/v1/queues/emails", nil)
	require.Equal(t, http.StatusUnauthorized, status, "signed out")
}
