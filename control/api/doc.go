// Package api is the control plane's HTTP API (fiber): each handler
// decodes, calls the service and encodes. The operator routes check an
// operator key (operatorOnly); the internal routes admit callers by the
// roles their certificates show (gate); a follower forwards what only
// the leader may answer to it, whole or, for a backup download, streamed
// (forward.go, forward_stream.go: the one place that forwards).
package api
