package client

import (
	"context"

	"github.com/jobbie/jobbie/wire"
)

// A namespace's egress allow-list: the hosts its push queues and webhooks
// may call (docs/api/namespaces.md). Its shard keeps it, not the
// namespace's record, so it has calls of its own beside GetNamespace.

func namespaceEgressPath(ns string) string { return namespacePath(ns) + "/egress" }

// GetNamespaceEgress returns namespace ns's egress allow-list
// (namespace.read): host names, "*.domain" patterns and IP addresses;
// empty (never nil) when it has none and any public host may be called.
func (c *Client) GetNamespaceEgress(ctx context.Context, ns string) ([]string, error) {
	var out wire.NamespaceEgress
	if _, err := c.do(ctx, "GET", namespaceEgressPath(ns), nil, &out); err != nil {
		return nil, err
	}
	return orNone(out.EgressAllow), nil
}

// PutNamespaceEgress replaces namespace ns's egress allow-list
// (namespace.manage) and returns it as kept: at most 64 entries, each a
// host name, a "*.domain" pattern or an IP address. Nil or empty allow
// removes the list. A bad entry is a 400 whose Field names it
// ("egress_allow[1]"), and nothing changes; a namespace on a self-hosted
// shard no node has joined is a 409.
func (c *Client) PutNamespaceEgress(ctx context.Context, ns string, allow []string) ([]string, error) {
	var out wire.NamespaceEgress
	in := struct {
		EgressAllow []string `json:"egress_allow"`
	}{allow} // nil is sent as null: none
	if _, err := c.do(ctx, "PUT", namespaceEgressPath(ns), in, &out); err != nil {
		return nil, err
	}
	return orNone(out.EgressAllow), nil
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
