package outbound

import (
	"fmt"
	"io"
	"net/http"
	"sync"
)

// HTTPClient is an *http.Client for a library that makes its own
// requests (an OpenID Connect relying party's discovery, token, JWKS and
// userinfo calls) under the same rules as Do: CheckURL on every request,
// the addresses checked at dial time, tenant's in-flight bound (a slot
// held until the answer's body is closed), redirects not followed (the
// 3xx is the answer), Config.Timeout per request, and a body longer than
// Config.MaxBody an error rather than silently cut.
func (c *Client) HTTPClient(tenant string) *http.Client {
	return &http.Client{
		Transport:     &tenantTransport{c: c, tenant: tenant},
		Timeout:       c.cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

type tenantTransport struct {
	c      *Client
	tenant string
}

func (t *tenantTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := CheckURL(req.URL.String(), nil); err != nil {
		closeBody(req)
		return nil, &Error{Kind: KindRefused, Tenant: t.tenant, Err: err}
	}
	ctx := req.Context()
	release, err := t.c.slots.acquire(ctx, t.tenant)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	req = req.Clone(ctx) // a RoundTripper must not change its caller's request
	req.Header.Set("User-Agent", t.c.cfg.UserAgent)
	res, err := t.c.transport.RoundTrip(req)
	if err != nil {
		release()
		return nil, classify(ctx, t.tenant, req.URL.Hostname(), err)
	}
	res.Body = &boundedBody{rc: res.Body, left: t.c.cfg.MaxBody, max: t.c.cfg.MaxBody, host: req.URL.Hostname(), release: release}
	return res, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// boundedBody reads at most left bytes, then fails; closing it gives the
// tenant's slot back, once.
type boundedBody struct {
	rc      io.ReadCloser
	left    int64
	max     int64
	host    string
	release func()
	once    sync.Once
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("outbound: %s answered a body over %d bytes", b.host, b.max)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error {
	b.once.Do(b.release)
	return b.rc.Close()
}
