package engine

import (
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// The commands of the shard log, with their types and results. Numbers
// are append-only: never renumber or reuse one. Each command's struct
// keeps its `codec` field tags forever (they are the log's format).
var (
	Enqueue   = replica.Op[EnqueueCmd, []EnqueueResult]{Type: 1, Name: "enqueue"}
	Fetch     = replica.Op[FetchCmd, *job.Job]{Type: 2, Name: "fetch"} // nil when nothing could be handed out
	Ack       = replica.Op[AckCmd, job.State]{Type: 3, Name: "ack"}    // completed, or cancelled
	Fail      = replica.Op[FailCmd, *FailOutcome]{Type: 4, Name: "fail"}
	Heartbeat = replica.Op[HeartbeatCmd, []string]{Type: 5, Name: "heartbeat"} // a wire.Heartbeat* status per job
	Promote   = replica.Op[SweepCmd, int]{Type: 6, Name: "promote"}            // jobs changed
	Reclaim   = replica.Op[SweepCmd, int]{Type: 7, Name: "reclaim"}            // older logs; proposers use ReclaimCounted
	Expire    = replica.Op[SweepCmd, int]{Type: 8, Name: "expire"}

	ScheduleCreate  = replica.Op[ScheduleCmd, *Schedule]{Type: 9, Name: "schedule.create"}
	ScheduleUpdate  = replica.Op[ScheduleCmd, *Schedule]{Type: 10, Name: "schedule.update"}
	ScheduleDelete  = replica.Op[ScheduleIDCmd, replica.None]{Type: 11, Name: "schedule.delete"}
	ScheduleEnable  = replica.Op[ScheduleIDCmd, *Schedule]{Type: 12, Name: "schedule.enable"}
	ScheduleDisable = replica.Op[ScheduleIDCmd, *Schedule]{Type: 13, Name: "schedule.disable"}
	ScheduleFire    = replica.Op[FireCmd, bool]{Type: 14, Name: "schedule.fire"} // whether it fired

	JobRetry  = replica.Op[JobOpCmd, job.State]{Type: 15, Name: "job.retry"}
	JobCancel = replica.Op[JobOpCmd, string]{Type: 16, Name: "job.cancel"} // wire.CancelDone or wire.CancelRequested
	JobMove   = replica.Op[JobOpCmd, job.State]{Type: 17, Name: "job.move"}
	JobDelete = replica.Op[JobOpCmd, replica.None]{Type: 18, Name: "job.delete"} // older logs; proposers use JobDiscard
	JobPrune  = replica.Op[SweepCmd, int]{Type: 19, Name: "job.prune"}

	QueuePause       = replica.Op[QueueCmd, replica.None]{Type: 20, Name: "queue pause"}
	QueueResume      = replica.Op[QueueCmd, replica.None]{Type: 21, Name: "queue resume"}
	QueueDrain       = replica.Op[QueueCmd, int64]{Type: 22, Name: "queue drain"}            // jobs still active
	QueueClear       = replica.Op[QueueSweepCmd, *QueueStep]{Type: 23, Name: "queue clear"}  // older logs; proposers use QueueClearAll
	QueueDelete      = replica.Op[QueueSweepCmd, *QueueStep]{Type: 24, Name: "queue delete"} // older logs; proposers use QueueDeleteSettle
	QueueConcurrency = replica.Op[QueueLimitCmd, replica.None]{Type: 25, Name: "queue concurrency"}
	QueueThrottle    = replica.Op[QueueThrottleCmd, replica.None]{Type: 26, Name: "queue throttle"}
	QueueDefaultsSet = replica.Op[QueueDefaultsCmd, replica.None]{Type: 27, Name: "queue defaults"}

	FetchBatch = replica.Op[FetchBatchCmd, []*job.Job]{Type: 28, Name: "fetch-batch"}
	AckBatch   = replica.Op[AckBatchCmd, []AckOutcome]{Type: 29, Name: "ack-batch"}

	BulkApply  = replica.Op[BulkCmd, *BulkOutcome]{Type: 30, Name: "bulk.apply"} // older logs; proposers use BulkApplySettle
	BulkCreate = replica.Op[BulkOpCmd, *BulkOp]{Type: 31, Name: "bulk.create"}
	BulkCancel = replica.Op[BulkOpCmd, *BulkOp]{Type: 32, Name: "bulk.cancel"}

	// Where a command's effect changed (a lost lease uses up an attempt;
	// deleting a job settles what waits on it; clear takes retrying jobs
	// too), the change has a new number and the old one keeps its old
	// handler, so older logs replay as they first applied.
	Release           = replica.Op[ReleaseCmd, []bool]{Type: 33, Name: "job.release"} // per job: released
	ReclaimCounted    = replica.Op[SweepCmd, int]{Type: 34, Name: "reclaim.counted"}
	JobDiscard        = replica.Op[JobOpCmd, replica.None]{Type: 35, Name: "job.discard"}
	BulkApplySettle   = replica.Op[BulkCmd, *BulkOutcome]{Type: 36, Name: "bulk.apply.settle"}
	QueueClearAll     = replica.Op[QueueSweepCmd, *QueueStep]{Type: 37, Name: "queue clear.all"}
	QueueDeleteSettle = replica.Op[QueueSweepCmd, *QueueStep]{Type: 38, Name: "queue delete.settle"}
	RecordPrune       = replica.Op[RecordPruneCmd, int]{Type: 39, Name: "record.prune"} // records deleted

	QueueConfigure = replica.Op[QueueConfigCmd, replica.None]{Type: 40, Name: "queue configure"}
	NamespacePurge = replica.Op[NamespacePurgeCmd, *PurgeStep]{Type: 41, Name: "namespace purge"}

	// BulkCreateScoped is BulkCreate for an operation limited to a queue
	// scope (BulkOp.Scoped): the same handler, under a number a node that
	// does not know the scope cannot apply, so it stops rather than store
	// an operation that would act on every queue.
	BulkCreateScoped = replica.Op[BulkOpCmd, *BulkOp]{Type: 42, Name: "bulk.create.scoped"}

	// NamespaceConfigure replaces a namespace's settings (PUT
	// /api/v1/namespace): its retention, which jobs finishing after it
	// take when their queue sets none.
	NamespaceConfigure = replica.Op[NamespaceConfigCmd, replica.None]{Type: 43, Name: "namespace.configure"}

	// UsageSweep is the leader's periodic usage sweep (usage_apply.go);
	// the first one turns usage metering on.
	UsageSweep = replica.Op[UsageSweepCmd, replica.None]{Type: 44, Name: "usage.sweep"}

	// EventLogStart switches the event log on (eventlog.go): every apply
	// after it writes the events of its changes. EventTrim is the
	// leader's retention trim of one namespace's log (trims done).
	EventLogStart = replica.Op[EventLogStartCmd, replica.None]{Type: 67, Name: "events.start"}
	EventTrim     = replica.Op[EventTrimCmd, int]{Type: 68, Name: "events.trim"}

	// EventRetentionSet records a namespace's event log retention as its
	// plan sets it (eventretention.go), proposed by the leader's trim
	// when the gateway's requests say otherwise (whether recorded: not
	// for a namespace without state).
	EventRetentionSet = replica.Op[EventRetentionCmd, bool]{Type: 85, Name: "events.retention"}

	// IdemApply applies a creating command under an Idempotency-Key, or
	// gives back the first answer of its key (idempotency.go); IdemSweep
	// is the leader's removal of expired records (records removed).
	IdemApply = replica.Op[IdemCmd, *IdemOutcome]{Type: 90, Name: "idempotent"}
	IdemSweep = replica.Op[IdemSweepCmd, int]{Type: 91, Name: "idempotency.sweep"}

	// Alert rules (alerts.go): the user's changes, and the leader's
	// evaluation firing and resolving them.
	AlertCreate = replica.Op[AlertRuleCmd, *AlertRuleRecord]{Type: 95, Name: "alert.create"}
	AlertUpdate = replica.Op[AlertRuleCmd, *AlertRuleRecord]{Type: 96, Name: "alert.update"}
	AlertDelete = replica.Op[AlertNameCmd, replica.None]{Type: 97, Name: "alert.delete"}
	AlertState  = replica.Op[AlertStateCmd, bool]{Type: 98, Name: "alert.state"} // whether it changed
	// AuditAppend records one audited request of a namespace, right after
	// the request's own command (audit.go); AuditTrim is the leader's
	// removal of records past the plan's retention (trims done).
	AuditAppend = replica.Op[AuditAppendCmd, replica.None]{Type: 99, Name: "audit.append"}
	AuditTrim   = replica.Op[AuditTrimCmd, int]{Type: 100, Name: "audit.trim"}
	// Queue history (history.go): HistoryStart switches it on; the
	// leader's loop proposes a namespace's samples of depth and oldest
	// age (HistorySample) and the trim of its old buckets (HistoryTrim:
	// queues trimmed).
	HistoryStart  = replica.Op[HistoryStartCmd, replica.None]{Type: 101, Name: "history.start"}
	HistorySample = replica.Op[HistorySampleCmd, replica.None]{Type: 102, Name: "history.sample"}
	HistoryTrim   = replica.Op[HistoryTrimCmd, int]{Type: 103, Name: "history.trim"}
	// NamespaceEncryption replaces a namespace's encryption record
	// (encryption.go): enable, a tenant key supplied, rotated or revoked.
	NamespaceEncryption = replica.Op[EncryptionCmd, *EncryptionRecord]{Type: 107, Name: "namespace.encryption"}
)

// register is the dispatch table: every command and its handler, in one
// place. Every command that changes one namespace is gated: refused while
// a move fences the namespace, or once it moved away (movemarks.go); those
// only the leader's loops propose are loopGated.
func (e *Engine) register(r *replica.Registry) {
	Enqueue.Handle(r, gated(e, e.applyEnqueue))
	Fetch.Handle(r, gated(e, e.applyFetch))
	Ack.Handle(r, gated(e, e.applyAck))
	Fail.Handle(r, gated(e, e.applyFail))
	Heartbeat.Handle(r, gated(e, e.applyHeartbeat))
	Promote.Handle(r, loopGated(e, e.applyPromote))
	Reclaim.Handle(r, loopGated(e, e.applyReclaim))
	Expire.Handle(r, loopGated(e, e.applyExpire))

	ScheduleCreate.Handle(r, gated(e, namespaceNames(e.applyScheduleCreate)))
	ScheduleUpdate.Handle(r, gated(e, namespaceNames(e.applyScheduleUpdate)))
	ScheduleDelete.Handle(r, gated(e, e.applyScheduleDelete))
	ScheduleEnable.Handle(r, gated(e, func(tx *replica.Tx, c *ScheduleIDCmd) (*Schedule, error) {
		return e.applyScheduleEnabled(tx, c, true)
	}))
	ScheduleDisable.Handle(r, gated(e, func(tx *replica.Tx, c *ScheduleIDCmd) (*Schedule, error) {
		return e.applyScheduleEnabled(tx, c, false)
	}))
	ScheduleFire.Handle(r, loopGated(e, e.applyScheduleFire))

	JobRetry.Handle(r, gated(e, withJob(e, e.retryJob)))
	JobCancel.Handle(r, gated(e, withJob(e, e.cancelJob)))
	JobMove.Handle(r, gated(e, withJob(e, e.moveJob)))
	JobDelete.Handle(r, gated(e, withJob(e, e.deleteJob)))
	JobPrune.Handle(r, loopGated(e, e.applyPrune))

	QueuePause.Handle(r, gated(e, e.applyQueuePause))
	QueueResume.Handle(r, gated(e, e.applyQueueResume))
	QueueDrain.Handle(r, gated(e, e.applyQueueDrain))
	QueueClear.Handle(r, gated(e, e.applyQueueClear))
	QueueDelete.Handle(r, gated(e, e.applyQueueDelete))
	QueueConcurrency.Handle(r, gated(e, e.applyQueueConcurrency))
	QueueThrottle.Handle(r, gated(e, e.applyQueueThrottle))
	QueueDefaultsSet.Handle(r, gated(e, e.applyQueueDefaults))

	FetchBatch.Handle(r, gated(e, e.applyFetchBatch))
	AckBatch.Handle(r, gated(e, e.applyAckBatch))

	BulkApply.Handle(r, gated(e, e.applyBulk))
	BulkCreate.Handle(r, gated(e, e.applyBulkCreate))
	BulkCancel.Handle(r, gated(e, e.applyBulkCancel))

	Release.Handle(r, gated(e, e.applyRelease))
	ReclaimCounted.Handle(r, loopGated(e, e.applyReclaimCounted))
	JobDiscard.Handle(r, gated(e, withJob(e, e.discardJob)))
	BulkApplySettle.Handle(r, gated(e, e.applyBulkSettle))
	QueueClearAll.Handle(r, gated(e, e.applyQueueClearAll))
	QueueDeleteSettle.Handle(r, gated(e, e.applyQueueDeleteSettle))
	RecordPrune.Handle(r, loopGated(e, e.applyRecordPrune))

	QueueConfigure.Handle(r, gated(e, e.applyQueueConfigure))
	NamespacePurge.Handle(r, gated(e, e.applyNamespacePurge))
	BulkCreateScoped.Handle(r, gated(e, e.applyBulkCreate))
	NamespaceConfigure.Handle(r, gated(e, e.applyNamespaceConfigure))
	UsageSweep.Handle(r, e.applyUsageSweep)
	EventLogStart.Handle(r, e.applyEventLogStart)
	EventTrim.Handle(r, loopGated(e, e.applyEventTrim))
	EventRetentionSet.Handle(r, loopGated(e, e.applyEventRetention))
	RestoreBegin.Handle(r, e.applyRestoreBegin)
	RestoreChunk.Handle(r, e.applyRestoreChunk)
	RestoreEnd.Handle(r, e.applyRestoreEnd)
	RestoreAbort.Handle(r, e.applyRestoreAbort)
	IdemApply.Handle(r, gated(e, e.applyIdem))
	IdemSweep.Handle(r, loopGated(e, e.applyIdemSweep))
	AlertCreate.Handle(r, gated(e, e.applyAlertCreate))
	AlertUpdate.Handle(r, gated(e, e.applyAlertUpdate))
	AlertDelete.Handle(r, gated(e, e.applyAlertDelete))
	AlertState.Handle(r, loopGated(e, e.applyAlertState))
	AuditAppend.Handle(r, gated(e, e.applyAuditAppend))
	AuditTrim.Handle(r, loopGated(e, e.applyAuditTrim))
	HistoryStart.Handle(r, e.applyHistoryStart)
	HistorySample.Handle(r, loopGated(e, e.applyHistorySample))
	HistoryTrim.Handle(r, loopGated(e, e.applyHistoryTrim))
	NamespaceEncryption.Handle(r, gated(e, e.applyEncryption))
	e.registerMoves(r)
	e.registerVersions(r)
	e.registerAI(r)
	e.registerBudgets(r)
	e.registerSchemas(r)
}
