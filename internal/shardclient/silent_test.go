package shardclient

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// A link whose node goes silent while a request waits ends: the request
// fails as sent (it may have been applied), and the next requests go on
// the pool until a new link is up.
func TestASilentLinkIsReplaced(t *testing.T) {
	t.Parallel()
	f := serveLinks(t, linkConfig{KeepAlive: 20 * time.Millisecond})
	c := newClient(t, time.Second)
	rt := linkedRoute(t, c, f.addr)
	n := rt.Current()
	conns := f.linkConns()
	require.Len(t, conns, 1)
	conns[0].freeze()

	_, err := call(t, c, rt, fasthttp.MethodPost)
	var fl *Failure
	require.ErrorAs(t, err, &fl)
	require.True(t, fl.Sent, "written on the link: it may have been applied")
	require.False(t, fl.TimedOut(), "the link ended before the request's deadline")
	require.False(t, n.Linked())

	before := f.pooled.Load()
	_, err = call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	if !n.Linked() { // a new link may already be up; otherwise it went on the pool
		require.Greater(t, f.pooled.Load(), before)
	}
	waitLinked(t, n)
	before = f.linked.Load()
	_, err = call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	require.Equal(t, before+1, f.linked.Load(), "the new link takes requests")
}
