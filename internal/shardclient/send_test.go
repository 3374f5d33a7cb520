package shardclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/wire"
)

// Send follows a named leader with a streamed body opened afresh, since a
// node that was not the leader applied nothing of it; and a write that
// reached a node and got no answer is not sent again.
func TestSendReopensTheBodyOnlyWhenNothingWasApplied(t *testing.T) {
	t.Parallel()
	leader := serve(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetBody(ctx.PostBody())
	})
	follower := serve(t, func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.Set(wire.LeaderHeader, leader.addr)
		ctx.SetStatusCode(fasthttp.StatusMisdirectedRequest)
	})
	c := newClient(t, time.Second)
	rt, err := c.Route("s1", follower.addr, nil)
	require.NoError(t, err)
	var opens atomic.Int32
	body := func() (io.ReadCloser, error) {
		opens.Add(1)
		return io.NopCloser(bytes.NewReader([]byte("payload"))), nil
	}
	for _, keep := range []bool{false, true} {
		st, err := c.Send(context.Background(), rt, Request{Method: http.MethodPost, Path: "/internal/v1/restore", Body: body, KeepAlive: keep})
		require.NoError(t, err)
		got, err := io.ReadAll(st.Resp.Body)
		st.Close()
		require.NoError(t, err)
		require.Equal(t, "payload", string(got))
	}
	require.EqualValues(t, 3, opens.Load(), "the follower's refusal, then the leader twice")
	require.EqualValues(t, 1, follower.hits.Load(), "the route then goes to the leader")

	lost := hangUp(t)
	rt, err = c.Route("s2", lost.addr, []string{leader.addr})
	require.NoError(t, err)
	once := false
	_, err = c.Send(context.Background(), rt, Request{Method: http.MethodPost, Path: "/x", KeepAlive: true, Body: func() (io.ReadCloser, error) {
		if once {
			return nil, errors.New("opened twice")
		}
		once = true
		return io.NopCloser(bytes.NewReader([]byte("x"))), nil
	}})
	var f *Failure
	require.ErrorAs(t, err, &f)
	require.True(t, f.Sent)
	require.EqualValues(t, 1, lost.hits.Load())
}
