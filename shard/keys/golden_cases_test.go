package keys

// The golden cases: every exported constructor of keys.go with fixed inputs,
// the layout it must produce, and the parse functions that must undo it. See
// golden_test.go for why and how the files are checked.

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Fixed inputs: the files must not change from run to run.
const (
	gNS      = "t_01HX3F7Q2M8V4K9N6B5C1D0E29/billing"
	gQueue   = "emails"
	gJob     = "job_01HX3F7Q2M8V4K9N6B5C1D0E2A"
	gJob2    = "job_01HX3F7Q2M8V4K9N6B5C1D0E2B"
	gSched   = "sch_01HX3F7Q2M8V4K9N6B5C1D0E2C"
	gBatch   = "batch_01HX3F7Q2M8V4K9N6B5C1D0E2D"
	gBulk    = "bulk_01HX3F7Q2M8V4K9N6B5C1D0E2E"
	gChain   = "chain_01HX3F7Q2M8V4K9N6B5C1D0E2F"
	gCreated = int64(1_700_000_000_123_456_789) // 2023-11-14T22:13:20.123456789Z
)

// kindNames spells the kind bytes out independently of the Kind constants.
var kindNames = map[byte]string{
	'j': "job record", 'p': "pending index", 'd': "due index", 'l': "lease index",
	'x': "expire index", 'u': "unique lock", 'q': "queue record", 's': "schedule record",
	'N': "schedule name", 'R': "schedule run index", 'r': "prune index", 'D': "dead index",
	'b': "batch record", 'B': "batch member", 'e': "dependent edge", 'S': "state search index",
	'T': "tag search index", 'A': "batch search index", 'o': "bulk operation", 'y': "record prune index",
	'c': "namespace settings", 'w': "signing keys", 'f': "keyed pending index", 'g': "keyed group", 'k': "key active count",
	'P': "unfinished count", 'C': "chain step index", 'Q': "schedule name in its queue",
	'v': "event", 'V': "event log floor", 'E': "event log retention", 'n': "event count", 'h': "webhook endpoint",
	'H': "webhook delivery log",
	't': "queue history bucket",
	'i': "idempotency record", 'I': "idempotency expiry index", 'K': "idempotency record count",
	'a': "alert rule", 'W': "encryption keys", 'Y': "queue schema",
	'U': "audit record", 'z': "audit retention",
	'm': "AI usage counter", 'J': "job AI usage", 'G': "AI budget",
}

func goldenFamilies() []family {
	return []family{
		{"kinds.txt", "The kind byte after the namespace separator names each key family.", kindCases()},
		{"records.txt", "Records keyed by id or name: namespace settings, jobs, queues, unique locks, schedules, batches, bulk operations.", recordCases()},
		{"pending.txt", "Pending index: a queue's fetch order is priority, then creation time, then id.", pendingCases()},
		{"time.txt", "Time indexes (due, lease, expire, schedule run, prune; record prune): time order, then id.", timeCases()},
		{"dead.txt", "Dead index, per scope (\"\" = every queue, else one queue): order of death, then id.", deadCases()},
		{"edges.txt", "Batch members and reverse dependency edges: job id order under a fixed prefix.", edgeCases()},
		{"search.txt", "Search indexes by state and queue, by tag, by batch: creation order, then id; a chain's steps: step order.", searchCases()},
		{"registry.txt", "Shard-wide namespace registry and range ends (PrefixEnd).", registryCases()},
		{"usage.txt", "Shard-wide usage metering: hourly buckets in (hour, namespace) order, stored-bytes gauges, the metering clock.", usageCases()},
		{"events.txt", "The event log: a namespace's events in sequence order, its floor; the shard-wide start.", eventCases()},
		{"audit.txt", "The audit log: a namespace's records in time order, then entry index and position; its retention.", auditCases()},
		{"history.txt", "Queue history: a queue's buckets per resolution in time order; the shard-wide start.", historyCases()},
		{"ai.txt", "AI usage: a namespace's counters in (hour, dimension, value) order, its trim mark; a job's usage; budgets by name.", aiCases()},
	}
}

func kindCases() []*gcase {
	kinds := []struct {
		name      string
		got, want byte
	}{
		{"KindJob", KindJob, 'j'}, {"KindPending", KindPending, 'p'}, {"KindDue", KindDue, 'd'},
		{"KindLease", KindLease, 'l'}, {"KindExpire", KindExpire, 'x'}, {"KindUnique", KindUnique, 'u'},
		{"KindQueue", KindQueue, 'q'}, {"KindSchedule", KindSchedule, 's'},
		{"KindScheduleName", KindScheduleName, 'N'}, {"KindScheduleRun", KindScheduleRun, 'R'},
		{"KindPrune", KindPrune, 'r'}, {"KindDead", KindDead, 'D'}, {"KindBatch", KindBatch, 'b'},
		{"KindBatchMember", KindBatchMember, 'B'}, {"KindDependent", KindDependent, 'e'},
		{"KindStateIndex", KindStateIndex, 'S'}, {"KindTag", KindTag, 'T'},
		{"KindBatchIndex", KindBatchIndex, 'A'}, {"KindChainStep", KindChainStep, 'C'}, {"KindBulkOp", KindBulkOp, 'o'},
		{"KindRecordPrune", KindRecordPrune, 'y'}, {"KindNamespaceConfig", KindNamespaceConfig, 'c'},
		{"KindKeyedPending", KindKeyedPending, 'f'}, {"KindKeyedGroup", KindKeyedGroup, 'g'},
		{"KindKeyActive", KindKeyActive, 'k'}, {"KindUnfinished", KindUnfinished, 'P'},
		{"KindScheduleQueueName", KindScheduleQueueName, 'Q'}, {"KindSigningKeys", KindSigningKeys, 'w'},
		{"KindWebhook", KindWebhook, 'h'}, {"KindWebhookDelivery", KindWebhookDelivery, 'H'},
		{"KindIdempotency", KindIdempotency, 'i'},
		{"KindIdempotencyExpiry", KindIdempotencyExpiry, 'I'}, {"KindIdempotencyCount", KindIdempotencyCount, 'K'},
		{"KindAlertRule", KindAlertRule, 'a'},
		{"KindEncryption", KindEncryption, 'W'},
		{"KindQueueSchema", KindQueueSchema, 'Y'},
		{"KindHistory", KindHistory, 't'},
	}
	c := &gcase{call: "Kind constants"}
	for _, k := range kinds {
		c.key = append(c.key, k.got)
		c.parts = append(c.parts, part{fmt.Sprintf("%s '%c' (%s)", k.name, k.want, kindNames[k.want]), []byte{k.want}})
		c.covers = append(c.covers, k.name)
	}
	return []*gcase{c}
}

func recordCases() []*gcase {
	ns, q := gNS, gQueue
	return []*gcase{
		kc("Namespace", Namespace(ns), "ns", ns).is(text("namespace", ns), sep()),
		kc("NamespaceConfig", NamespaceConfig(ns), "ns", ns).is(head(ns, 'c')),
		kc("SigningKeys", SigningKeys(ns), "ns", ns).is(head(ns, 'w')),
		kc("Encryption", Encryption(ns), "ns", ns).is(head(ns, 'W')),
		kc("Webhook", Webhook(ns, "wh_01HX3F7Q2M8V4K9N6B5C1D0E2G"), "ns", ns, "id", "wh_01HX3F7Q2M8V4K9N6B5C1D0E2G").
			is(head(ns, 'h'), text("webhook id", "wh_01HX3F7Q2M8V4K9N6B5C1D0E2G")),
		kc("WebhookPrefix", WebhookPrefix(ns), "ns", ns).is(head(ns, 'h')),
		kc("AlertRule", AlertRule(ns, "deep-emails"), "ns", ns, "name", "deep-emails").
			is(head(ns, 'a'), text("alert rule name", "deep-emails")),
		kc("AlertRulePrefix", AlertRulePrefix(ns), "ns", ns).is(head(ns, 'a')),
		kc("WebhookDeliveries", WebhookDeliveries(ns, "wh_01HX3F7Q2M8V4K9N6B5C1D0E2G"), "ns", ns, "id", "wh_01HX3F7Q2M8V4K9N6B5C1D0E2G").
			is(head(ns, 'H'), text("webhook id", "wh_01HX3F7Q2M8V4K9N6B5C1D0E2G"), sep()),
		kc("WebhookDelivery", WebhookDelivery(ns, "wh_01HX3F7Q2M8V4K9N6B5C1D0E2G", 51), "ns", ns, "id", "wh_01HX3F7Q2M8V4K9N6B5C1D0E2G", "n", 51).
			is(head(ns, 'H'), text("webhook id", "wh_01HX3F7Q2M8V4K9N6B5C1D0E2G"), sep(), be64("record number", 51)),
		kc("Idempotency", Idempotency(ns, "order-42"), "ns", ns, "key", "order-42").
			is(head(ns, 'i'), text("Idempotency-Key", "order-42")),
		kc("IdempotencyCount", IdempotencyCount(ns), "ns", ns).is(head(ns, 'K')),
		kc("Job", Job(ns, gJob), "ns", ns, "id", gJob).is(head(ns, 'j'), text("job id", gJob)),
		kc("AppendJob", AppendJob([]byte("buf:"), ns, gJob), "b", "buf:", "ns", ns, "id", gJob).
			is(text("bytes already in b", "buf:"), head(ns, 'j'), text("job id", gJob)).
			parse("AppendJob(nil)", func(t *testing.T, _ []byte) { require.Equal(t, Job(ns, gJob), AppendJob(nil, ns, gJob)) }),
		kc("Queue", Queue(ns, q), "ns", ns, "queue", q).is(head(ns, 'q'), text("queue", q)),
		kc("QueuePrefix", QueuePrefix(ns), "ns", ns).is(head(ns, 'q')),
		kc("QueueSchema", QueueSchema(ns, q), "ns", ns, "queue", q).is(head(ns, 'Y'), text("queue", q)),
		kc("Unique", Unique(ns, q, "invoice-42"), "ns", ns, "queue", q, "uniqueKey", "invoice-42").
			is(head(ns, 'u'), text("queue", q), sep(), text("unique key", "invoice-42")),
		// An empty unique key is the prefix of every lock of the queue.
		kc("Unique", Unique(ns, q, ""), "ns", ns, "queue", q, "uniqueKey", "").
			is(head(ns, 'u'), text("queue", q), sep(), text("unique key", "")),
		kc("Schedule", Schedule(ns, gSched), "ns", ns, "id", gSched).is(head(ns, 's'), text("schedule id", gSched)),
		kc("SchedulePrefix", SchedulePrefix(ns), "ns", ns).is(head(ns, 's')),
		kc("ScheduleName", ScheduleName(ns, "nightly-report"), "ns", ns, "name", "nightly-report").
			is(head(ns, 'N'), text("schedule name", "nightly-report")),
		kc("ScheduleQueueName", ScheduleQueueName(ns, "nightly-report", q), "ns", ns, "name", "nightly-report", "queue", q).
			is(head(ns, 'Q'), text("schedule name", "nightly-report"), sep(), text("queue", q)),
		kc("ScheduleNamePrefix", ScheduleNamePrefix(ns, "nightly-report"), "ns", ns, "name", "nightly-report").
			is(head(ns, 'Q'), text("schedule name", "nightly-report"), sep()),
		kc("Batch", Batch(ns, gBatch), "ns", ns, "id", gBatch).is(head(ns, 'b'), text("batch id", gBatch)),
		kc("BulkOp", BulkOp(ns, gBulk), "ns", ns, "id", gBulk).is(head(ns, 'o'), text("bulk operation id", gBulk)),
		kc("BulkOpPrefix", BulkOpPrefix(ns), "ns", ns).is(head(ns, 'o')),
		kc("KeyActive", KeyActive(ns, q, "tenant-9"), "ns", ns, "queue", q, "ckey", "tenant-9").
			is(head(ns, 'k'), text("queue", q), sep(), text("concurrency key", "tenant-9")),
		kc("Unfinished", Unfinished(ns), "ns", ns).is(head(ns, 'P')),
	}
}

// createdID is the CreatedID round trip shared by the creation-order indexes.
func createdID(created int64, id string) func(t *testing.T, key []byte) {
	return func(t *testing.T, key []byte) {
		c, got, err := CreatedID(key)
		require.NoError(t, err)
		require.Equal(t, created, c)
		require.Equal(t, id, got)
	}
}

func pendingCases() []*gcase {
	ns, q := gNS, gQueue
	pending := func(prio uint8, created int64, id string) *gcase {
		return kc("Pending", Pending(ns, q, prio, created, id), "ns", ns, "queue", q, "prio", prio, "created", created, "id", id).
			is(head(ns, 'p'), text("queue", q), sep(), u8("priority (0 critical, 1 high, 2 normal)", prio),
				be64("created_at", created), text("job id", id)).
			parse("PendingID", func(t *testing.T, key []byte) {
				got, err := PendingID(key)
				require.NoError(t, err)
				require.Equal(t, id, got)
			}).
			parse("PendingOrder", func(t *testing.T, key []byte) {
				p, c, err := PendingOrder(ns, q, key)
				require.NoError(t, err)
				require.Equal(t, prio, p)
				require.Equal(t, created, c)
				_, _, err = PendingOrder(ns, q+"2", key)
				require.Error(t, err, "another queue's pending key")
			}).
			parse("CreatedID", createdID(created, id))
	}
	return []*gcase{
		kc("PendingQueue", PendingQueue(ns, q), "ns", ns, "queue", q).is(head(ns, 'p'), text("queue", q), sep()),
		pending(0, gCreated, gJob),
		pending(2, 256, gJob2), // 256 shows the big-endian byte order past one byte
		kc("KeyedQueue", KeyedQueue(ns, KindKeyedPending, q), "ns", ns, "kind", expr("KindKeyedPending"), "queue", q).
			is(head(ns, 'f'), text("queue", q), sep()),
		kc("KeyedQueue", KeyedQueue(ns, KindKeyedGroup, q), "ns", ns, "kind", expr("KindKeyedGroup"), "queue", q).
			is(head(ns, 'g'), text("queue", q), sep()),
		kc("KeyedPrefix", KeyedPrefix(ns, q, 1, "cust-1", "acct-7"), "ns", ns, "queue", q, "prio", 1, "fkey", "cust-1", "ckey", "acct-7").
			is(head(ns, 'f'), text("queue", q), sep(), u8("priority", 1), text("fairness key", "cust-1"), sep(),
				text("concurrency key", "acct-7"), sep()),
		kc("KeyedPending", KeyedPending(ns, q, 1, "cust-1", "", gCreated, gJob), "ns", ns, "queue", q, "prio", 1,
			"fkey", "cust-1", "ckey", "", "created", gCreated, "id", gJob).
			is(head(ns, 'f'), text("queue", q), sep(), u8("priority", 1), text("fairness key", "cust-1"), sep(),
				text("concurrency key", ""), sep(), be64("created_at", gCreated), text("job id", gJob)).
			parse("PendingID", func(t *testing.T, key []byte) {
				got, err := PendingID(key)
				require.NoError(t, err)
				require.Equal(t, gJob, got)
			}).
			parse("CreatedID", createdID(gCreated, gJob)),
		kc("KeyedGroup", KeyedGroup(ns, q, 2, "", "acct-7"), "ns", ns, "queue", q, "prio", 2, "fkey", "", "ckey", "acct-7").
			is(head(ns, 'g'), text("queue", q), sep(), u8("priority", 2), text("fairness key", ""), sep(),
				text("concurrency key", "acct-7")).
			parse("ParseKeyedGroup", func(t *testing.T, key []byte) {
				p, f, c, err := ParseKeyedGroup(ns, q, key)
				require.NoError(t, err)
				require.Equal(t, []any{uint8(2), "", "acct-7"}, []any{p, f, c})
				_, _, _, err = ParseKeyedGroup(ns, q+"2", key)
				require.Error(t, err, "another queue's group")
			}),
	}
}

func timeCases() []*gcase {
	ns := gNS
	cs := []*gcase{}
	// Built with the constants, stated with the literal bytes they must be.
	for i, k := range []struct {
		name string
		kind byte
		lit  byte
	}{{"KindDue", KindDue, 'd'}, {"KindLease", KindLease, 'l'}, {"KindExpire", KindExpire, 'x'},
		{"KindScheduleRun", KindScheduleRun, 'R'}, {"KindPrune", KindPrune, 'r'}} {
		at, id := gCreated+int64(i+1)*int64(time.Second), gJob
		if k.lit == 'R' {
			id = gSched // the schedule run index holds schedule ids, of the same length
		}
		cs = append(cs,
			kc("TimeIndex", TimeIndex(ns, k.kind), "ns", ns, "kind", expr(k.name)).is(head(ns, k.lit)),
			kc("Timed", Timed(ns, k.kind, at, id), "ns", ns, "kind", expr(k.name), "at", at, "id", id).
				is(head(ns, k.lit), be64("at", at), text("id", id)).
				parse("ParseTimed", func(t *testing.T, key []byte) {
					gotAt, gotID, err := ParseTimed(ns, k.kind, key)
					require.NoError(t, err)
					require.Equal(t, at, gotAt)
					require.Equal(t, id, gotID)
					other := KindDue
					if k.kind == KindDue {
						other = KindLease
					}
					_, _, err = ParseTimed(ns, other, key)
					require.Error(t, err, "another time index's key")
				}))
	}
	// Batch and bulk operation records: ids of their own lengths.
	cs = append(cs, kc("RecordPruneIndex", RecordPruneIndex(ns), "ns", ns).is(head(ns, 'y')))
	for i, id := range []string{gBatch, gBulk} {
		at := gCreated + int64(i+1)*int64(time.Hour)
		cs = append(cs, kc("RecordPruneEntry", RecordPruneEntry(ns, at, id), "ns", ns, "at", at, "id", id).
			is(head(ns, 'y'), be64("prune_at", at), text("record id", id)).
			parse("ParseRecordPrune", func(t *testing.T, key []byte) {
				gotAt, gotID, err := ParseRecordPrune(ns, key)
				require.NoError(t, err)
				require.Equal(t, at, gotAt)
				require.Equal(t, id, gotID)
				_, _, err = ParseRecordPrune(ns, Timed(ns, KindPrune, at, gJob))
				require.Error(t, err, "a job prune key")
				_, _, err = ParseRecordPrune(ns, RecordPruneIndex(ns))
				require.Error(t, err, "the bare prefix")
			}))
	}
	// Idempotency records by expiry: time order, then the key.
	cs = append(cs, kc("IdempotencyExpiryIndex", IdempotencyExpiryIndex(ns), "ns", ns).is(head(ns, 'I')))
	at := gCreated + int64(24*time.Hour)
	cs = append(cs, kc("IdempotencyExpiry", IdempotencyExpiry(ns, at, "order-42"), "ns", ns, "at", at, "key", "order-42").
		is(head(ns, 'I'), be64("expires_at", at), text("Idempotency-Key", "order-42")).
		parse("ParseIdempotencyExpiry", func(t *testing.T, key []byte) {
			gotAt, gotKey, err := ParseIdempotencyExpiry(ns, key)
			require.NoError(t, err)
			require.Equal(t, at, gotAt)
			require.Equal(t, "order-42", gotKey)
			_, _, err = ParseIdempotencyExpiry(ns, RecordPruneEntry(ns, at, gBatch))
			require.Error(t, err, "a record prune key")
			_, _, err = ParseIdempotencyExpiry(ns, IdempotencyExpiryIndex(ns))
			require.Error(t, err, "the bare prefix")
		}))
	return cs
}

func deadCases() []*gcase {
	ns := gNS
	cs := []*gcase{}
	for _, scope := range []string{"", gQueue} {
		at := gCreated + int64(time.Hour)
		cs = append(cs,
			kc("DeadScope", DeadScope(ns, scope), "ns", ns, "scope", scope).
				is(head(ns, 'D'), text("scope", scope), sep()),
			kc("Dead", Dead(ns, scope, at, gJob), "ns", ns, "scope", scope, "at", at, "id", gJob).
				is(head(ns, 'D'), text("scope", scope), sep(), be64("dead_at", at), text("job id", gJob)).
				parse("ParseDead", func(t *testing.T, key []byte) {
					gotAt, gotID, err := ParseDead(ns, scope, key)
					require.NoError(t, err)
					require.Equal(t, at, gotAt)
					require.Equal(t, gJob, gotID)
					_, _, err = ParseDead(ns, scope+"x", key)
					require.Error(t, err, "another scope's key")
				}))
	}
	return cs
}

func edgeCases() []*gcase {
	ns := gNS
	return []*gcase{
		kc("BatchMembers", BatchMembers(ns, gBatch), "ns", ns, "batchID", gBatch).
			is(head(ns, 'B'), text("batch id", gBatch), sep()),
		kc("BatchMember", BatchMember(ns, gBatch, gJob), "ns", ns, "batchID", gBatch, "jobID", gJob).
			is(head(ns, 'B'), text("batch id", gBatch), sep(), text("job id", gJob)).
			parse("MemberID", func(t *testing.T, key []byte) { require.Equal(t, gJob, MemberID(key)) }),
		kc("Dependents", Dependents(ns, gJob), "ns", ns, "dependencyID", gJob).
			is(head(ns, 'e'), text("dependency id (fixed length, no separator)", gJob)),
		kc("Dependent", Dependent(ns, gJob, gJob2), "ns", ns, "dependencyID", gJob, "dependentID", gJob2).
			is(head(ns, 'e'), text("dependency id", gJob), text("dependent id", gJob2)).
			parse("DependentID", func(t *testing.T, key []byte) { require.Equal(t, gJob2, DependentID(key)) }),
	}
}

func searchCases() []*gcase {
	ns, q, c := gNS, gQueue, gCreated
	return []*gcase{
		kc("StateQueue", StateQueue(ns, 6, q), "ns", ns, "state", 6, "queue", q).
			is(head(ns, 'S'), u8("state (6 dead)", 6), text("queue", q), sep()),
		kc("StateEntry", StateEntry(ns, 6, q, c, gJob), "ns", ns, "state", 6, "queue", q, "created", c, "id", gJob).
			is(head(ns, 'S'), u8("state (6 dead)", 6), text("queue", q), sep(), be64("created_at", c), text("job id", gJob)).
			parse("CreatedID", createdID(c, gJob)),
		kc("TagPrefix", TagPrefix(ns, "customer", "acme"), "ns", ns, "key", "customer", "value", "acme").
			is(head(ns, 'T'), text("tag key", "customer"), sep(), text("tag value", "acme"), sep()),
		kc("TagEntry", TagEntry(ns, "customer", "acme", c, gJob), "ns", ns, "key", "customer", "value", "acme", "created", c, "id", gJob).
			is(head(ns, 'T'), text("tag key", "customer"), sep(), text("tag value", "acme"), sep(), be64("created_at", c), text("job id", gJob)).
			parse("CreatedID", createdID(c, gJob)),
		kc("TagEntry", TagEntry(ns, "customer", "", c, gJob), "ns", ns, "key", "customer", "value", "", "created", c, "id", gJob).
			is(head(ns, 'T'), text("tag key", "customer"), sep(), text("tag value", ""), sep(), be64("created_at", c), text("job id", gJob)),
		kc("BatchJobs", BatchJobs(ns, gBatch), "ns", ns, "batchID", gBatch).
			is(head(ns, 'A'), text("batch id", gBatch), sep()),
		kc("BatchJob", BatchJob(ns, gBatch, c, gJob), "ns", ns, "batchID", gBatch, "created", c, "id", gJob).
			is(head(ns, 'A'), text("batch id", gBatch), sep(), be64("created_at", c), text("job id", gJob)).
			parse("CreatedID", createdID(c, gJob)),
		kc("ChainSteps", ChainSteps(ns, gChain), "ns", ns, "chainID", gChain).
			is(head(ns, 'C'), text("chain id", gChain), sep()),
		kc("ChainStep", ChainStep(ns, gChain, 2, gJob), "ns", ns, "chainID", gChain, "step", 2, "id", gJob).
			is(head(ns, 'C'), text("chain id", gChain), sep(), be16("step", 2), text("job id", gJob)).
			parse("StepID", func(t *testing.T, key []byte) {
				step, id, err := StepID(key)
				require.NoError(t, err)
				require.Equal(t, uint16(2), step)
				require.Equal(t, gJob, id)
			}),
	}
}

func registryCases() []*gcase {
	ns := gNS
	reg := part{"registry prefix 01 'n' (sorts before every namespace)", []byte{0x01, 'n'}}
	end := func(what string) part { return part{what + ": the last byte plus one, ending the range", []byte{0x01}} }
	return []*gcase{
		kc("RegistryPrefix", RegistryPrefix()).is(reg),
		kc("Registry", Registry(ns), "ns", ns).is(reg, text("namespace", ns)).
			parse("RegistryNamespace", func(t *testing.T, key []byte) { require.Equal(t, ns, RegistryNamespace(key)) }),
		kc("RestoringPrefix", RestoringPrefix()).is(part{"restore marker prefix 01 'X' (outside every namespace)", []byte{0x01, 'X'}}),
		kc("Restoring", Restoring(ns), "ns", ns).is(part{"restore marker prefix 01 'X' (outside every namespace)", []byte{0x01, 'X'}}, text("namespace", ns)).
			parse("RestoringNamespace", func(t *testing.T, key []byte) { require.Equal(t, ns, RestoringNamespace(key)) }),
		kc("RestoreRefusing", RestoreRefusing()).is(part{"restores refuse commands 01 'Y' (outside every namespace)", []byte{0x01, 'Y'}}),
		kc("MoveFencePrefix", MoveFencePrefix()).is(part{"move fence prefix 01 'F' (outside every namespace)", []byte{0x01, 'F'}}),
		kc("MoveFence", MoveFence(ns), "ns", ns).is(part{"move fence prefix 01 'F' (outside every namespace)", []byte{0x01, 'F'}}, text("namespace", ns)).
			parse("MoveFenceNamespace", func(t *testing.T, key []byte) { require.Equal(t, ns, MoveFenceNamespace(key)) }),
		kc("MovedPrefix", MovedPrefix()).is(part{"moved tombstone prefix 01 'W' (outside every namespace)", []byte{0x01, 'W'}}),
		kc("Moved", Moved(ns), "ns", ns).is(part{"moved tombstone prefix 01 'W' (outside every namespace)", []byte{0x01, 'W'}}, text("namespace", ns)).
			parse("MovedNamespace", func(t *testing.T, key []byte) { require.Equal(t, ns, MovedNamespace(key)) }),
		kc("MovedInPrefix", MovedInPrefix()).is(part{"moved-in mark prefix 01 'E' (outside every namespace)", []byte{0x01, 'E'}}),
		kc("MovedIn", MovedIn(ns), "ns", ns).is(part{"moved-in mark prefix 01 'E' (outside every namespace)", []byte{0x01, 'E'}}, text("namespace", ns)).
			parse("MovedInNamespace", func(t *testing.T, key []byte) { require.Equal(t, ns, MovedInNamespace(key)) }),
		kc("PrefixEnd", PrefixEnd(Namespace(ns)), "p", expr(fmt.Sprintf("Namespace(%q)", ns))).
			is(text("namespace", ns), end("separator 00")),
		kc("PrefixEnd", PrefixEnd(PendingQueue(ns, gQueue)), "p", expr(fmt.Sprintf("PendingQueue(%q, %q)", ns, gQueue))).
			is(head(ns, 'p'), text("queue", gQueue), end("separator 00")),
		kc("PrefixEnd", PrefixEnd([]byte("a\xff\xff")), "p", "a\xff\xff").
			is(part{"'a' plus one; trailing ff bytes are dropped", []byte("b")}),
	}
}

func usageCases() []*gcase {
	ns := gNS
	hour := int64(1_700_000_000_000_000_000) - int64(1_700_000_000_000_000_000)%int64(time.Hour) // 2023-11-14T22:00:00Z
	bucket := part{"usage bucket prefix 01 'U' (sorts before every namespace)", []byte{0x01, 'U'}}
	gauge := part{"usage gauge prefix 01 'G'", []byte{0x01, 'G'}}
	return []*gcase{
		kc("UsageBucketPrefix", UsageBucketPrefix()).is(bucket),
		kc("UsageBucket", UsageBucket(hour, ns), "hour", hour, "ns", ns).
			is(bucket, be64("hour start", hour), text("namespace", ns)).
			parse("ParseUsageBucket", func(t *testing.T, key []byte) {
				h, n, err := ParseUsageBucket(key)
				require.NoError(t, err)
				require.Equal(t, hour, h)
				require.Equal(t, ns, n)
				_, _, err = ParseUsageBucket(UsageBucket(hour, ""))
				require.Error(t, err, "the first key of an hour names no bucket")
			}),
		kc("UsageBucket", UsageBucket(hour, ""), "hour", hour, "ns", "").
			is(bucket, be64("hour start: the first key of the hour", hour)),
		kc("UsageGaugePrefix", UsageGaugePrefix()).is(gauge),
		kc("UsageGauge", UsageGauge(ns), "ns", ns).is(gauge, text("namespace", ns)).
			parse("UsageGaugeNamespace", func(t *testing.T, key []byte) { require.Equal(t, ns, UsageGaugeNamespace(key)) }),
		kc("UsageClock", UsageClock()).is(part{"metering clock 01 'M'", []byte{0x01, 'M'}}),
	}
}

func eventCases() []*gcase {
	ns := gNS
	seq := uint64(42)<<20 | 3
	c := &gcase{call: "event Kind constants"}
	for _, k := range []struct {
		name      string
		got, want byte
	}{{"KindEvent", KindEvent, 'v'}, {"KindEventFloor", KindEventFloor, 'V'}, {"KindEventRetention", KindEventRetention, 'E'}, {"KindEventCount", KindEventCount, 'n'}} {
		c.key = append(c.key, k.got)
		c.parts = append(c.parts, part{fmt.Sprintf("%s '%c' (%s)", k.name, k.want, kindNames[k.want]), []byte{k.want}})
		c.covers = append(c.covers, k.name)
	}
	c.parse("distinct from the other kinds", func(t *testing.T, _ []byte) {
		for _, k := range kindCases()[0].key {
			require.NotContains(t, []byte{KindEvent, KindEventFloor, KindEventRetention, KindEventCount}, k)
		}
	})
	return []*gcase{
		c,
		kc("EventPrefix", EventPrefix(ns), "ns", ns).is(head(ns, 'v')),
		kc("Event", Event(ns, seq), "ns", ns, "seq", seq).is(head(ns, 'v'), be64("sequence number: entry index << 20 | position", int64(seq))).
			parse("ParseEvent", func(t *testing.T, key []byte) {
				got, err := ParseEvent(ns, key)
				require.NoError(t, err)
				require.Equal(t, seq, got)
				_, err = ParseEvent(ns, EventPrefix(ns))
				require.Error(t, err)
			}).
			parse("IsEvent", func(t *testing.T, key []byte) {
				require.True(t, IsEvent(key[len(Namespace(ns)):]))
				require.True(t, IsEvent(EventFloor(ns)[len(Namespace(ns)):]))
				require.True(t, IsEvent(EventRetention(ns)[len(Namespace(ns)):]))
				require.True(t, IsEvent(EventCount(ns)[len(Namespace(ns)):]))
				require.False(t, IsEvent(Job(ns, gJob)[len(Namespace(ns)):]))
				require.False(t, IsEvent(nil))
			}),
		kc("EventFloor", EventFloor(ns), "ns", ns).is(head(ns, 'V')),
		kc("EventRetention", EventRetention(ns), "ns", ns).is(head(ns, 'E')),
		kc("EventCount", EventCount(ns), "ns", ns).is(head(ns, 'n')),
		kc("EventLogStart", EventLogStart()).is(part{"event log start 01 'L'", []byte{0x01, 'L'}}),
	}
}

func auditCases() []*gcase {
	ns := gNS
	c := &gcase{call: "audit Kind constants"}
	for _, k := range []struct {
		name      string
		got, want byte
	}{{"KindAudit", KindAudit, 'U'}, {"KindAuditRetention", KindAuditRetention, 'z'}} {
		c.key = append(c.key, k.got)
		c.parts = append(c.parts, part{fmt.Sprintf("%s '%c' (%s)", k.name, k.want, kindNames[k.want]), []byte{k.want}})
		c.covers = append(c.covers, k.name)
	}
	c.parse("distinct from the other kinds", func(t *testing.T, _ []byte) {
		for _, k := range append(kindCases()[0].key, eventCases()[0].key...) {
			require.NotContains(t, []byte{KindAudit, KindAuditRetention}, k)
		}
	})
	return []*gcase{
		c,
		kc("AuditPrefix", AuditPrefix(ns), "ns", ns).is(head(ns, 'U')),
		kc("AuditAt", AuditAt(ns, gCreated), "ns", ns, "at", gCreated).is(head(ns, 'U'), be64("time, unix ns", gCreated)),
		kc("Audit", Audit(ns, gCreated, 42, 3), "ns", ns, "at", gCreated, "index", 42, "pos", 3).
			is(head(ns, 'U'), be64("time, unix ns", gCreated), be64("entry index", 42), be16("position in the entry", 3)).
			parse("ParseAudit", func(t *testing.T, key []byte) {
				at, idx, pos, err := ParseAudit(ns, key)
				require.NoError(t, err)
				require.Equal(t, []any{gCreated, uint64(42), uint16(3)}, []any{at, idx, pos})
				_, _, _, err = ParseAudit(ns, AuditAt(ns, gCreated))
				require.Error(t, err)
			}),
		kc("AuditRetention", AuditRetention(ns), "ns", ns).is(head(ns, 'z')),
	}
}

func historyCases() []*gcase {
	ns, q := gNS, gQueue
	start := gCreated - gCreated%int64(time.Minute)
	res := &gcase{call: "history resolutions", key: []byte{HistoryMinute, HistoryHour}, covers: []string{"HistoryMinute", "HistoryHour"},
		parts: []part{{"HistoryMinute 'm'", []byte{'m'}}, {"HistoryHour 'h'", []byte{'h'}}}}
	return []*gcase{
		kc("HistoryPrefix", HistoryPrefix(ns), "ns", ns).is(head(ns, 't')),
		kc("HistorySeries", HistorySeries(ns, q, HistoryHour), "ns", ns, "queue", q, "res", "HistoryHour").
			is(head(ns, 't'), text("queue", q), sep(), u8("resolution 'h' (HistoryHour)", HistoryHour)),
		kc("History", History(ns, q, HistoryMinute, start), "ns", ns, "queue", q, "res", "HistoryMinute", "start", start).
			is(head(ns, 't'), text("queue", q), sep(), u8("resolution 'm' (HistoryMinute)", HistoryMinute), be64("bucket start (unix ns)", start)).
			parse("ParseHistory", func(t *testing.T, key []byte) {
				gotQ, res, at, err := ParseHistory(ns, key)
				require.NoError(t, err)
				require.Equal(t, q, gotQ)
				require.Equal(t, HistoryMinute, res)
				require.Equal(t, start, at)
				_, _, _, err = ParseHistory(ns, HistorySeries(ns, q, HistoryMinute))
				require.Error(t, err)
				_, _, _, err = ParseHistory(ns, Job(ns, gJob))
				require.Error(t, err)
			}),
		kc("HistoryStart", HistoryStart()).is(part{"history start 01 'h'", []byte{0x01, 'h'}}),
		res,
	}
}
