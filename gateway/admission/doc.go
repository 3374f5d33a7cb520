// Package admission decides who a request is and what it may do.
//
// Authentication: API keys are EdDSA JWTs verified against control's
// JWKS (jwks.go) and cached by token until they expire
// (authenticator.go); a revocation list, polled, says which keys, rotated
// secrets and retiring signing keys no longer count (revocations.go),
// and refuses every key once it is older than its freshness bound; the
// keys admitted are reported to control for their last_used_at
// (keyuse.go). A console session (sessions.go), a short-lived cookie
// issued for a key, is admitted as that key, with the key's every check
// and a CSRF check on mutations.
//
// Authorization: built-in roles are decided by the casbin model of
// package tenancy, the decisions cached (rbac.go); a key of a custom role
// is judged by its tenant's current roles (roles.go), on the queue a path
// names and, for routes about queues, with the queues it may act on sent
// to the shard. A key never grants more than it holds (grant.go).
//
// Gate is the package's one door: Admit runs a request's chain
// (admit.go), and the rest of the gateway asks it the questions of
// authorization that tenant administration and the console need.
package admission
