package engine

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// scriptMoreCommands make the commands of the event log, idempotency
// records, webhooks, push deliveries, restores and moves.
var scriptMoreCommands = []interface{ cmd(*script) []byte }{
	// The event log starts part way through; trims cut it at a recent
	// entry (the script's entries are the log's indexes from 1).
	scriptCmd(func(s *script) []byte { return EventLogStart.Command(&EventLogStartCmd{}) }),
	// The wide start first, the counted one after it, then the blocks,
	// then the kept one (drawing nothing, so the rest of a seed's script
	// stays as it was).
	scriptCmd(func(s *script) []byte {
		if s.types[EventLogStartBlocks.Type] {
			return EventLogStartKept.Command(&EventLogStartCmd{})
		}
		if s.types[EventLogStartCounted.Type] {
			return EventLogStartBlocks.Command(&EventLogStartCmd{})
		}
		if s.types[EventLogStartWide.Type] {
			return EventLogStartCounted.Command(&EventLogStartCmd{})
		}
		return EventLogStartWide.Command(&EventLogStartCmd{})
	}),
	scriptCmd(func(s *script) []byte { return EventLogStartDetailed.Command(&EventLogStartCmd{}) }),
	scriptCmd(func(s *script) []byte {
		idx := max(len(s.times)-s.rng.Intn(30), 1)
		return EventTrim.Command(&EventTrimCmd{NS: testNS, Through: uint64(idx)<<EventSeqBits | uint64(s.rng.Intn(4))})
	}),
	scriptCmd(func(s *script) []byte {
		c := &EventRetentionCmd{NS: testNS, Hours: int64(1 + s.rng.Intn(720)), Events: int64(1000 + s.rng.Intn(5000))}
		if s.rng.Intn(4) == 0 {
			c.NS = "t_nobody/never" // no state there: nothing recorded
		}
		if s.rng.Intn(8) == 0 {
			c.Events = 1 // refused
		}
		return EventRetentionSet.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		c := &QueueConfigCmd{NS: testNS, Queue: s.queue(), Push: &PushConfig{URL: "https://h.example/" + s.queue(),
			WhenNoWork: s.rng.Intn(2) == 0, TimeoutNs: int64(time.Second), MaxInFlight: 1 + s.rng.Intn(3),
			Headers: []PushHeader{{Name: "X-A", Value: "1"}}}}
		if s.rng.Intn(2) == 0 {
			s.next = PushDisable.Command(&PushDisableCmd{NS: testNS, Queue: c.Queue, URL: c.Push.URL, Reason: "410"})
		}
		return QueueConfigurePush.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		seed := make([]byte, 32)
		s.rng.Read(seed)
		return SigningKeysAdd.Command(&SigningKeysCmd{NS: testNS, Key: SigningKey{ID: fmt.Sprint("k", s.rng.Intn(100)),
			Secret: "whsk_" + base64.StdEncoding.EncodeToString(seed)}, OverlapNs: int64(s.rng.Intn(3)) * int64(time.Second), First: s.rng.Intn(2) == 0})
	}),
	scriptCmd(func(s *script) []byte {
		q := s.queue()
		return PushDisable.Command(&PushDisableCmd{NS: testNS, Queue: q, URL: "https://h.example/" + q, Reason: "410"})
	}),
	// Idempotent enqueues: three keys and two request hashes, so a key
	// meets its own request (a replay) and another one (refused); the
	// sweep names records due and not yet due.
	scriptCmd(func(s *script) []byte {
		inner := scriptEnqueue(s)
		key := fmt.Sprint("k", s.rng.Intn(3))
		s.idem = append(s.idem, IdemItem{At: s.now.Add(scriptIdemTTL).UnixNano(), Key: key})
		return IdemApply.Command(&IdemCmd{NS: testNS, Key: key, Hash: []byte{byte(s.rng.Intn(2))}, Echo: []byte("e"), Cmd: inner})
	}),
	scriptCmd(func(s *script) []byte {
		var items []IdemItem
		for _, it := range s.idem {
			if s.rng.Intn(2) == 0 {
				items = append(items, it)
			}
		}
		return IdemSweep.Command(&IdemSweepCmd{NS: testNS, Items: items})
	}),
	// Webhooks: two ids, so creates meet existing ones and updates,
	// deletes, rotations and progress meet missing ones.
	scriptCmd(func(s *script) []byte {
		w := WebhookRecord{ID: fmt.Sprint("wh", s.rng.Intn(2)), URL: "https://h.example/w", Events: []string{"job.completed"},
			Queues: [][]string{nil, {"a*"}}[s.rng.Intn(2)], Enabled: s.rng.Intn(4) != 0, Description: "d"}
		if s.rng.Intn(2) == 0 {
			return WebhookUpdate.Command(&WebhookCmd{NS: testNS, Hook: w})
		}
		return WebhookCreate.Command(&WebhookCmd{NS: testNS, Hook: w})
	}),
	scriptCmd(func(s *script) []byte {
		id := fmt.Sprint("wh", s.rng.Intn(2))
		switch s.rng.Intn(4) {
		case 0:
			return WebhookDelete.Command(&WebhookIDCmd{NS: testNS, ID: id})
		case 1:
			seed := make([]byte, 32)
			s.rng.Read(seed)
			return WebhookSecret.Command(&WebhookSecretCmd{NS: testNS, ID: id, Key: SigningKey{ID: fmt.Sprint("s", s.rng.Intn(100)),
				Secret: "whsec_" + base64.StdEncoding.EncodeToString(seed)}, OverlapNs: int64(s.rng.Intn(3)) * int64(time.Second)})
		}
		idx := max(len(s.times)-s.rng.Intn(30), 1)
		var updated int64
		if len(s.times) > 0 {
			updated = s.times[max(len(s.times)-1-s.rng.Intn(3), 0)].UnixNano()
		}
		// Updated names a recent entry's time: now and then the last
		// change's, so the failing run and the disable apply.
		c := &WebhookProgressCmd{NS: testNS, ID: id, Cursor: uint64(idx) << EventSeqBits, Updated: updated,
			FailingSince: int64(s.rng.Intn(2)), Disable: s.rng.Intn(3) == 0, Reason: "failing", Attempts: s.rng.Intn(3)}
		if s.rng.Intn(2) == 0 {
			c.Log = s.deliveries()
		}
		return WebhookProgressFor(c).Command(c)
	}),
	// A test's or a redelivery's attempt, for the delivery log.
	scriptCmd(func(s *script) []byte {
		return WebhookLog.Command(&WebhookLogCmd{NS: testNS, ID: fmt.Sprint("wh", s.rng.Intn(2)), Log: s.deliveries()})
	}),
	// A push delivery: the dispatcher's worker leases a job of a queue,
	// and settles one (its own or another) by an ack or a fail.
	scriptCmd(func(s *script) []byte {
		q := s.queue()
		f := &FetchCmd{NS: testNS, Queues: []string{q}, WorkerID: PushWorker(q), LeaseNs: int64(2 * time.Second), Named: true}
		switch s.rng.Intn(3) {
		case 0:
			c := &AckCmd{NS: testNS, ID: s.job(), WorkerID: PushWorker(q), Result: []byte(`{"ok":1}`), Lease: s.lease()}
			s.next = AckFor(c).Command(c)
		case 1: // its acks grouped
			c := &AckBatchCmd{NS: testNS, WorkerID: PushWorker(q), Items: []AckBatchItem{{ID: s.job(), Lease: s.lease()}, {ID: s.job(), Lease: s.lease()}}}
			s.next = AckBatchFor(c).Command(c)
		default:
			c := &FailCmd{NS: testNS, ID: s.job(), WorkerID: PushWorker(q), Error: "500", Lease: s.lease()}
			s.next = FailFor(c).Command(c)
		}
		return FetchFor(f).Command(f)
	}),
	// A restore into otherNS (a replace now and then) of a settings record
	// and a queue, ended or aborted later; steps of a restore that is not
	// running are refused.
	scriptCmd(func(s *script) []byte {
		s.next = RestoreChunk.Command(&RestoreChunkCmd{NS: otherNS, Token: "t", Recs: []RestoreRecord{
			{Key: keys.NamespaceConfig("")[1:], Value: replica.Encode(&NamespaceConfig{Retention: int64(time.Minute)})},
			{Key: keys.Queue("", "a")[1:], Value: replica.Encode(&QueueRecord{Name: "a", Counts: make([]int64, 8)})},
			{Key: keys.EventFloor("")[1:], Value: make([]byte, 8)}, // a hand-made backup's: kept out once the log is kept
		}})
		return RestoreBegin.Command(&RestoreBeginCmd{NS: otherNS, Token: "t", Replace: s.rng.Intn(2) == 0})
	}),
	scriptCmd(func(s *script) []byte {
		if s.rng.Intn(3) == 0 {
			return RestoreAbort.Command(&RestoreTokenCmd{NS: otherNS, Token: "t"})
		}
		return RestoreEnd.Command(&RestoreTokenCmd{NS: otherNS, Token: "t"})
	}),
	// Moves: a fence (of either namespace, for a second, so commands
	// meet it and it lapses), lifted now and then; otherNS finished
	// (moved away, until a restore begins into it again); a move's chunk
	// of sets and deletes and its end, into the restore of otherNS.
	scriptCmd(func(s *script) []byte {
		ns := otherNS
		if s.rng.Intn(3) == 0 {
			ns = testNS
		}
		if s.rng.Intn(3) == 0 {
			s.next = MoveUnfence.Command(&MoveTokenCmd{NS: ns, Token: "m"})
		}
		return MoveFence.Command(&MoveFenceCmd{NS: ns, Token: "m", TTL: int64(time.Second)})
	}),
	scriptCmd(func(s *script) []byte {
		return MoveFinish.Command(&MoveFinishCmd{NS: otherNS, Token: "m", To: "shard-2"})
	}),
	scriptCmd(func(s *script) []byte {
		c := &MoveChunkCmd{NS: otherNS, Token: "t", Dels: [][]byte{keys.Queue("", "never")[1:]}}
		if s.rng.Intn(2) == 0 {
			c.Recs = []RestoreRecord{{Key: keys.Queue("", "z")[1:], Value: replica.Encode(&QueueRecord{Name: "z", Counts: make([]int64, 8)})}}
		} else {
			c.Dels = append(c.Dels, keys.Queue("", "z")[1:])
		}
		return MoveChunk.Command(c)
	}),
	scriptCmd(func(s *script) []byte { return MoveEnd.Command(&RestoreTokenCmd{NS: otherNS, Token: "t"}) }),
	scriptCmd(func(s *script) []byte {
		if s.rng.Intn(2) == 0 {
			s.next = RestoreAbort.Command(&RestoreTokenCmd{NS: otherNS, Token: "t"}) // removes it, unless touched
		}
		return MoveEndMarked.Command(&RestoreTokenCmd{NS: otherNS, Token: "t"})
	}),
	// A non-retryable failure: by a worker of a job it may hold, with or
	// without a lease, or by the push dispatcher of a job it fetched.
	scriptCmd(func(s *script) []byte {
		if s.rng.Intn(2) == 0 {
			q := s.queue()
			f := &FetchCmd{NS: testNS, Queues: []string{q}, WorkerID: PushWorker(q), LeaseNs: int64(2 * time.Second), Named: true}
			c := &FailCmd{NS: testNS, ID: s.job(), WorkerID: PushWorker(q), Error: "422", Lease: s.lease(), NonRetryable: true}
			s.next = FailFor(c).Command(c)
			return FetchFor(f).Command(f)
		}
		c := &FailCmd{NS: testNS, ID: s.job(), Error: "bad input", NonRetryable: true}
		if s.rng.Intn(2) == 0 {
			c.Lease = s.lease()
		}
		return FailFor(c).Command(c)
	}),
	// A namespace's OTLP endpoint: set, kept beside another setting's
	// change, or cleared.
	scriptCmd(func(s *script) []byte {
		c := &NamespaceConfigCmd{NS: testNS, KeepRetention: s.rng.Intn(2) == 0, KeepEgress: s.rng.Intn(2) == 0, KeepOTLP: s.rng.Intn(3) == 0}
		if s.rng.Intn(3) > 0 {
			c.Config.OTLPEndpoint = []string{"https://otel.example.com/v1/traces", "https://collector.example.net:4318/v1/traces"}[s.rng.Intn(2)]
		}
		if s.rng.Intn(4) == 0 {
			c.NS = otherNS
		}
		return NamespaceConfigureOTLP.Command(c)
	}),
	// Alert rules: two names, so creates meet existing ones; the leader's
	// state changes name a recent entry's time, now and then the rule's
	// last change's (else they are ignored), firing and resolving on two
	// queues; a delete resolves what fires.
	scriptCmd(func(s *script) []byte {
		r := AlertRuleRecord{Name: fmt.Sprint("a", s.rng.Intn(2)), Kind: wire.AlertQueueDepth, Threshold: float64(s.rng.Intn(5)),
			ForNs: int64(s.rng.Intn(3)) * int64(time.Second), Enabled: s.rng.Intn(4) != 0}
		if s.rng.Intn(2) == 0 {
			return AlertUpdate.Command(&AlertRuleCmd{NS: testNS, Rule: r})
		}
		return AlertCreate.Command(&AlertRuleCmd{NS: testNS, Rule: r})
	}),
	scriptCmd(func(s *script) []byte {
		return AlertDelete.Command(&AlertNameCmd{NS: testNS, Name: fmt.Sprint("a", s.rng.Intn(2))})
	}),
	scriptCmd(func(s *script) []byte {
		name := fmt.Sprint("a", s.rng.Intn(2))
		var updated int64
		if len(s.times) > 0 {
			updated = s.times[max(len(s.times)-1-s.rng.Intn(3), 0)].UnixNano()
		}
		c := &AlertStateCmd{NS: testNS, Name: name, Updated: updated}
		for _, q := range []string{"q0", "q1"} {
			if s.rng.Intn(2) == 0 {
				c.Changes = append(c.Changes, AlertChange{Queue: q, Fire: s.rng.Intn(2) == 0, Value: float64(s.rng.Intn(100)) / 3})
			}
		}
		return AlertState.Command(c)
	}),
	// Audit records: a few in one entry now and then (their positions),
	// a retention change, a refused one; trims at a recent time.
	scriptCmd(func(s *script) []byte {
		c := &AuditAppendCmd{NS: testNS, Entry: AuditEntry{KeyID: fmt.Sprint("key", s.rng.Intn(3)), Role: "admin", Action: "job.manage",
			Route: "POST /api/v1/jobs/:id/retry", ObjectType: "job", ObjectID: s.job(), Result: "ok", Status: 200, Source: "127.0.0.1", RequestID: "r"}}
		switch s.rng.Intn(6) {
		case 0:
			c.RetentionDays = int64(1 + s.rng.Intn(30))
		case 1:
			c.RetentionDays = 99999 // refused
		case 2:
			c2 := *c
			c2.Entry.Result, c2.Entry.Status = "not_found", 404
			s.next = AuditAppend.Command(&c2)
		}
		return AuditAppend.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		i := max(len(s.times)-s.rng.Intn(30), 1) - 1
		return AuditTrim.Command(&AuditTrimCmd{NS: testNS, Before: s.times[i].UnixNano()})
	}),
	// Queue history: its start, the leader's samples of a namespace's
	// queues (one may be of a queue without jobs), and its trim.
	scriptCmd(func(s *script) []byte { return HistoryStart.Command(&HistoryStartCmd{}) }),
	scriptCmd(func(s *script) []byte {
		c := &HistorySampleCmd{NS: testNS}
		for range 1 + s.rng.Intn(3) {
			c.Samples = append(c.Samples, QueueSample{Queue: s.queue(), Depth: int64(s.rng.Intn(50)), OldestAt: s.now.Add(-time.Duration(s.rng.Intn(5000)) * time.Millisecond).UnixNano()})
		}
		if s.rng.Intn(4) == 0 {
			c.NS = otherNS
		}
		return HistorySample.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		return HistoryTrim.Command(&HistoryTrimCmd{NS: []string{testNS, otherNS}[s.rng.Intn(2)]})
	}),
	// Encryption records: a change naming a version, the record's (it
	// applies) or another (refused); the keys are opaque bytes to the
	// apply.
	scriptCmd(func(s *script) []byte {
		prev := int64(s.rng.Intn(3))
		rec := EncryptionRecord{Enabled: s.rng.Intn(3) > 0, SearchDecrypt: s.rng.Intn(2) == 0, Gen: uint32(s.rng.Intn(3)),
			DataKey: bytes.Repeat([]byte{byte(s.rng.Intn(256))}, 60), NSKeyMaster: bytes.Repeat([]byte{7}, 60)}
		if s.rng.Intn(3) == 0 {
			rec.Revoked = []RevokedKey{{Gen: 0, KeyID: "0011223344556677", At: s.now.UnixNano()}}
		}
		return NamespaceEncryption.Command(&EncryptionCmd{NS: testNS, Prev: prev, Record: rec})
	}),
	// Typed payloads: a queue's schema set (one of two, so a repeat is no
	// change), kept or removed by a configuration without one, its queue
	// deleted; enqueues naming the versions they were checked against
	// (right or stale: refused) with chains' step versions; fires
	// checked, stale, or refused by the schema.
	scriptCmd(func(s *script) []byte {
		c := &QueueConfigCmd{NS: testNS, Queue: s.queue()}
		switch s.rng.Intn(5) {
		case 0:
			return QueueConfigure.Command(c)
		case 1:
			c.KeepSchema, c.Description = true, "kept"
		case 2:
			c.Schema = []byte(`{"type":"object"}`)
		default:
			c.Schema = []byte(`{"properties":{"n":{"minimum":0}}}`)
		}
		if s.rng.Intn(6) == 0 {
			s.next = QueueDeleteSettle.Command(&QueueSweepCmd{NS: testNS, Queue: c.Queue})
		}
		return QueueConfigureSchema.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		c := &EnqueueCmd{NS: testNS}
		for range 1 + s.rng.Intn(2) {
			j := s.newJob()
			v := uint32(s.rng.Intn(4))
			j.Schema = &job.Schema{Version: v}
			if j.Chain != nil && s.rng.Intn(2) == 0 {
				j.Schema.Steps = []uint32{v, uint32(s.rng.Intn(3)), 0, uint32(s.rng.Intn(3))}
			}
			c.Deps = c.Deps || len(j.DependsOn) > 0
			c.Jobs = append(c.Jobs, j.Encode())
			c.Checked = append(c.Checked, SchemaCheck{Queue: j.Queue, Version: v})
		}
		return EnqueueSchema.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		run := s.now.Truncate(time.Second).UnixNano()
		c := &FireCmd{NS: testNS, ID: scriptScheds[s.rng.Intn(2)], RunAt: run, NextRun: run + int64(time.Second), JobID: s.id("job_"),
			QueueDefaults: true, Checked: true, Schema: uint32(s.rng.Intn(3))}
		if s.rng.Intn(3) == 0 {
			c.Refused = "payload/n: minimum: got -1, want 0"
		}
		return ScheduleFireSchema.Command(c)
	}),
	// AI usage on the worker calls: a model now and then, the job's last
	// otherwise; a lease or none.
	scriptCmd(func(s *script) []byte {
		c := &AckCmd{NS: testNS, ID: s.job(), Result: []byte(`{"ok":true}`), Lease: s.lease(), Usage: s.aiUsage()}
		return AckFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		c := &FailCmd{NS: testNS, ID: s.job(), Error: "boom", Lease: s.lease(), NonRetryable: s.rng.Intn(4) == 0, Usage: s.aiUsage()}
		return FailFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		c := &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: s.job(), Lease: s.lease(), Usage: s.aiUsage()}, {ID: s.job()}}}
		return HeartbeatFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		c := &AckBatchCmd{NS: testNS, WorkerID: "w2", Items: []AckBatchItem{{ID: s.job(), Usage: s.aiUsage()}, {ID: s.job(), Lease: s.lease()}}}
		return AckBatchFor(c).Command(c)
	}),
	// Budgets: low daily limits on the namespace, a queue and a tag, each
	// action, so the usage above reaches them; creates meet existing ones.
	scriptCmd(func(s *script) []byte {
		scopes := []struct{ scope, value string }{{wire.BudgetScopeNamespace, ""}, {wire.BudgetScopeQueue, s.queue()}, {wire.BudgetScopeTag, "k=v"}}
		sc := scopes[s.rng.Intn(len(scopes))]
		b := BudgetRecord{Name: fmt.Sprint("b", s.rng.Intn(3)), Scope: sc.scope, Value: sc.value,
			OnExceed: []string{wire.BudgetHold, wire.BudgetReject, wire.BudgetAlert}[s.rng.Intn(3)]}
		if s.rng.Intn(2) == 0 {
			b.DailyCostNanos = int64(1 + s.rng.Intn(2e7))
		} else {
			b.DailyTokens = int64(1 + s.rng.Intn(20000))
		}
		return BudgetPut.Command(&BudgetCmd{NS: testNS, Budget: b, Create: s.rng.Intn(2) == 0})
	}),
	scriptCmd(func(s *script) []byte {
		return BudgetDelete.Command(&BudgetNameCmd{NS: testNS, Name: fmt.Sprint("b", s.rng.Intn(3))})
	}),
	scriptCmd(func(s *script) []byte { return JobApprove.Command(&JobOpCmd{NS: testNS, ID: s.job()}) }),
	scriptCmd(func(s *script) []byte { return JobReject.Command(&JobOpCmd{NS: testNS, ID: s.job()}) }),
	// Per-job limits small enough that the usage reports above pass them:
	// fails die, fetches hold or kill, alerts log.
	scriptCmd(func(s *script) []byte {
		b := BudgetRecord{Name: fmt.Sprint("b", s.rng.Intn(3)), Scope: wire.BudgetScopeQueue, Value: s.queue(),
			OnExceed: []string{wire.BudgetHold, wire.BudgetReject, wire.BudgetAlert}[s.rng.Intn(3)]}
		if s.rng.Intn(2) == 0 {
			b.PerJobCostNanos = int64(1 + s.rng.Intn(2e7))
		} else {
			b.PerJobTokens = int64(1 + s.rng.Intn(8000))
		}
		return BudgetPutPerJob.Command(&BudgetCmd{NS: testNS, Budget: b, Create: s.rng.Intn(2) == 0})
	}),
	scriptCmd(func(s *script) []byte {
		c := &BulkCmd{NS: testNS, Action: []string{job.BulkApprove, job.BulkReject}[s.rng.Intn(2)], IDs: s.jobsSample()}
		return BulkApplyHeld.Command(c)
	}),
	// The restore gate starts part way through: from there the enqueues
	// into otherNS while a restore writes it are refused.
	scriptCmd(func(s *script) []byte { return RestoreStartRefusing.Command(&RestoreStartCmd{}) }),
}

// aiUsage is a usage report with a model now and then.
func (s *script) aiUsage() *AIUsage {
	u := &AIUsage{Input: int64(s.rng.Intn(5000)), Output: int64(s.rng.Intn(900)), CacheRead: int64(s.rng.Intn(3)) * 100,
		CostNanos: int64(s.rng.Intn(1e7))}
	if s.rng.Intn(3) == 0 {
		u.Model, u.Provider = []string{"m-small", "m-large"}[s.rng.Intn(2)], "p"
	}
	return u
}

// deliveries are up to 60 delivery log records, so a log fills and trims.
func (s *script) deliveries() []WebhookAttempt {
	out := make([]WebhookAttempt, 1+s.rng.Intn(60))
	for i := range out {
		out[i] = WebhookAttempt{EventID: fmt.Sprint("s1:", s.rng.Intn(1000)), Type: "dev.jobbie.job.completed", At: int64(s.rng.Intn(1e9)),
			Attempt: 1 + s.rng.Intn(3), Status: []int{0, 200, 500}[s.rng.Intn(3)], LatencyUs: int64(s.rng.Intn(1e6)),
			Error: string(bytes.Repeat([]byte("e"), s.rng.Intn(1500))), OK: s.rng.Intn(2) == 0}
	}
	return out
}
