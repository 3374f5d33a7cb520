// Package live is what one shard node keeps in memory and never
// replicates: the fetches parked in long-polls (Waiters, which the engine
// wakes after a commit), the SSE streams reading the event log and their
// nudges (Events), the workers seen (Workers) with their news for a
// waiting fetch (cancels.go) and the node's metrics. Its
// observers stage what they saw during a Raft entry's apply and publish it
// once the entry commits.
package live
