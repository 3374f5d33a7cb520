package controlclient

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

type pong struct {
	Node string `json:"node"`
}

// The client sends no secret: control knows the caller by its
// certificate, and the request id travels with the request.
func TestTheCallerIsKnownByItsCertificate(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	n := newNode(t, ca, pkitest.Control, answer(http.StatusOK, pong{Node: "c1"}))
	c := newClient(t, ca, n.srv.URL+"/", time.Second)

	var got pong
	require.NoError(t, c.JSON(t.Context(), http.MethodPost, "/internal/v1/x", "req_1", map[string]int{"a": 1}, http.StatusOK, &got))
	require.Equal(t, "c1", got.Node)
	seen := n.last(t)
	require.Equal(t, pkitest.Gateway, seen.Peer)
	require.Empty(t, seen.Authorization)
	require.Equal(t, "req_1", seen.RequestID)
	require.JSONEq(t, `{"a":1}`, seen.Body)
	require.Equal(t, "/internal/v1/x", seen.Path, "the base's trailing slash is dropped")
}

// A server whose certificate is not control's (a shard's at control's
// address) is never sent a request.
func TestRefusesAServerThatIsNotControl(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	impostor := newNode(t, ca, pkitest.Shard("s1", "n1"), answer(http.StatusOK, pong{}))
	c := newClient(t, ca, impostor.srv.URL, time.Second)
	_, err := c.Do(t.Context(), http.MethodGet, "/control/v1/jwks", "", nil)
	require.Error(t, err)
	_, err = c.Open(t.Context(), "/internal/v1/download", "")
	require.Error(t, err)
	require.Zero(t, impostor.count(), "the impostor never saw a request")
}

// A node that cannot be reached is passed over, the node that answered is
// asked first from then on, and the failed one goes last for a while.
func TestUnreachableNodesArePassedOverAndTheAnswerRemembered(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	a := newNode(t, ca, pkitest.Control, answer(http.StatusOK, pong{Node: "a"}))
	b := newNode(t, ca, pkitest.Control, answer(http.StatusOK, pong{Node: "b"}))
	c := newClient(t, ca, deadURL(t)+","+a.srv.URL+","+b.srv.URL, time.Second)

	for _, method := range []string{http.MethodGet, http.MethodPost} {
		var got pong
		require.NoError(t, c.JSON(t.Context(), method, "/x", "", nil, http.StatusOK, &got), method)
		require.Equal(t, "a", got.Node, "a connection that could not be made carried nothing: %s moves on", method)
	}
	require.Equal(t, []string{a.srv.URL, b.srv.URL}, c.candidates()[:2], "the node that answered first, the dead one last")
	require.Equal(t, 2, a.count())
	require.Zero(t, b.count())
}

// 503 no_leader promises the request was not applied: the next node is
// asked, reads and writes alike, and the one that refused goes last.
func TestNoLeaderMovesOnToTheNextNode(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	a := newNode(t, ca, pkitest.Control, refuse(apierr.New(apierr.NoLeader, "electing"), "1"))
	b := newNode(t, ca, pkitest.Control, answer(http.StatusCreated, pong{Node: "b"}))
	c := newClient(t, ca, a.srv.URL+","+b.srv.URL, time.Second)

	var got pong
	require.NoError(t, c.JSON(t.Context(), http.MethodPost, "/x", "", map[string]int{}, http.StatusCreated, &got))
	require.Equal(t, "b", got.Node)
	require.Equal(t, 1, a.count())
	require.NoError(t, c.JSON(t.Context(), http.MethodPost, "/x", "", map[string]int{}, http.StatusCreated, &got))
	require.Equal(t, 1, a.count(), "b answered last: asked first")

	// Every node without a leader: the last 503 is the answer.
	b.setHandler(refuse(apierr.New(apierr.NoLeader, "electing"), "2"))
	r, err := c.Do(t.Context(), http.MethodPost, "/x", "", map[string]int{})
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, r.Status)
	require.Equal(t, "1", r.Header.Get("Retry-After"), "a's answer, asked after b")
}

// A 503 that does not promise the request was not applied (a store away,
// say) ends a write there; a read moves on.
func TestOtherUnavailableAnswersMoveOnForReadsOnly(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	a := newNode(t, ca, pkitest.Control, refuse(apierr.New(apierr.Unavailable, "store away"), "3"))
	b := newNode(t, ca, pkitest.Control, answer(http.StatusOK, pong{Node: "b"}))
	c := newClient(t, ca, a.srv.URL+","+b.srv.URL, time.Second)

	r, err := c.Do(t.Context(), http.MethodPost, "/x", "", map[string]int{})
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, r.Status, "a write is answered by the node that took it")
	require.Zero(t, b.count())

	c = newClient(t, ca, a.srv.URL+","+b.srv.URL, time.Second)
	require.Equal(t, "b", readNode(t, c), "a read moves on")
}

// A write sent to a node that then gave no answer may have been applied:
// it is never sent again. A read is.
func TestAWriteSentWithoutAnswerIsNeverSentAgain(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	a := newNode(t, ca, pkitest.Control, hangUp)
	b := newNode(t, ca, pkitest.Control, answer(http.StatusOK, pong{Node: "b"}))

	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		c := newClient(t, ca, a.srv.URL+","+b.srv.URL, time.Second)
		before := a.count()
		_, err := c.Do(t.Context(), method, "/x", "", map[string]int{})
		require.Error(t, err, method)
		require.Equal(t, before+1, a.count(), method)
		require.Zero(t, b.count(), "%s was sent once, to a alone", method)
	}
	c := newClient(t, ca, a.srv.URL+","+b.srv.URL, time.Second)
	require.Equal(t, "b", readNode(t, c), "a read is asked of the next node")
}

// A node slower than Timeout is a failure of that node; the context ends
// the whole call.
func TestTimeoutsAndCancellation(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	slow := newSlowNode(t, ca)
	b := newNode(t, ca, pkitest.Control, answer(http.StatusOK, pong{Node: "b"}))
	c := newClient(t, ca, slow.srv.URL+","+b.srv.URL, 200*time.Millisecond)
	warm(t, c, b.srv.URL)
	require.Equal(t, "b", readNode(t, c))

	c = newClient(t, ca, slow.srv.URL, time.Minute)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Do(ctx, http.MethodGet, "/x", "", nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// JSON tells another status than the one wanted, with control's answer,
// from a body it cannot decode.
func TestJSONErrors(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	n := newNode(t, ca, pkitest.Control, refuse(apierr.New(apierr.NotFound, "no such tenant"), ""))
	c := newClient(t, ca, n.srv.URL, time.Second)
	err := c.JSON(t.Context(), http.MethodGet, "/internal/v1/tenants/t/plan", "", nil, http.StatusOK, &pong{})
	var se *StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusNotFound, se.Status)
	require.Equal(t, "/internal/v1/tenants/t/plan", se.Path)
	require.Contains(t, string(se.Body), "no such tenant")

	n.setHandler(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("not json")) })
	err = c.JSON(t.Context(), http.MethodGet, "/x", "", nil, http.StatusOK, &pong{})
	require.ErrorIs(t, err, ErrDecode)
	require.False(t, errors.As(err, &se))
	require.NoError(t, c.JSON(t.Context(), http.MethodGet, "/x", "", nil, http.StatusOK, nil), "nothing to decode")
}

func TestNoControlNodeKnown(t *testing.T) {
	t.Parallel()
	c := New(Config{})
	_, err := c.Do(t.Context(), http.MethodGet, "/x", "", nil)
	require.ErrorContains(t, err, "no control node known")
	_, err = c.Open(t.Context(), "/x", "")
	require.ErrorContains(t, err, "no control node known")
}

// A Repeatable client's write goes on to the next node after a lost
// answer or any 5xx, and an answer names the node that gave it.
func TestRepeatableWritesMoveOn(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	lost := newNode(t, ca, pkitest.Control, hangUp)
	failing := newNode(t, ca, pkitest.Control, refuse(apierr.New(apierr.Internal, "boom"), ""))
	b := newNode(t, ca, pkitest.Control, answer(http.StatusOK, pong{Node: "b"}))
	c := New(Config{URL: lost.srv.URL + "," + failing.srv.URL + "," + b.srv.URL, Repeatable: true, Timeout: time.Second,
		TLS: ca.Creds(t, pkitest.Gateway).Client(pki.Roles(pki.RoleControl))})
	t.Cleanup(c.Close)
	var got pong
	require.NoError(t, c.JSON(t.Context(), http.MethodPost, "/x", "", map[string]int{}, http.StatusOK, &got))
	require.Equal(t, "b", got.Node)
	require.Equal(t, 1, lost.count())
	require.Equal(t, 1, failing.count())

	// A 4xx is the answer: control refused it, and would everywhere.
	b.setHandler(refuse(apierr.New(apierr.Forbidden, "no"), ""))
	c = New(Config{URL: b.srv.URL + "," + failing.srv.URL, Repeatable: true, Timeout: time.Second,
		TLS: ca.Creds(t, pkitest.Gateway).Client(pki.Roles(pki.RoleControl))})
	t.Cleanup(c.Close)
	err := c.JSON(t.Context(), http.MethodPost, "/x", "", map[string]int{}, http.StatusOK, nil)
	var se *StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusForbidden, se.Status)
	require.Equal(t, b.srv.URL, se.URL, "the error names the node that answered")
	require.Equal(t, 1, failing.count(), "not asked again")
}

// A write carrying an Idempotency-Key is sent again, with its key, to the
// next node after a lost answer or a 5xx, as a Repeatable client's
// writes are: control answers its repeat with the first answer.
func TestKeyedWritesMoveOn(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	lost := newNode(t, ca, pkitest.Control, hangUp)
	failing := newNode(t, ca, pkitest.Control, refuse(apierr.New(apierr.Unavailable, "leadership lost"), "1"))
	b := newNode(t, ca, pkitest.Control, answer(http.StatusOK, pong{Node: "b"}))
	c := newClient(t, ca, lost.srv.URL+","+failing.srv.URL+","+b.srv.URL, time.Second)
	key := http.Header{}
	key.Set(wire.IdempotencyKeyHeader, "k-1")
	r, err := c.DoWith(t.Context(), http.MethodPost, "/x", "", key, map[string]int{})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, 1, lost.count())
	require.Equal(t, 1, failing.count())
	require.Equal(t, "k-1", b.last(t).IdempotencyKey)
}
