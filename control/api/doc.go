// Package api is the control plane's HTTP API (fiber): each handler
// decodes, calls the service and encodes. The operator routes check an
// operator key (operatorOnly); the internal routes admit callers by the
// roles their certificates show, and a follower forwards what only the
// leader may answer to it, whole or, for a backup download, streamed:
// both through the group's edge (internal/replica/edge, configured in
// forward.go and cluster.go), the same as a shard's.
package api
