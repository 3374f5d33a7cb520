// Package gateway is Jobbie's stateless front door. It authenticates API
// keys (EdDSA JWTs verified against the control plane's JWKS, with a
// revocation list kept current by polling), authorizes each request with
// the casbin model of package tenancy, resolves the request's namespace to
// the shard that holds it, and proxies job traffic (long-poll fetch
// included) to that shard over keep-alive connections. Tenant
// administration (namespaces, API keys, roles) is served here too, by
// delegating to the control plane's internal API after the gateway has
// applied the delegation rules (grant.go: a key never grants more than it
// holds).
//
// Every public endpoint is one line of routeTable (routes.go) naming the
// RBAC action it needs. A request then goes through admit (admit.go):
// authenticate, check the body limit, pick the namespace (the key's
// default or X-Jobbie-Namespace), authorize; and then its endpoint.
//
// Everything the hot path needs is cached in memory, so a proxied request
// costs a few map lookups and one round trip to the shard:
//
//   - verified keys, by token string, until their exp; revocation is still
//     checked on every request against a list swapped in once a second,
//     and dropping a signing key from the JWKS empties the cache;
//   - RBAC decisions, by (role, tenant, namespace, action);
//   - a tenant's custom roles (rolecache.go), for keys that carry one: one
//     version of them with its casbin policies, decisions and queue
//     scopes, replaced when the revocation list shows a newer version or
//     this gateway changed them. A custom role is checked on the queue a
//     path names, and its queues go to the shard in X-Jobbie-Queue-Scope;
//     built-in roles never look at it.
//   - placements, by (tenant, namespace), for PlacementTTL; a missing
//     namespace or a failed shard is looked up again after PlacementMissTTL.
//     A shard's namespace_moving answer (a live move holds the namespace's
//     writes, or moved it away) makes the gateway ask control again and
//     send the same request where the namespace is now (moving.go).
//   - each tenant's plan (limits.go), refreshed every PlanRefreshInterval:
//     its per-second limits are token buckets (ratelimit*.go) whose rate
//     each gateway sets to its share of the limit, by the demand the
//     gateways tell each other over gossip, so together they admit the
//     limit; its quotas (quota.go) refuse payloads over the plan's size and
//     fetches past a hard monthly execution cap; its weight and
//     max_pending_jobs go to the shard on each request (shardheaders.go),
//     and a schedule create past max_schedules is refused after counting
//     the tenant's schedules on its shards (schedquota.go).
//
// Each admitted request is counted per tenant and hour (api_requests,
// usage.go) and pushed to control's usage ledger every few seconds.
//
// Under abuse the gateway keeps serving (listener.go, longpoll.go): accept
// errors such as EMFILE are waited out with backoff rather than ending the
// serve loop; connections per client address and fetches waiting per key
// and per tenant are capped, the excess answered 429 with a code naming
// the limit. A revocation list control has not confirmed within
// Config.RevocationMaxAge stops every key (503 revocations_stale): a
// gateway cut off from control serves from its caches only while its
// view of revocations is fresh. /readyz fails in both conditions.
//
// The gateway reaches control and shards only over mutual TLS, with the
// gateway certificate of Config.TLS, and admits only a control node, or a
// member of the shard a namespace is placed on, at the other end; no
// shared secret exists. A shard on the same host may be reached on a Unix
// socket instead, with no credentials. /metrics is served to scrapers'
// certificates on a port of its own (Config.MetricsAddr), never on the
// public one.
//
// The console (console.go, session.go) is served here too: its front end,
// embedded from console/dist, under /console/, and its sessions: an API
// key exchanged for a short-lived cookie that admit accepts in place of
// the key, with the key's every check and a CSRF check on mutations.
//
// The gateway keeps no state that matters, and any number of replicas may
// run side by side; only a console session is tied to the gateway process
// that issued it (its HMAC key is drawn at start).
package gateway
