package shardclient

import (
	"bufio"
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// chunked answers size bytes of 'x' without a stated length.
func chunked(size int) func(ctx *fasthttp.RequestCtx) {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			chunk := bytes.Repeat([]byte("x"), 32<<10)
			for left := size; left > 0; left -= len(chunk) {
				if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil || w.Flush() != nil {
					return // the client hung up
				}
			}
		})
	}
}

// budget is a Budget of max bytes that records what it holds.
type budget struct {
	mu        sync.Mutex
	max, held int
}

func (b *budget) Take(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held+n > b.max {
		return errors.New("over budget")
	}
	b.held += n
	return nil
}

func (b *budget) Give(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
}

func (b *budget) holds() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

func get(path string) (*fasthttp.Request, *fasthttp.Response) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI(path)
	return req, resp
}

// A node's answer over its limit is refused as soon as that is known
// (its stated length, or the bytes that passed the limit), never asked
// again, even of a read that a lost connection would repeat, and its
// connection is not reused: the next request gets its own answer whole.
func TestAnswerOverItsLimitIsRefusedOnce(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	huge := serve(t, func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/stated":
			ctx.SetBody(make([]byte, 2*limit))
		case "/small":
			ctx.SetBodyString("ok")
		case "/fits":
			chunked(limit)(ctx)
		default:
			chunked(200 << 20)(ctx)
		}
	})
	c := newClient(t, 2*time.Second)
	rt, err := c.Route("s1", huge.addr, nil)
	require.NoError(t, err)

	for _, path := range []string{"/chunked", "/stated"} {
		req, resp := get(path)
		b := &budget{max: 4 * limit}
		a := &Answer{Max: limit, Budget: b}
		err := c.DoAnswer(rt, req, resp, time.Now().Add(10*time.Second), a)
		var f *Failure
		require.ErrorAs(t, err, &f, path)
		tl, ok := f.TooLarge()
		require.True(t, ok, "%s: %v", path, err)
		require.Equal(t, limit, tl.Limit)
		if path == "/stated" {
			require.Equal(t, 2*limit, tl.Stated, "refused on its stated length, unread")
		}
		require.Zero(t, b.holds(), "%s: nothing held after the refusal", path)
		_, owned := a.Owned()
		require.False(t, owned)
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
	}
	require.EqualValues(t, 2, huge.hits.Load(), "each asked once: a refused answer is not asked again")

	req, resp := get("/small")
	require.NoError(t, c.Do(rt, req, resp, time.Now().Add(5*time.Second)))
	require.Equal(t, "ok", string(resp.Body()), "the next request has a connection of its own")

	// An answer at the limit is whole, in a buffer of its own, charged
	// while held.
	req, resp = get("/fits")
	b := &budget{max: 4 * limit}
	a := &Answer{Max: limit, Budget: b}
	require.NoError(t, c.DoAnswer(rt, req, resp, time.Now().Add(5*time.Second), a))
	body, owned := a.Owned()
	require.True(t, owned)
	require.Len(t, body, limit)
	require.Equal(t, body, resp.Body())
	require.Equal(t, cap(body), b.holds())
	fasthttp.ReleaseResponse(resp)
	fasthttp.ReleaseRequest(req)
	a.Release()
	require.Zero(t, b.holds())
}

// An answer its budget cannot hold is refused unread past what the
// budget gave, not asked again, and leaves the budget as it was.
func TestAnswerOverItsBudgetIsRefused(t *testing.T) {
	t.Parallel()
	node := serve(t, chunked(1<<20))
	c := newClient(t, 2*time.Second)
	rt, err := c.Route("s1", node.addr, nil)
	require.NoError(t, err)
	req, resp := get("/x")
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	b := &budget{max: 256 << 10}
	err = c.DoAnswer(rt, req, resp, time.Now().Add(5*time.Second), &Answer{Max: 4 << 20, Budget: b})
	var be *BudgetError
	require.ErrorAs(t, err, &be)
	require.Zero(t, b.holds())
	require.EqualValues(t, 1, node.hits.Load())
}
