// Package api is a shard node's HTTP API: it decodes each request (a wire
// shape), calls shard/service, and encodes the answer; errors go through
// the one error handler of internal/apierr. Every /api/v1 route and the
// membership changes pass through the group's edge (internal/replica/edge,
// configured in forward.go), the one place a follower hands a write to its
// leader. The routes are the gateway's public API under the same paths,
// plus /internal/v1 for the cluster.
package api
