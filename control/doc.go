// Package control is Jobbie's control plane: tenants, their namespaces and
// where each is placed, API keys and the Ed25519 keys that sign them, and
// the revocation list gateways poll.
//
// State lives in a replicated state machine (internal/replica: Raft log,
// Pebble state). Every change is a command (commands_*.go, one file per
// family) whose inputs, including generated ids and key material, are fixed
// by the proposer, so handlers are deterministic. Reads come straight from
// local Pebble. The key layout is in internal/layout.
//
// An API key is a JWT (EdDSA) the control plane signs; only its metadata is
// stored, never the token, so a lost key cannot be shown again, only
// revoked and replaced. The HTTP API (docs/internal-api.md, "Control API")
// and the Go methods of Server (used by `jobbie dev`) share one
// implementation.
package control
