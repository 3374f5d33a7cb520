// Package leader runs the shard's leader-only loops: on every tick, while
// this node leads, the sweep proposes what came due (scheduled and
// retrying jobs to promote, expired leases to reclaim, TTLs to expire,
// finished jobs to prune, cron runs to fire) and the bulk loop takes the
// next step of background bulk operations. Every command they propose is
// re-checked by its handler against the state and the entry's clock, so a
// loop racing a leader change, a worker's ack or a repeated tick does no
// harm. The loops decide when; shard/service and shard/engine decide
// what. Follow is the same rule for the leader's fleets of workers (a
// push runner per push queue, a webhook runner per endpoint): they run
// while this node leads, and stop within a rescan once it does not.
package leader
