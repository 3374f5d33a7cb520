// Package envelope is the shard's encryption at rest: AES-256-GCM keys,
// the wrapping of one key by another (data key by namespace key, namespace
// key by the operator's master key or the tenant's key, the tenant's key by
// the master key), and the sealing of one JSON value of a job into a JSON
// string that names the key generation and the record it was sealed for.
//
// It holds no state and knows nothing of Pebble, Raft or HTTP: the service
// seals on the leader before it proposes and opens when it answers, so the
// log, the store, snapshots and backups only ever hold what Seal returns.
package envelope
