// Package gateway is Jobbie's stateless front door. It authenticates API
// keys (EdDSA JWTs verified against the control plane's JWKS, with a
// revocation list kept current), authorizes each request with the casbin
// model of package tenancy and the tenant's custom roles, applies the
// tenant's plan (rate limits shared among the gateways, quotas), and
// proxies job traffic, long-poll fetches and event streams included, to
// the shard that holds the request's namespace. Tenant administration,
// the console and self-hosted shards' tunnels are served here too. A
// self-hosted shard node runs the same gateway as its local API, judging
// keys by the trust bundle the hosted gateways push it.
//
// The package holds the Server (Config, New, Start, Stop), the assembly
// of its parts, and the route table (routes.go): one row per public
// endpoint with the RBAC action and every check it passes, run in one
// order by its handler (admitted.go). The parts are packages of one
// concern each behind one Go interface to control (controlapi.Control):
// admission, limits, proxy, admin, console and selfhosted. DESIGN.md
// maps them, with what each may import, the path of a request through
// them, and where each is tested.
//
// Everything the hot path needs is cached in memory (verified keys, RBAC
// decisions, placements, plans), so a proxied request costs a few map
// lookups and one round trip to the shard. The gateway reaches control
// and shards only over mutual TLS with the gateway certificate of
// Config.TLS, and admits only a control node, or a member of the shard a
// namespace is placed on, at the other end; no shared secret exists. A
// revocation list control has not confirmed within Config.RevocationMaxAge
// stops every key (503 revocations_stale): a gateway cut off from control
// serves from its caches only while its view of revocations is fresh.
//
// The gateway keeps no state that matters, and any number of replicas may
// run side by side; only a console session is tied to the gateway process
// that issued it.
package gateway
