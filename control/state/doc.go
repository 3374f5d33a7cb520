// Package state is the control plane's replicated state machine: the op
// table (ops.go: every command's number, name, Go types and handler, in
// one place; numbers are append-only and a command's JSON/MessagePack
// fields are the Raft log's format), the apply functions by family, the
// stored records (model.go; their JSON is the on-disk format), the
// loaders and reads that take a pebble.Reader, the key layout
// (internal/layout), and the lifecycles of moves and backups as
// transition tables (transitions.go).
//
// Apply is deterministic: time is the entry's stamp (tx.Now), ids and key
// material come in the command, and nothing here reads a clock, draws a
// random number or starts a goroutine. A refused command is a business
// error returned from its handler, and writes nothing; a storage failure
// inside a handler panics, since the state could no longer be trusted to
// match the other nodes'.
package state
