package client

import (
	"context"

	"github.com/jobbie/jobbie/wire"
)

// The OTLP endpoint of the client's namespace (the key's default, or
// WithNamespace's): the collector its jobs' spans are sent to
// (docs/api/namespaces.md, "OTLP endpoint"). The route works on the
// request's namespace, as the queue routes do.

const tracingPath = "/api/v1/tracing"

// GetTracing returns the OTLP endpoint of the client's namespace
// (namespace.read), "" when it names none.
func (c *Client) GetTracing(ctx context.Context) (string, error) {
	var out wire.NamespaceTracing
	if _, err := c.do(ctx, "GET", tracingPath, nil, &out); err != nil {
		return "", err
	}
	return out.OTLPEndpoint, nil
}

// SetTracing sets the OTLP endpoint of the client's namespace
// (namespace.manage) and returns it as kept: an https URL taking
// OTLP/HTTP protobuf traces (https://otel.example.com/v1/traces), held to
// the outbound rules and the namespace's egress allow-list. "" removes
// it. A bad URL is a 400 whose Field is "otlp_endpoint", and nothing
// changes.
func (c *Client) SetTracing(ctx context.Context, endpoint string) (string, error) {
	in := map[string]any{"otlp_endpoint": nil}
	if endpoint != "" {
		in["otlp_endpoint"] = endpoint
	}
	var out wire.NamespaceTracing
	if _, err := c.do(ctx, "PUT", tracingPath, in, &out); err != nil {
		return "", err
	}
	return out.OTLPEndpoint, nil
}
