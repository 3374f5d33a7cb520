package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// shardTransport carries a client's requests to the node's socket and
// does there what a gateway's proxy does on the way to a shard: the
// namespace the client asked for (X-Jobbie-Namespace, else the default)
// becomes the shard's namespace key, and no X-Jobbie-* header of the
// client's (a queue scope, plan limits, another namespace key) reaches
// the node, which takes those from its gateway alone. Nothing is
// authenticated: the socket is private to the data directory's owner,
// and the program holding the node may read that directory anyway.
type shardTransport struct {
	http      *http.Transport
	tenant    string // the shard namespace key's tenant part
	namespace string // the default namespace
}

func newShardTransport(sock, tenant, namespace string) *shardTransport {
	var d net.Dialer
	return &shardTransport{tenant: tenant, namespace: namespace, http: &http.Transport{
		// No proxy (an HTTP_PROXY of the environment must not take the
		// node's requests), and as many idle connections as long-polls.
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 1024,
		IdleConnTimeout:     90 * time.Second,
	}}
}

func (t *shardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ns := r.Header.Get(wire.NamespaceHeader)
	if ns == "" {
		ns = t.namespace
	}
	if err := tenancy.ValidateNamespace(ns); err != nil {
		closeBody(r)
		return refusal(r, wire.NamespaceHeader, err.Error()), nil
	}
	out := r.Clone(r.Context())
	for k := range out.Header {
		if strings.HasPrefix(k, "X-Jobbie-") {
			delete(out.Header, k)
		}
	}
	out.Header.Del("Authorization")
	out.Header.Set(wire.ShardNamespaceHeader, tenancy.ShardNamespace(t.tenant, ns))
	return t.http.RoundTrip(out)
}

func closeBody(r *http.Request) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
}

// refusal is the 400 a gateway gives for a malformed header, in the API's
// error shape, so the client reports it as it would the hosted service's.
func refusal(r *http.Request, field, msg string) *http.Response {
	body, _ := json.Marshal(wire.ErrorBody{Error: &wire.Error{Code: wire.CodeBadRequest, Message: msg, Field: field}})
	return &http.Response{
		Status: "400 Bad Request", StatusCode: http.StatusBadRequest, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r,
	}
}
