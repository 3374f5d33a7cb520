package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"time"

	"github.com/jobbie/jobbie/client"
)

// stdTransport uses net/http with the SDK's tuned transport. It costs the
// load generator about twice the CPU per call of fastTransport and
// allocates per call; it is there to compare the two.
type stdTransport struct {
	hc      *http.Client
	base    string
	headers http.Header
}

func newStdTransport(base string, headers []header, conns int, tc *tls.Config) *stdTransport {
	tr := client.NewTransport()
	tr.TLSClientConfig = tc
	tr.MaxIdleConnsPerHost = conns
	tr.MaxIdleConns = conns
	h := http.Header{}
	for _, kv := range headers {
		h.Set(kv.key, kv.value)
	}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "jobbie-bench")
	return &stdTransport{hc: &http.Client{Transport: tr}, base: base, headers: h}
}

func (t *stdTransport) newCaller() caller { return &stdCaller{t: t} }

func (t *stdTransport) close() { t.hc.CloseIdleConnections() }

type stdCaller struct {
	t   *stdTransport
	rd  bytes.Reader
	buf bytes.Buffer
}

func (c *stdCaller) post(ctx context.Context, path, suffix string, body []byte, timeout time.Duration) (reply, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c.rd.Reset(body)
	req, err := http.NewRequestWithContext(ctx, "POST", c.t.base+path+suffix, &c.rd)
	if err != nil {
		return reply{}, err
	}
	req.Header = c.t.headers // read-only; the transport never writes to it
	resp, err := c.t.hc.Do(req)
	if err != nil {
		return reply{}, err
	}
	c.buf.Reset()
	_, err = c.buf.ReadFrom(io.LimitReader(resp.Body, 64<<20))
	_ = resp.Body.Close()
	if err != nil {
		return reply{}, err
	}
	return reply{
		status:     resp.StatusCode,
		body:       c.buf.Bytes(),
		retryAfter: parseRetryAfter([]byte(resp.Header.Get("Retry-After"))),
	}, nil
}
