package bench

import (
	"context"
	"crypto/tls"
	"time"

	"github.com/valyala/fasthttp"
)

// fastTransport is the default transport: valyala/fasthttp with one
// reused request and response per caller, so a call allocates (almost)
// nothing. It ignores the context; every call is bounded by its timeout.
type fastTransport struct {
	client  *fasthttp.Client
	base    string
	headers []header
}

func newFastTransport(base string, headers []header, conns int, tc *tls.Config) *fastTransport {
	return &fastTransport{
		client: &fasthttp.Client{
			Name:                   "jobbie-bench",
			MaxConnsPerHost:        conns,
			DisablePathNormalizing: true,
			TLSConfig:              tc,
		},
		base:    base,
		headers: headers,
	}
}

func (t *fastTransport) newCaller() caller {
	return &fastCaller{t: t, req: fasthttp.AcquireRequest(), resp: fasthttp.AcquireResponse()}
}

func (t *fastTransport) close() { t.client.CloseIdleConnections() }

type fastCaller struct {
	t    *fastTransport
	req  *fasthttp.Request
	resp *fasthttp.Response
	url  []byte
}

func (c *fastCaller) post(_ context.Context, path, suffix string, body []byte, timeout time.Duration) (reply, error) {
	c.url = append(append(append(c.url[:0], c.t.base...), path...), suffix...)
	req := c.req
	req.Reset()
	req.SetRequestURIBytes(c.url)
	req.Header.SetMethod("POST")
	req.Header.SetContentType("application/json")
	for _, h := range c.t.headers {
		req.Header.Set(h.key, h.value)
	}
	req.SetBodyRaw(body)
	c.resp.Reset()
	if err := c.t.client.DoTimeout(req, c.resp, timeout); err != nil {
		return reply{}, err
	}
	return reply{
		status:     c.resp.StatusCode(),
		body:       c.resp.Body(),
		retryAfter: parseRetryAfter(c.resp.Header.Peek("Retry-After")),
	}, nil
}
