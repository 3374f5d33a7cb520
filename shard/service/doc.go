// Package service is the shard's operations as Go calls: each validates a
// request (a wire shape), turns it into a command of shard/engine,
// proposes it through the replica and answers with a wire shape; reads
// come from the node's own Pebble. It is what the HTTP API (shard/api)
// and the leader's loops (shard/leader) call, and what in-process tests
// and benchmarks drive. The proposer side owns everything the state
// machine may not do: reading the clock, making ids, parsing cron specs,
// and waiting (a long-poll fetch parks on shard/live's waiters).
package service
