// Package push is the shard leader's push dispatcher: for every queue
// with push settings it leases jobs through the same service calls a
// worker makes (fetch, heartbeat, ack, fail, release, as worker
// "push:<queue>"), so the queue's concurrency, throttle, keys,
// priorities and delays hold unchanged, and delivers each by a signed
// POST to the queue's URL through internal/outbound. It runs while the
// node leads and stops when it does not; leases it held run out (or are
// released) and the next leader delivers them again.
package push
