package proxy

import (
	"encoding/json"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// namespaceCallTimeout bounds the gateway's own calls about a namespace
// as a whole (GET, PUT and DELETE /api/v1/namespace): deleting a big one
// takes its shard a while.
const namespaceCallTimeout = 30 * time.Second

// ShardJSON makes the gateway's own call about namespace ns to its shard
// (/api/v1/namespace, named by X-Jobbie-Shard-Namespace as every shard
// call is) with body as JSON, when it is not nil, and decodes an answer
// of status want into out, when out is not nil. A shard that cannot be reached is the usual 503; any other
// answer than want is logged and a 503 too, as the tenant's request
// cannot go on.
func (px *Proxy) ShardJSON(r *admitted.Request, ns, method string, body any, want int, out any) error {
	return px.ShardCall(r, ns, method, NamespaceShardPath, namespaceCallTimeout, body, want, out)
}

// ShardCall is ShardJSON on any path of the shard's API, within timeout.
func (px *Proxy) ShardCall(r *admitted.Request, ns, method, path string, timeout time.Duration, body any, want int, out any) error {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	req.Header.Set(wire.RequestIDHeader, r.RequestID)
	setPlanHeaders(&req.Header, r, false)
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return apierr.New(apierr.Internal, "the gateway could not encode its call to the shard")
		}
		req.Header.SetContentType("application/json")
		req.SetBody(raw)
	}
	h := px.hold(r, false)
	defer h.Close()
	p, err := px.toShard(r, ns, time.Time{}, func(p *placement) (bool, error) {
		req.Header.Set(wire.ShardNamespaceHeader, p.shardNS)
		if err := h.do(p, req, resp, time.Now().Add(timeout)); err != nil {
			return false, err
		}
		return isMoving(resp), nil
	})
	if err != nil {
		if p == nil {
			return err // no placement
		}
		return px.shardFailure(ns, r.RequestID, p, err)
	}
	if resp.StatusCode() == want {
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(resp.Body(), out); err == nil {
			return nil
		}
	}
	px.log.Error("gateway: unexpected shard answer", "method", method, "path", path, "namespace", p.shardNS,
		"status", resp.StatusCode(), "request_id", r.RequestID, "body", string(resp.Body()[:min(len(resp.Body()), 512)]))
	return apierr.Retry(apierr.Unavailable, 1, "the shard of namespace %q could not serve this request; retry shortly", ns)
}

// NamespaceShardPath is a shard's endpoint for a namespace as a whole.
const NamespaceShardPath = "/api/v1/namespace"
