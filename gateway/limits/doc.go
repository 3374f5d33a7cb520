// Package limits is what a tenant's plan allows and what keeps the
// gateway serving under abuse.
//
// Plans (plans.go): each tenant's plan from control, cached, refreshed
// in the background, pending changes applied at their time; what the
// plan tells shards (shardheaders.go) is derived once per change. Rate
// limits (ratelimit.go, bucket.go): a plan's requests_per_second and
// enqueues_per_second as token buckets, each gateway's rate its share of
// the limit by the demand the gateways tell each other over gossip
// (sync.go). Quotas (quota.go): max_payload_bytes and a hard
// monthly_executions cap refused here; max_schedules counted on the
// shards (schedules.go). The api_requests meter (meter.go) counts
// admitted requests per tenant and hour for control's ledger.
//
// Abuse (listener.go, longpoll.go): accept errors such as EMFILE are
// waited out with backoff rather than ending the serve loop; connections
// per client address and fetches waiting per key and per tenant are
// capped, the excess answered 429 with a code naming the limit. The
// console's sign-in through an identity provider, open to anyone, is
// held to a rate per client address and per tenant (signins.go).
package limits
