// Package engine is the shard's state machine: every command's type, the
// handler that applies it, and the state helpers they share. It is
// deterministic: time is the entry's stamp (tx.Now, the leader's clock),
// and it reads no clock, draws no random number, starts no goroutine and
// knows nothing of HTTP, so every member of a shard applies a log to the
// same bytes (determinism_test.go replays random logs on two machines and
// compares them).
//
// commands.go lists every command with its number and handler in one
// table, append-only; the handlers live by family (enqueue.go, fetch.go,
// queues_apply.go, …). Only the store helpers of store.go touch indexes
// and counts, and they refuse any state change the transition table of
// package job does not list. shard/DESIGN.md has the path of an enqueue
// and of a fetch through it.
package engine
