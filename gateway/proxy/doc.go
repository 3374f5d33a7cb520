// Package proxy sends admitted requests to the shard of their namespace.
//
// A namespace's shard comes from control (controlapi's Namespace) and is
// cached (placement.go): by (tenant, namespace) for PlacementTTL, a
// missing namespace or a failed shard for PlacementMissTTL, the last
// placement known serving on while control is away. A request goes to
// the shard's leader through internal/shardclient, which rides out
// elections; a namespace that is moving (a shard's 503
// namespace_moving) is looked up again and the same request sent where
// it is now (moving.go, toShard: the one place a request meets a shard).
//
// Forward proxies a request with the gateway's credentials and headers
// only (the client's key never leaves the gateway; the plan's headers,
// the queue scope and the request id are the gateway's), and passes the
// shard's answer back as it came. ForwardLongPoll gives a fetch a
// deadline past its wait and gives back the leases of a worker that went
// away meanwhile (release.go); ForwardStream passes an event stream on
// as the shard writes it (stream.go). ShardJSON and ShardCall are the
// gateway's own calls to a namespace's shard, for tenant administration
// and the schedule count. Every answer is bounded, and a tenant's
// self-hosted nodes are held to a share of the gateway (answers.go).
package proxy
