package proxy

import (
	"bytes"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/wire"
)

// Long-polls and shutdown. A fetch may wait 30 s for a job, longer than
// Kubernetes gives a stopping pod, and the HTTP shutdown would wait for
// it. So a waiting fetch runs its shard call beside the handler: when the
// gateway stops (the proxy's context ends) the worker is answered at once
// with no job, as if its wait had run out (204, or an empty batch), and
// the call is abandoned. Whatever the shard leased for it meanwhile is
// given back when the shard's answer comes (Stop waits a little for
// those answers; a shard whose caller's connection closes leases nothing
// to it).

// abandonWait bounds how long Stop waits for the shard answers of
// abandoned long-polls, to give back what they leased.
const abandonWait = 2 * time.Second

// call is one long-poll's shard call, running beside its handler. It owns
// copies of everything it reads, as the handler may return first.
type call struct {
	r    admitted.Request
	body []byte
	req  *fasthttp.Request
	resp *fasthttp.Response
	h    *hold
	err  error
	done chan struct{}
}

func (px *Proxy) longPoll(c *fiber.Ctx, r *admitted.Request, wait time.Duration) error {
	k := &call{r: detached(r), body: bytes.Clone(c.Request().Body()), req: fasthttp.AcquireRequest(),
		resp: fasthttp.AcquireResponse(), done: make(chan struct{})}
	shardRequest(c, &k.r, k.req, k.body)
	px.calls.Add(1)
	px.runners.Run(func() {
		defer close(k.done)
		k.h, k.err = px.send(&k.r, k.body, k.req, k.resp, wait, true)
	})
	select {
	case <-k.done:
		px.calls.Done()
		defer k.free()
		if k.err != nil {
			return k.err
		}
		px.releaseIfGone(c, r, answer(c, r, k.resp, k.h))
		return nil
	case <-px.ctx.Done():
		go px.abandon(k, c.Path() == "/api/v1/fetch/batch")
		return noJob(c)
	}
}

// noJob is a fetch's answer when its wait ran out empty: 204, or for a
// batch 200 with no jobs.
func noJob(c *fiber.Ctx) error {
	if c.Path() == "/api/v1/fetch/batch" {
		return c.JSON(wire.FetchBatchResponse{Jobs: []wire.FetchedJob{}})
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// abandon waits for the shard's answer to a long-poll whose worker was
// answered already, and gives back what it leased.
func (px *Proxy) abandon(k *call, batch bool) {
	defer px.calls.Done()
	defer k.free()
	<-k.done
	if k.err != nil || k.resp.StatusCode() != fasthttp.StatusOK {
		if k.h != nil {
			_ = k.h.Close()
		}
		return
	}
	body, owned := k.h.ans.Owned()
	if !owned {
		body = k.resp.Body()
	}
	if rel, ok := wire.FetchedLeases(batch, k.body, body); ok {
		px.release(&k.r, rel)
	}
	_ = k.h.Close()
}

// maxIdleRunners bounds the goroutines kept waiting to make the next
// long-poll's shard call (internal/runners: a fresh goroutine for every
// fetch grew its stack anew to write the shard request, about 1 % of
// jobbie dev's CPU with one job per call).
const maxIdleRunners = 256

func (k *call) free() {
	fasthttp.ReleaseRequest(k.req)
	fasthttp.ReleaseResponse(k.resp)
}

// Wait waits for the abandoned long-polls' shard answers, for at most
// abandonWait, once the proxy's context has ended.
func (px *Proxy) Wait() {
	done := make(chan struct{})
	go func() { px.calls.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(abandonWait):
		px.log.Warn("gateway: stopped before the shards answered every abandoned long-poll; what they leased comes back when its lease runs out")
	}
}

// detached is r with copies of the strings that may point into the
// request's memory, which fasthttp reuses once the handler returns.
func detached(r *admitted.Request) admitted.Request {
	d := *r
	d.NS = strings.Clone(r.NS)
	d.RequestID = strings.Clone(r.RequestID)
	d.Scope.Header = strings.Clone(r.Scope.Header)
	return d
}
