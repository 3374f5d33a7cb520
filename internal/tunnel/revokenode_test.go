package tunnel

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// A node revoked alone is cut off at once (a request in flight ends),
// unreachable and refused when it comes back, while the other nodes of
// its shard stay connected and serve, and a new node of the shard is
// still admitted.
func TestRevokeNode(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	h := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0")
	held := make(chan struct{})
	n1, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n1")), h.addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(held)
		<-r.Context().Done() // a long-poll, ended by the revocation
	}))
	n2, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n2")), h.addr, answer("n2"))
	waitAgent(t, n1, "connected", connected)
	waitAgent(t, n2, "connected", connected)
	waitRegistry(t, h.Registry, "registered n1 and n2", func() bool { return len(h.Sessions()) == 2 })
	inflight := make(chan error, 1)
	go func() {
		resp, err := nodeClient(t, h.Registry, "s1", "n1").Get("http://node/fetch")
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
		}
		inflight <- err
	}()
	<-held

	h.RevokeNode("s1", "n1")
	require.Error(t, <-inflight, "a request in flight ends with the revoked session")
	require.False(t, h.Connected("s1", "n1"))
	_, err := h.DialContext(context.Background(), "s1", "n1")
	require.ErrorIs(t, err, ErrRevoked)
	st := waitAgent(t, n1, "refused after revocation", func(st AgentState) bool { return st.FailedAttempts >= 2 && !st.Connected })
	require.Contains(t, st.LastError, "did not admit")
	require.False(t, h.Connected("s1", "n1"))

	require.True(t, h.Connected("s1", "n2"), "the shard's other node stays")
	status, body := get(t, nodeClient(t, h.Registry, "s1", "n2"), "http://node/")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "n2", body)
	n3, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n3")), h.addr, answer("n3"))
	waitAgent(t, n3, "connected", connected)
	// The agent may hear it is admitted before the registry lists it.
	waitRegistry(t, h.Registry, "n3 registered beside n2", func() bool { return len(h.Sessions()) == 2 })
	require.Equal(t, []string{"s1", "s1"}, shardsOf(h.Sessions()))
	require.True(t, n2.State().Connected)
}
