package controlclient

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// A streamed answer reaches the caller as the node sends it, and may
// last longer than Timeout: only its start is bounded.
func TestOpenStreamsPastTheTimeout(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	firstSeen := make(chan struct{})
	n := newNode(t, ca, pkitest.Control, func(w http.ResponseWriter, _ *http.Request) {
		f := w.(http.Flusher)
		_, _ = io.WriteString(w, "first")
		f.Flush()
		select {
		case <-firstSeen:
		case <-time.After(10 * time.Second):
			return
		}
		time.Sleep(400 * time.Millisecond) // past the timeout
		_, _ = io.WriteString(w, "-rest")
	})
	c := newClient(t, ca, n.srv.URL, 200*time.Millisecond)
	resp, err := c.Open(t.Context(), "/download", "req_9")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	first := make([]byte, len("first"))
	_, err = io.ReadFull(resp.Body, first)
	require.NoError(t, err, "the first bytes arrive while the node still holds the rest")
	close(firstSeen)
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "-rest", string(rest))
	require.Equal(t, "req_9", n.last(t).RequestID)
}

// A node that does not start answering within Timeout is passed over;
// with none left, the call fails.
func TestOpenGivesTheNodeTimeoutToStart(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	slow := newSlowNode(t, ca)
	c := newClient(t, ca, slow.srv.URL, 200*time.Millisecond)
	start := time.Now()
	_, err := c.Open(t.Context(), "/download", "")
	require.Error(t, err)
	require.Less(t, time.Since(start), 5*time.Second, "given up after the timeout, not the node's pace")

	fast := newNode(t, ca, pkitest.Control, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	c = newClient(t, ca, slow.srv.URL+","+fast.srv.URL, 200*time.Millisecond)
	warm(t, c, fast.srv.URL)
	resp, err := c.Open(t.Context(), "/download", "")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "ok", string(body))
}

// A 503 moves on to the next node; when every node answers 503, the last
// is the answer, its body read whole.
func TestOpenMovesOnFromUnavailableNodes(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	a := newNode(t, ca, pkitest.Control, refuse(apierr.New(apierr.NoLeader, "electing"), "3"))
	b := newNode(t, ca, pkitest.Control, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "backup") })
	c := newClient(t, ca, a.srv.URL+","+b.srv.URL, time.Second)
	resp, err := c.Open(t.Context(), "/download", "")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "backup", string(body))

	c = newClient(t, ca, a.srv.URL, time.Second)
	resp, err = c.Open(t.Context(), "/download", "")
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "3", resp.Header.Get("Retry-After"))
	body, _ = io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	require.True(t, strings.Contains(string(body), "no_leader"), "%s", body)
}
