// Package shard is the job engine of one shard cluster: the Raft commands
// that move jobs through their lifecycle (applied deterministically to
// Pebble through internal/replica), the long-poll waiters, the leader's
// sweep loop (promotion, lease reclaim, TTL expiry), and the internal HTTP
// API the gateway proxies to. Keys are laid out by shard/keys; the job
// model and its one transition table live in shard/job.
package shard
