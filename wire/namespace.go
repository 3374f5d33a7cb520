package wire

import "encoding/json"

// NamespaceUsage is GET /api/v1/namespace on a shard: what the namespace
// named by ShardNamespaceHeader holds there, and its settings there. Jobs
// counts jobs in every state. Retention is the namespace's retention as
// the shard applies it (the shortest duration string, as FormatDuration),
// or null when it sets none; EgressAllow is its egress allow-list, absent
// when it sets none; OTLPEndpoint is where its spans go, absent when it
// names none. DELETE /api/v1/namespace removes all of it,
// the settings included (204).
type NamespaceUsage struct {
	Jobs         int64           `json:"jobs"`
	Queues       int64           `json:"queues"`
	Schedules    int64           `json:"schedules"`
	Retention    json.RawMessage `json:"retention"`
	EgressAllow  []string        `json:"egress_allow,omitempty"`
	OTLPEndpoint string          `json:"otlp_endpoint,omitempty"`
}

// NamespaceSettings is the body of PUT /api/v1/namespace on a shard: the
// namespace's settings, at least one of them; one left out stays as it
// is. Retention (a duration between MinRetention and MaxRetention, or
// null for none) is how long the namespace's completed and cancelled jobs
// are kept when their queue's defaults set none; it applies to jobs
// finishing after it. EgressAllow (an array of host names, "*.domain"
// patterns or IP addresses, at most 64; null or [] for none)
// is the hosts its push queues and webhooks may call; none is any public
// host. OTLPEndpoint (an https URL, or null or "" for none) is where
// the spans of its jobs are sent as OTLP/HTTP protobuf (the traces URL
// of its collector, such as https://otel.example.com/v1/traces), held to
// the outbound rules and the egress allow-list as a push URL is. The
// answer is the NamespaceUsage.
type NamespaceSettings struct {
	Retention    json.RawMessage `json:"retention,omitempty"`
	EgressAllow  json.RawMessage `json:"egress_allow,omitempty"`
	OTLPEndpoint json.RawMessage `json:"otlp_endpoint,omitempty"`
}

// NamespaceEgressRequest is PUT /api/v1/namespaces/{name}/egress: the
// namespace's egress allow-list as a whole (null or [] for none), kept
// by its shard (NamespaceSettings.EgressAllow). It is kept as sent so
// that the shard tells null from a missing field.
type NamespaceEgressRequest struct {
	EgressAllow json.RawMessage `json:"egress_allow"`
}

// NamespaceEgress is GET and PUT /api/v1/namespaces/{name}/egress: the
// hosts the namespace's push queues and webhooks may call, empty for any
// public host.
type NamespaceEgress struct {
	EgressAllow []string `json:"egress_allow"`
}

// NamespaceTracingRequest is PUT /api/v1/tracing: the endpoint of the
// request's namespace's own OTLP collector (an https URL taking OTLP/HTTP
// protobuf traces, such as https://otel.example.com/v1/traces; null or
// "" for none), which then receives the spans of the namespace's jobs:
// send, receive and settle, in the traces their traceparents name. It is
// held to the outbound rules and the namespace's egress allow-list as a
// push URL is, when set and at every export; it is kept by the
// namespace's shard (NamespaceSettings.OTLPEndpoint). Spans are sent
// only while the operator exports traces.
type NamespaceTracingRequest struct {
	OTLPEndpoint json.RawMessage `json:"otlp_endpoint"`
}

// NamespaceTracing is GET and PUT /api/v1/tracing: where the namespace's
// spans go, "" for nowhere.
type NamespaceTracing struct {
	OTLPEndpoint string `json:"otlp_endpoint"`
}
