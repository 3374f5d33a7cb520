// Package job is the job model of the shard engine: the stored record, the
// states and the one table of allowed transitions, priorities, and retry
// backoff. It is pure: no storage, no clock, no randomness.
package job
