// Package keys is the shard's Pebble key layout. On-disk format: never
// change an existing encoding; add new kinds instead.
//
// Every job key starts with the shard namespace ("<tenant id>/<namespace>")
// and a 0x00 separator, so a namespace is one contiguous key range that can
// be scanned, exported or deleted by prefix and never mixes with another.
// Integers are big-endian so byte order is numeric order. Job ids are
// fixed-length, so they can follow a variable part and still be parsed.
//
//	<ns> 00 'j' <job id>                                 job record
//	<ns> 00 'p' <queue> 00 <prio 1B> <created 8B> <id>   pending, fetch order
//	<ns> 00 'd' <due 8B> <id>                            scheduled/retrying, promotion order
//	<ns> 00 'l' <lease expiry 8B> <id>                   active, reclaim order
//	<ns> 00 'x' <expire at 8B> <id>                      TTL, expiry order
//	<ns> 00 'u' <queue> 00 <unique key>                  unique lock
//	<ns> 00 'q' <queue>                                  queue record
//	<ns> 00 'Y' <queue>                                  the queue's payload schema (canonical JSON), while it has one
//	<ns> 00 's' <schedule id>                            cron schedule record
//	<ns> 00 'N' <schedule name>                          schedule name → id, as earlier versions wrote it (read, never written)
//	<ns> 00 'Q' <schedule name> 00 <queue>               schedule name in its queue → id (names are unique per queue)
//	<ns> 00 'R' <next run 8B> <schedule id>              enabled schedules, firing order
//	<ns> 00 'r' <prune at 8B> <id>                       completed/cancelled, retention order
//	<ns> 00 'D' <scope> 00 <dead at 8B> <id>             dead jobs; scope "" = all, else the queue
//	<ns> 00 'b' <batch id>                               batch record
//	<ns> 00 'B' <batch id> 00 <job id>                   a counted batch member; value 's' or 'f'
//	<ns> 00 'e' <dependency id> <dependent id>           reverse dependency edge
//	<ns> 00 'S' <state 1B> <queue> 00 <created 8B> <id>  search: jobs by state and queue (states without a per-queue index)
//	<ns> 00 'T' <tag key> 00 <value> 00 <created 8B> <id> search: jobs by tag
//	<ns> 00 'A' <batch id> 00 <created 8B> <id>          search: jobs of a batch
//	<ns> 00 'C' <chain id> 00 <step 2B> <id>             the step jobs of a chain, in step order
//	<ns> 00 'o' <bulk operation id>                      background bulk operation
//	<ns> 00 'y' <prune at 8B> <batch or bulk id>         finished batch and bulk records, retention order
//	<ns> 00 'c'                                          the namespace's settings (its retention)
//	<ns> 00 'W'                                          the namespace's encryption record (its keys, wrapped)
//	<ns> 00 'f' <queue> 00 <prio 1B> <fairness key> 00 <concurrency key> 00 <created 8B> <id>
//	                                                     pending jobs with a key: fetch order per (fairness, concurrency) group
//	<ns> 00 'g' <queue> 00 <prio 1B> <fairness key> 00 <concurrency key>
//	                                                     a group with pending jobs (present while it has any)
//	<ns> 00 'k' <queue> 00 <concurrency key>             a concurrency key's jobs; value: active, pending (uvarints)
//	<ns> 00 'P'                                          the namespace's unfinished jobs (uvarint)
//	<ns> 00 't' <queue> 00 <res 1B> <start 8B>           a queue's history bucket (history.go)
//	<ns> 00 'm' / 'J' / 'G' ...                          AI usage counters, a job's AI usage, budgets (ai.go)
//	01 'n' <ns>                                          registry of namespaces on this shard
//	01 'U' <hour 8B> <ns>                                usage meters of ns in the UTC hour starting then
//	01 'G' <ns>                                          usage: ns's stored-bytes gauge
//	01 'M'                                               usage: the metering clock (on since, last sweep)
//	01 'X' <ns>                                          a restore into ns is running (value: its token)
//	01 'F' <ns>                                          ns is fenced for a move (value: until 8B, the move's token)
//	01 'W' <ns>                                          ns moved to another shard (value: that shard's id)
package keys

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// JobIDLen is the length of every job id: "job_" and a 26-character ULID.
const JobIDLen = 30

// ScheduleIDLen is the length of every schedule id: "sch_" and a ULID. It
// equals JobIDLen, so the time-index helpers (Timed, ParseTimed) serve the
// schedule run index too.
const ScheduleIDLen = JobIDLen

// Kind bytes, on-disk format.
const (
	KindJob     byte = 'j'
	KindPending byte = 'p'
	KindDue     byte = 'd'
	KindLease   byte = 'l'
	KindExpire  byte = 'x'
	KindUnique  byte = 'u'
	KindQueue   byte = 'q'

	KindSchedule          byte = 's'
	KindScheduleName      byte = 'N' // ScheduleName: the index of earlier versions, names unique per namespace
	KindScheduleQueueName byte = 'Q' // ScheduleQueueName: names unique per queue
	KindScheduleRun       byte = 'R' // a time index: Timed(ns, KindScheduleRun, next run, id)

	KindPrune byte = 'r' // a time index: Timed(ns, KindPrune, prune at, id)
	KindDead  byte = 'D'

	KindBatch       byte = 'b'
	KindBatchMember byte = 'B'
	KindDependent   byte = 'e'

	KindStateIndex byte = 'S'
	KindTag        byte = 'T'
	KindBatchIndex byte = 'A'
	KindChainStep  byte = 'C' // ChainStep: a chain's step jobs, in step order
	KindBulkOp     byte = 'o'

	KindRecordPrune byte = 'y' // RecordPruneEntry: batch and bulk operation records, by prune time

	KindNamespaceConfig byte = 'c' // NamespaceConfig: the namespace's own settings
	KindSigningKeys     byte = 'w' // SigningKeys: the namespace's webhook signing keys
	KindWebhook         byte = 'h' // Webhook: one lifecycle webhook endpoint, by id
	KindWebhookDelivery byte = 'H' // WebhookDelivery: an endpoint's delivery log, by attempt number

	// Keyed fairness: pending jobs with a fairness or concurrency key are
	// kept out of the pending index, in groups a fetch takes turns over.
	KindKeyedPending byte = 'f'
	KindKeyedGroup   byte = 'g'
	KindKeyActive    byte = 'k'

	KindUnfinished byte = 'P' // Unfinished: the namespace's count of jobs not finished

	// Idempotency keys: a creating request's record by its key, the same
	// records by expiry (the leader's sweep and the eviction past the
	// bound walk it oldest first), and their count.
	KindIdempotency       byte = 'i' // Idempotency: one Idempotency-Key's record
	KindIdempotencyExpiry byte = 'I' // IdempotencyExpiry: the records by expiry, then key
	KindIdempotencyCount  byte = 'K' // IdempotencyCount: the namespace's count of records

	KindAlertRule byte = 'a' // AlertRule: one alert rule and its firing state, by name

	KindEncryption  byte = 'W' // Encryption: the namespace's wrapped keys and encryption settings
	KindQueueSchema byte = 'Y' // QueueSchema: a queue's payload schema, its version in the queue record
)

// Namespace returns the prefix of every key of namespace ns.
func Namespace(ns string) []byte {
	b := make([]byte, 0, len(ns)+1)
	b = append(b, ns...)
	return append(b, 0)
}

func kindPrefix(ns string, kind byte, extra int) []byte {
	b := make([]byte, 0, len(ns)+2+extra)
	b = append(b, ns...)
	return append(b, 0, kind)
}

// NamespaceConfig is the key of namespace ns's settings record. It lies
// under Namespace(ns), so a namespace purge removes it with the rest.
func NamespaceConfig(ns string) []byte { return kindPrefix(ns, KindNamespaceConfig, 0) }

// Encryption is the key of namespace ns's encryption record: its data
// key and namespace key, only ever wrapped (shard/envelope). Under
// Namespace(ns), so a backup and a move carry it with the ciphertext it
// opens, and a purge removes it.
func Encryption(ns string) []byte { return kindPrefix(ns, KindEncryption, 0) }

// Job is the key of a job record.
func Job(ns, id string) []byte {
	return append(kindPrefix(ns, KindJob, len(id)), id...)
}

// AppendJob appends the key of a job record to b.
func AppendJob(b []byte, ns, id string) []byte {
	b = append(b, ns...)
	b = append(b, 0, KindJob)
	return append(b, id...)
}

// PendingQueue is the prefix of queue's pending index.
func PendingQueue(ns, queue string) []byte {
	b := kindPrefix(ns, KindPending, len(queue)+1+9+JobIDLen)
	b = append(b, queue...)
	return append(b, 0)
}

// Pending is the pending-index key: priority first, then creation time,
// then id, so the first key of the queue prefix is the next job to fetch.
func Pending(ns, queue string, prio uint8, created int64, id string) []byte {
	b := PendingQueue(ns, queue)
	b = append(b, prio)
	b = binary.BigEndian.AppendUint64(b, uint64(created))
	return append(b, id...)
}

// TimeIndex is the prefix of a time-ordered index (KindDue, KindLease,
// KindExpire).
func TimeIndex(ns string, kind byte) []byte { return kindPrefix(ns, kind, 8+JobIDLen) }

// Timed is the key of a job in a time-ordered index.
func Timed(ns string, kind byte, at int64, id string) []byte {
	b := TimeIndex(ns, kind)
	b = binary.BigEndian.AppendUint64(b, uint64(at))
	return append(b, id...)
}

// ParseTimed splits a time-index key into its time and job id.
func ParseTimed(ns string, kind byte, key []byte) (at int64, id string, err error) {
	p := TimeIndex(ns, kind)
	if !bytes.HasPrefix(key, p) || len(key) != len(p)+8+JobIDLen {
		return 0, "", fmt.Errorf("keys: %q is not a %c index key of %s", key, kind, ns)
	}
	rest := key[len(p):]
	return int64(binary.BigEndian.Uint64(rest[:8])), string(rest[8:]), nil
}

// KeyedQueue is the prefix of queue's keyed pending index (and, with
// KindKeyedGroup, of its groups).
func KeyedQueue(ns string, kind byte, queue string) []byte {
	b := kindPrefix(ns, kind, len(queue)+1+1+64+9+JobIDLen)
	b = append(b, queue...)
	return append(b, 0)
}

// KeyedGroup is the key of a group of queue's keyed pending jobs at
// priority prio: those with fairness key fkey and concurrency key ckey.
// Keys hold no NUL, so groups sort by (fairness key, concurrency key).
func KeyedGroup(ns, queue string, prio uint8, fkey, ckey string) []byte {
	b := append(KeyedQueue(ns, KindKeyedGroup, queue), prio)
	b = append(b, fkey...)
	b = append(b, 0)
	return append(b, ckey...)
}

// KeyedPrefix is the prefix of one group's jobs in the keyed pending
// index, in fetch order (creation time, then id).
func KeyedPrefix(ns, queue string, prio uint8, fkey, ckey string) []byte {
	b := append(KeyedQueue(ns, KindKeyedPending, queue), prio)
	b = append(b, fkey...)
	b = append(b, 0)
	b = append(b, ckey...)
	return append(b, 0)
}

// KeyedPending is a keyed job's key in the keyed pending index.
func KeyedPending(ns, queue string, prio uint8, fkey, ckey string, created int64, id string) []byte {
	b := KeyedPrefix(ns, queue, prio, fkey, ckey)
	b = binary.BigEndian.AppendUint64(b, uint64(created))
	return append(b, id...)
}

// ParseKeyedGroup splits a group key of queue into its priority and keys.
func ParseKeyedGroup(ns, queue string, key []byte) (prio uint8, fkey, ckey string, err error) {
	p := KeyedQueue(ns, KindKeyedGroup, queue)
	if !bytes.HasPrefix(key, p) || len(key) < len(p)+2 {
		return 0, "", "", fmt.Errorf("keys: %q is not a keyed group of %s/%s", key, ns, queue)
	}
	rest := key[len(p)+1:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return 0, "", "", fmt.Errorf("keys: %q is not a keyed group of %s/%s", key, ns, queue)
	}
	return key[len(p)], string(rest[:i]), string(rest[i+1:]), nil
}

// KeyActive is the key of the counts of queue's active and pending jobs
// with concurrency key ckey; with ckey "" the prefix of all of them.
func KeyActive(ns, queue, ckey string) []byte {
	b := kindPrefix(ns, KindKeyActive, len(queue)+1+len(ckey))
	b = append(b, queue...)
	b = append(b, 0)
	return append(b, ckey...)
}

// Unfinished is the key of namespace ns's count of jobs not finished
// (pending, scheduled, retrying, held, active).
func Unfinished(ns string) []byte { return kindPrefix(ns, KindUnfinished, 0) }

// PendingID returns the job id at the end of a pending-index key.
func PendingID(key []byte) (string, error) {
	if len(key) < JobIDLen {
		return "", fmt.Errorf("keys: pending key too short")
	}
	return string(key[len(key)-JobIDLen:]), nil
}

// PendingOrder returns the (priority, created) sort fields of a pending key
// of queue, for comparing heads of several queues.
func PendingOrder(ns, queue string, key []byte) (prio uint8, created int64, err error) {
	p := PendingQueue(ns, queue)
	if !bytes.HasPrefix(key, p) || len(key) != len(p)+9+JobIDLen {
		return 0, 0, fmt.Errorf("keys: %q is not a pending key of %s/%s", key, ns, queue)
	}
	rest := key[len(p):]
	return rest[0], int64(binary.BigEndian.Uint64(rest[1:9])), nil
}

// Unique is the key of a unique lock.
func Unique(ns, queue, uniqueKey string) []byte {
	b := kindPrefix(ns, KindUnique, len(queue)+1+len(uniqueKey))
	b = append(b, queue...)
	b = append(b, 0)
	return append(b, uniqueKey...)
}

// Queue is the key of a queue record.
func Queue(ns, queue string) []byte {
	return append(kindPrefix(ns, KindQueue, len(queue)), queue...)
}

// QueueSchema is the key of a queue's payload schema.
func QueueSchema(ns, queue string) []byte {
	return append(kindPrefix(ns, KindQueueSchema, len(queue)), queue...)
}

// QueuePrefix is the prefix of all queue records of ns.
func QueuePrefix(ns string) []byte { return kindPrefix(ns, KindQueue, 0) }

// Schedule is the key of a schedule record.
func Schedule(ns, id string) []byte {
	return append(kindPrefix(ns, KindSchedule, len(id)), id...)
}

// SchedulePrefix is the prefix of all schedule records of ns.
func SchedulePrefix(ns string) []byte { return kindPrefix(ns, KindSchedule, ScheduleIDLen) }

// ScheduleName is the key of a schedule's name-index entry as earlier
// versions wrote it, when a name was unique in the namespace. Stores and
// snapshots written by them still hold such keys; none is written now.
func ScheduleName(ns, name string) []byte {
	return append(kindPrefix(ns, KindScheduleName, len(name)), name...)
}

// ScheduleQueueName is the key of a schedule's name-index entry: its name
// in its queue. A name holds no NUL (it has no control character), so
// every queue's schedule of one name lies under ScheduleNamePrefix.
func ScheduleQueueName(ns, name, queue string) []byte {
	b := append(kindPrefix(ns, KindScheduleQueueName, len(name)+1+len(queue)), name...)
	b = append(b, 0)
	return append(b, queue...)
}

// ScheduleNamePrefix is the prefix of the ScheduleQueueName keys of name,
// one per queue that has a schedule of that name.
func ScheduleNamePrefix(ns, name string) []byte {
	b := append(kindPrefix(ns, KindScheduleQueueName, len(name)+1), name...)
	return append(b, 0)
}

// DeadScope is the prefix of the dead index of one scope: "" lists every
// dead job of ns, a queue name only that queue's.
func DeadScope(ns, scope string) []byte {
	b := kindPrefix(ns, KindDead, len(scope)+1+8+JobIDLen)
	b = append(b, scope...)
	return append(b, 0)
}

// Dead is the dead-index key of a job in scope, in order of death.
func Dead(ns, scope string, at int64, id string) []byte {
	b := DeadScope(ns, scope)
	b = binary.BigEndian.AppendUint64(b, uint64(at))
	return append(b, id...)
}

// ParseDead splits a dead-index key of scope into its time and job id.
func ParseDead(ns, scope string, key []byte) (at int64, id string, err error) {
	p := DeadScope(ns, scope)
	if !bytes.HasPrefix(key, p) || len(key) != len(p)+8+JobIDLen {
		return 0, "", fmt.Errorf("keys: %q is not a dead index key of %s/%s", key, ns, scope)
	}
	rest := key[len(p):]
	return int64(binary.BigEndian.Uint64(rest[:8])), string(rest[8:]), nil
}

// Batch is the key of a batch record.
func Batch(ns, id string) []byte {
	return append(kindPrefix(ns, KindBatch, len(id)), id...)
}

// BatchMembers is the prefix of the counted members of a batch, in job id
// (creation) order.
func BatchMembers(ns, batchID string) []byte {
	b := kindPrefix(ns, KindBatchMember, len(batchID)+1+JobIDLen)
	b = append(b, batchID...)
	return append(b, 0)
}

// BatchMember is the key of one counted member of a batch.
func BatchMember(ns, batchID, jobID string) []byte {
	return append(BatchMembers(ns, batchID), jobID...)
}

// MemberID returns the job id at the end of a batch member key.
func MemberID(key []byte) string { return string(key[len(key)-JobIDLen:]) }

// Dependents is the prefix of the reverse edges of a dependency: every job
// that waits for it, in id order.
func Dependents(ns, dependencyID string) []byte {
	b := kindPrefix(ns, KindDependent, 2*JobIDLen)
	return append(b, dependencyID...)
}

// Dependent is the reverse edge dependency → dependent.
func Dependent(ns, dependencyID, dependentID string) []byte {
	return append(Dependents(ns, dependencyID), dependentID...)
}

// DependentID returns the dependent's id at the end of a reverse edge key.
func DependentID(key []byte) string { return string(key[len(key)-JobIDLen:]) }

// PrefixEnd returns the smallest key greater than every key with prefix p.
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// StateQueue is the prefix of the search index of one state and queue, in
// creation order.
func StateQueue(ns string, state uint8, queue string) []byte {
	b := kindPrefix(ns, KindStateIndex, 1+len(queue)+1+8+JobIDLen)
	b = append(b, state)
	b = append(b, queue...)
	return append(b, 0)
}

// StateEntry is a job's key in the search index of its state.
func StateEntry(ns string, state uint8, queue string, created int64, id string) []byte {
	b := binary.BigEndian.AppendUint64(StateQueue(ns, state, queue), uint64(created))
	return append(b, id...)
}

// TagPrefix is the prefix of the search index of one tag, in creation
// order.
func TagPrefix(ns, key, value string) []byte {
	b := kindPrefix(ns, KindTag, len(key)+1+len(value)+1+8+JobIDLen)
	b = append(b, key...)
	b = append(b, 0)
	b = append(b, value...)
	return append(b, 0)
}

// TagEntry is a job's key in the index of one of its tags.
func TagEntry(ns, key, value string, created int64, id string) []byte {
	b := binary.BigEndian.AppendUint64(TagPrefix(ns, key, value), uint64(created))
	return append(b, id...)
}

// BatchJobs is the prefix of the search index of one batch's jobs, in
// creation order.
func BatchJobs(ns, batchID string) []byte {
	b := kindPrefix(ns, KindBatchIndex, len(batchID)+1+8+JobIDLen)
	b = append(b, batchID...)
	return append(b, 0)
}

// BatchJob is a job's key in the index of its batch.
func BatchJob(ns, batchID string, created int64, id string) []byte {
	b := binary.BigEndian.AppendUint64(BatchJobs(ns, batchID), uint64(created))
	return append(b, id...)
}

// ChainSteps is the prefix of the index of one chain's step jobs, in
// step order.
func ChainSteps(ns, chainID string) []byte {
	b := kindPrefix(ns, KindChainStep, len(chainID)+1+2+JobIDLen)
	b = append(b, chainID...)
	return append(b, 0)
}

// ChainStep is the key of step's job in the index of its chain.
func ChainStep(ns, chainID string, step uint16, id string) []byte {
	b := binary.BigEndian.AppendUint16(ChainSteps(ns, chainID), step)
	return append(b, id...)
}

// StepID splits the step and job id off the end of a ChainStep key.
func StepID(key []byte) (step uint16, id string, err error) {
	if len(key) < 2+JobIDLen {
		return 0, "", fmt.Errorf("keys: %q is too short for a chain step key", key)
	}
	rest := key[len(key)-2-JobIDLen:]
	return binary.BigEndian.Uint16(rest[:2]), string(rest[2:]), nil
}

// CreatedID splits the creation time and job id off the end of a key of
// an index in creation order (StateEntry, TagEntry, Pending).
func CreatedID(key []byte) (created int64, id string, err error) {
	if len(key) < 8+JobIDLen {
		return 0, "", fmt.Errorf("keys: %q is too short for an index key", key)
	}
	rest := key[len(key)-8-JobIDLen:]
	return int64(binary.BigEndian.Uint64(rest[:8])), string(rest[8:]), nil
}

// BulkOp is the key of a background bulk operation's record.
func BulkOp(ns, id string) []byte {
	return append(kindPrefix(ns, KindBulkOp, len(id)), id...)
}

// BulkOpPrefix is the prefix of every bulk operation record of ns.
func BulkOpPrefix(ns string) []byte { return kindPrefix(ns, KindBulkOp, 0) }

// RecordPruneIndex is the prefix of the retention index of finished batch
// and bulk operation records. Their ids ("batch_…", "bulk_…") differ in
// length from job ids, so the index has its own kind rather than Timed's.
func RecordPruneIndex(ns string) []byte { return kindPrefix(ns, KindRecordPrune, 8+32) }

// RecordPruneEntry is the key of a finished record in the retention
// index: its prune time, then its id.
func RecordPruneEntry(ns string, at int64, id string) []byte {
	b := binary.BigEndian.AppendUint64(RecordPruneIndex(ns), uint64(at))
	return append(b, id...)
}

// ParseRecordPrune splits a retention index key into its time and record id.
func ParseRecordPrune(ns string, key []byte) (at int64, id string, err error) {
	p := RecordPruneIndex(ns)
	if !bytes.HasPrefix(key, p) || len(key) <= len(p)+8 {
		return 0, "", fmt.Errorf("keys: %q is not a record prune key of %s", key, ns)
	}
	rest := key[len(p):]
	return int64(binary.BigEndian.Uint64(rest[:8])), string(rest[8:]), nil
}
