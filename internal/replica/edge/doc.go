// Package edge is where a Raft group hosted by internal/replica meets
// HTTP, the same for a shard's group and for control's: forwarding a
// follower's request to its leader, the status and members API, and
// joining a group. Shard and control keep only their configuration of it
// (Config: which routes a follower answers itself, who may call, where a
// member serves HTTP, what an add may ask); internal/replica itself knows
// nothing of HTTP.
//
// Forwarding (Forward, Gate, LeaderOnly). A follower proxies the whole
// request to the leader, which runs the same handler it would for a
// direct call, and the caller gets the leader's answer unchanged. Nothing
// below the HTTP layer forwards, so a deposed leader's loop that proposes
// gets replica.ErrNotLeader and stops rather than hand its work on.
//
//   - Where: a route says which node answers (Serve): the leader, any
//     node from its own state, or any node that knows a leader.
//   - Once: a forwarded request (Config.ForwardedHeader) that reaches a
//     node that does not lead gets 503 no_leader with Retry-After and the
//     leader it knows in wire.LeaderHeader; so does a request that must
//     be forwarded while no leader is known (an election).
//   - Never twice: a forward is sent once, on internal/shardclient's
//     pools, which never repeat a request themselves (a streamed one,
//     on net/http, is a read). One that could not
//     be sent (shardclient.Sent) answers 503 no_leader, which the caller
//     may simply retry; a write that was sent and got no answer answers
//     503 unavailable saying it may have been applied.
//   - Who calls: the leader judges the forwarding member's certificate,
//     and the caller's credentials stay behind; or, with
//     Config.CallerHeader, the identity the follower admitted (Gate) and
//     the caller's Authorization travel, and the leader believes that
//     header only from a member's certificate (Config.Members).
//   - After: with Config.ReadYourWrites the follower applies as far as
//     the leader had when it answered before it answers itself; Config.After
//     sees the answer first (the shard gives back the leases of a fetch
//     whose worker went away); Config.Streamed answers are streamed.
//   - A route the leader alone serves and nobody forwards (LeaderOnly):
//     a follower answers 503 no_leader naming the leader.
//
// Membership (Routes, Status, Members): GET /internal/v1/status and
// /internal/v1/members answer from this node's view (PeerStatus asks
// another member for its status); POST and DELETE go
// to the leader and map the replica's errors: an unknown member 404, a
// conflict 409, a change that did not commit in time 503, else the
// node's replication error. Config.HTTPOf says where a member serves HTTP
// (gossip for a shard, the replicated state for control), Config.CheckAdd
// what an add may ask and Config.Added what it records.
//
// Joining (Join, Removed): a node with no state asks the members it knows
// of to add it until one does or a leader reaches it; a member that lost
// its leader asks the leader whether it was removed.
package edge
