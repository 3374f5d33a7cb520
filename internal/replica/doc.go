// Package replica hosts a replicated state machine: hashicorp/raft for the
// log, Pebble for the state, and a group-commit pipeline that packs
// concurrent proposals into one Raft entry. The shard engine and the control
// plane both run on it; each supplies a Registry of command handlers.
//
// Durability: the Raft log is the anchor. It is fsynced before a proposal
// returns (on a majority of members in a group of several; Config.Fast
// trades that fsync away, see fastlog.go). Pebble runs without its own WAL,
// because an entry lost from Pebble is re-applied from the log on restart:
// a crash loses the memtables, and Pebble reopens at its last flush, a
// whole number of entries. Pebble records the last applied index in the
// same batch as the entry's effects, so re-applied entries at or below it
// are skipped. A snapshot flushes first, so the log Raft compacts behind a
// snapshot is never needed again.
//
// Groups: a node bootstraps a single-voter group or waits to be added by
// the leader (AddVoter); Status and Subscribe tell who leads, and IsLeader
// is true only once the leader has applied every earlier entry, which is
// what leader-only loops check. What Raft tells of contact between leader
// and followers (a follower's last contact, a leader's failing heartbeats)
// is in contact.go. Snapshots are Pebble checkpoints streamed
// as a tar, installed by one atomic ingest (snapshot.go).
//
// Admission: proposals wait in one queue per fairness key (WithFairKey;
// the shard passes the namespace) and each Raft entry takes from the keys
// in turn, so a key flooding writes gets its share of the group commit
// and the apply loop, not all of it, and over its share of the pending
// queue is refused (ErrKeyBusy) while other keys still get in (admit.go).
//
// Determinism: the leader stamps the wall clock into every entry; handlers
// read Tx.Now and never the clock or a random source.
//
// Effects (Config.Effects, off by default; the shard's groups turn it
// on): the leader runs an entry's commands before it proposes it and
// proposes the Pebble batch they built, which every member applies on the
// applied index it was evaluated on, so followers run no handler
// (effects.go). It proposes commands still while it has no other member
// or one not known to read effects (Config.EffectsReader). Entries of both
// kinds apply on every member whatever its Config.
//
// Batches commit with their records in key order (sortbatch.go): Pebble
// inserts a record next to the one before for far less than one
// elsewhere. An effects entry carries the sorted batch, so a follower
// inserts in order too. Records of one key keep their order.
//
// Store formats: a state machine names what its writes assume of the
// store (Registry.StoreFormat; the shard's engine removes keys set once
// with SingleDelete), and a node opening a store an older build wrote
// compacts it whole first (storeformat.go). Raft reads its last entries
// from a cache in front of the log (node.go).
package replica
