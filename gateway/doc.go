// Package gateway is Jobbie's stateless front door. It authenticates API
// keys (EdDSA JWTs verified against the control plane's JWKS, with a
// revocation list kept current by polling), authorizes each request with
// the casbin model of package tenancy, resolves the request's namespace to
// the shard that holds it, and proxies job traffic (long-poll fetch
// included) to that shard over keep-alive connections. Tenant
// administration (namespaces, API keys) is served here too, by delegating
// to the control plane's internal API after the gateway has applied the
// delegation rules.
//
// Everything the hot path needs is cached in memory (verified keys, RBAC
// decisions, placements), so a proxied request costs a few map lookups and
// one round trip to the shard; the gateway keeps no state that matters, and
// any number of replicas may run side by side.
package gateway
