// Package control is Jobbie's control plane node: tenants, their
// namespaces and where each is placed, API keys and the Ed25519 keys that
// sign them, plans, the usage ledger and invoices, backups and live
// moves. This package assembles a node (Config, New, Start, Stop) from
// the packages that hold each concern (DESIGN.md): state, the replicated
// state machine; billing, pure pricing; service, the operations and only
// proposer; leader, the leader's runners; api, HTTP.
//
// A Server embeds the service, so its Go methods (used by `jobbie dev`
// and the tests) are the node's; the HTTP API (docs/internal-api.md,
// "Control API") is the same implementation.
package control
