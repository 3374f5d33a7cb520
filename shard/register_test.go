package shard

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// fakeControlNode is a control node as registration meets it: real HTTPS
// with a control certificate of the tests' CA, admitting shards.
type fakeControlNode struct {
	url    string
	handle http.HandlerFunc

	mu   sync.Mutex
	regs []wire.ShardRegistration
}

func newFakeControlNode(t *testing.T, handle http.HandlerFunc) *fakeControlNode {
	t.Helper()
	n := &fakeControlNode{handle: handle}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var reg wire.ShardRegistration
		if err := json.NewDecoder(r.Body).Decode(&reg); err == nil {
			n.mu.Lock()
			n.regs = append(n.regs, reg)
			n.mu.Unlock()
		}
		n.handle(w, r)
	}))
	srv.Listener = tls.NewListener(srv.Listener, testCA(t).Creds(t, pkitest.Control).Server(pki.Roles(pki.RoleShard)))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	n.url = "https://" + srv.Listener.Addr().String()
	return n
}

func (n *fakeControlNode) registrations() []wire.ShardRegistration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]wire.ShardRegistration(nil), n.regs...)
}

// A registration is idempotent: a control node that loses the answer or
// fails passes it on to the next; one that takes it ends the round, and
// the same record is not sent again until it changes.
func TestRegisterMovesOnUntilAControlNodeTakesIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	lost := newFakeControlNode(t, func(w http.ResponseWriter, _ *http.Request) {
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	})
	failing := newFakeControlNode(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	taking := newFakeControlNode(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	urls := lost.url + "," + failing.url + "," + taking.url

	sig, err := b.srv.Register(t.Context(), urls, 7, "")
	require.NoError(t, err)
	require.NotEmpty(t, sig)
	require.Len(t, lost.registrations(), 1)
	require.Len(t, failing.registrations(), 1)
	got := taking.registrations()
	require.Len(t, got, 1)
	require.Equal(t, "s1", got[0].ShardID)
	require.EqualValues(t, 7, got[0].Capacity)

	again, err := b.srv.Register(t.Context(), urls, 7, sig)
	require.NoError(t, err)
	require.Equal(t, sig, again)
	require.Len(t, taking.registrations(), 1, "an unchanged record is not sent again")

	// A refusal is control's answer: it is not asked elsewhere.
	refusing := newFakeControlNode(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) })
	_, err = b.srv.Register(t.Context(), refusing.url+","+failing.url, 8, "")
	require.ErrorContains(t, err, "403")
	require.Len(t, failing.registrations(), 1)
}
