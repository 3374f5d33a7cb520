package engine

import (
	"strings"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// Commands whose fields newer nodes act on. A field a node does not know
// is dropped when it decodes the command, so a node of an older version
// would apply such a command as if the field were not there (settle any
// lease where the command names one, fire a schedule's job without its
// queue's defaults) and its state would part from its group's. So a
// command that carries such a field is proposed under a number of its
// own: the same command and the same handler, which with the field unset
// behaves as the old number always did, and a node that does not know the
// number stops instead of diverging (as bulk.create.scoped). Proposers
// pick the number with the *For functions below; a log written before
// these numbers replays as it first applied.
var (
	// FetchNamed is a fetch that names its lease (FetchCmd.Named: stamped
	// after the job's last, so its lease token is new).
	FetchNamed      = replica.Op[FetchCmd, *job.Job]{Type: 55, Name: "fetch.named"}
	FetchBatchNamed = replica.Op[FetchBatchCmd, []*job.Job]{Type: 56, Name: "fetch-batch.named"}
	// The worker calls that name the lease they settle or extend.
	AckLease       = replica.Op[AckCmd, job.State]{Type: 57, Name: "ack.lease"}
	FailLease      = replica.Op[FailCmd, *FailOutcome]{Type: 58, Name: "fail.lease"}
	HeartbeatLease = replica.Op[HeartbeatCmd, []string]{Type: 59, Name: "heartbeat.lease"}
	AckBatchLease  = replica.Op[AckBatchCmd, []AckOutcome]{Type: 60, Name: "ack-batch.lease"}
	ReleaseLease   = replica.Op[ReleaseCmd, []bool]{Type: 61, Name: "job.release.lease"}
	// Schedules whose jobs take their queue's defaults.
	ScheduleCreateDefaults = replica.Op[ScheduleCmd, *Schedule]{Type: 62, Name: "schedule.create.defaults"}
	ScheduleUpdateDefaults = replica.Op[ScheduleCmd, *Schedule]{Type: 63, Name: "schedule.update.defaults"}
	ScheduleFireDefaults   = replica.Op[FireCmd, bool]{Type: 64, Name: "schedule.fire.defaults"}
	// Schedules whose name must be free in their queue only
	// (ScheduleCmd.QueueNames); with or without the queue's defaults.
	ScheduleCreateQueueNames = replica.Op[ScheduleCmd, *Schedule]{Type: 65, Name: "schedule.create.queue-names"}
	ScheduleUpdateQueueNames = replica.Op[ScheduleCmd, *Schedule]{Type: 66, Name: "schedule.update.queue-names"}
	// A queue configuration with push settings (QueueConfigCmd.Push).
	QueueConfigurePush = replica.Op[QueueConfigCmd, replica.None]{Type: 69, Name: "queue configure.push"}
)

// Push (push.go): a queue's push disabled by its handler's 410, whether it
// was.
var PushDisable = replica.Op[PushDisableCmd, bool]{Type: 70, Name: "queue push.disable"}

// SigningKeysAdd adds a key to a namespace's signing key set (signing.go):
// its first, or a rotation.
var SigningKeysAdd = replica.Op[SigningKeysCmd, *SigningKeySet]{Type: 71, Name: "namespace signing-keys.add"}

// Lifecycle webhooks (webhooks.go): an endpoint's settings, its secret's
// rotation, and the leader's delivery progress.
var (
	WebhookCreate   = replica.Op[WebhookCmd, *WebhookRecord]{Type: 72, Name: "webhook.create"}
	WebhookUpdate   = replica.Op[WebhookCmd, *WebhookRecord]{Type: 73, Name: "webhook.update"}
	WebhookDelete   = replica.Op[WebhookIDCmd, replica.None]{Type: 74, Name: "webhook.delete"}
	WebhookSecret   = replica.Op[WebhookSecretCmd, *WebhookRecord]{Type: 75, Name: "webhook.secret.rotate"}
	WebhookProgress = replica.Op[WebhookProgressCmd, bool]{Type: 76, Name: "webhook.progress"} // whether the endpoint is there
)

// Delivery metering (usage.go): a push delivery's settle by the
// dispatcher's worker, and webhook progress that carries the attempts
// made (WebhookProgressCmd.Attempts). Under numbers of their own since
// they change the usage buckets: an older node stops at them instead of
// leaving push_deliveries and webhook_deliveries out.
var (
	AckPush                = replica.Op[AckCmd, job.State]{Type: 77, Name: "ack.push"}
	FailPush               = replica.Op[FailCmd, *FailOutcome]{Type: 78, Name: "fail.push"}
	WebhookProgressMetered = replica.Op[WebhookProgressCmd, bool]{Type: 79, Name: "webhook.progress.metered"}
	// The dispatcher's acks, grouped (shard/push): each a push delivery.
	AckBatchPush = replica.Op[AckBatchCmd, []AckOutcome]{Type: 82, Name: "ack-batch.push"}
)

// The delivery log of webhook endpoints (webhook_log.go): the runner's
// progress with what it did since its last (WebhookProgressCmd.Log,
// metered as WebhookProgressMetered), and a test's or a redelivery's
// attempt. An older node would drop the records, so they have numbers of
// their own.
var (
	WebhookProgressLogged = replica.Op[WebhookProgressCmd, bool]{Type: 87, Name: "webhook.progress.logged"}
	WebhookLog            = replica.Op[WebhookLogCmd, bool]{Type: 88, Name: "webhook.log"} // whether the endpoint is there
)

// EventLogStartDetailed makes the events of other things carry their
// details (eventlog_things.go), switching the log on and wide first.
var EventLogStartDetailed = replica.Op[EventLogStartCmd, replica.None]{Type: 89, Name: "events.start.detailed"}

// EventLogStartWide makes the event log keep the events of other things
// than jobs (eventlog_things.go), switching it on first when it is off.
var EventLogStartWide = replica.Op[EventLogStartCmd, replica.None]{Type: 80, Name: "events.start.wide"}

// EventLogStartCounted starts counting each namespace's events
// (eventcount.go), starting the log and making it wide first when it is
// not: the leader proposes it instead of EventLogStartWide.
var EventLogStartCounted = replica.Op[EventLogStartCmd, replica.None]{Type: 86, Name: "events.start.counted"}

// EventLogStartBlocks makes a counted log write an entry's events of a
// namespace under one key (eventblock.go); the leader proposes it after
// EventLogStartCounted.
var EventLogStartBlocks = replica.Op[EventLogStartCmd, replica.None]{Type: 118, Name: "events.start.blocks"}

// NamespaceConfigureEgress is a namespace's settings with an egress
// allow-list (NamespaceConfig.EgressAllow) or that keep a setting
// (NamespaceConfigCmd.KeepRetention, KeepEgress): an older node would
// drop them and store the settings without the list, or clear the one
// kept.
var NamespaceConfigureEgress = replica.Op[NamespaceConfigCmd, replica.None]{Type: 81, Name: "namespace.configure.egress"}

// NamespaceConfigureOTLP is a namespace's settings with an OTLP endpoint
// (NamespaceConfig.OTLPEndpoint) or that keep one (KeepOTLP): an older
// node would drop it, or clear the one kept.
var NamespaceConfigureOTLP = replica.Op[NamespaceConfigCmd, replica.None]{Type: 94, Name: "namespace.configure.otlp"}

// Jobs with a W3C trace context (job.Job.Trace, in the records an
// enqueue carries, a batch's callback trace, a chain step's; a fire's
// FireCmd.Trace): an older node would drop it from what it stores.
var (
	EnqueueTraced      = replica.Op[EnqueueCmd, []EnqueueResult]{Type: 83, Name: "enqueue.traced"}
	ScheduleFireTraced = replica.Op[FireCmd, bool]{Type: 84, Name: "schedule.fire.traced"}
)

// Failures that make the job dead at once (FailCmd.NonRetryable): an
// older node would drop the flag and schedule a retry. By a worker (with
// or without a lease) and by the push dispatcher (metered as FailPush).
var (
	FailNonRetryable     = replica.Op[FailCmd, *FailOutcome]{Type: 92, Name: "fail.non-retryable"}
	FailPushNonRetryable = replica.Op[FailCmd, *FailOutcome]{Type: 93, Name: "fail.push.non-retryable"}
)

// registerVersions registers the numbers above with their commands'
// handlers.
func (e *Engine) registerVersions(r *replica.Registry) {
	FetchNamed.Handle(r, gated(e, e.applyFetch))
	FetchBatchNamed.Handle(r, gated(e, e.applyFetchBatch))
	AckLease.Handle(r, gated(e, e.applyAck))
	FailLease.Handle(r, gated(e, e.applyFail))
	HeartbeatLease.Handle(r, gated(e, e.applyHeartbeat))
	AckBatchLease.Handle(r, gated(e, e.applyAckBatch))
	ReleaseLease.Handle(r, gated(e, e.applyRelease))
	ScheduleCreateDefaults.Handle(r, gated(e, namespaceNames(e.applyScheduleCreate)))
	ScheduleUpdateDefaults.Handle(r, gated(e, namespaceNames(e.applyScheduleUpdate)))
	ScheduleFireDefaults.Handle(r, loopGated(e, e.applyScheduleFire))
	ScheduleCreateQueueNames.Handle(r, gated(e, e.applyScheduleCreate))
	ScheduleUpdateQueueNames.Handle(r, gated(e, e.applyScheduleUpdate))
	QueueConfigurePush.Handle(r, gated(e, e.applyQueueConfigure))
	PushDisable.Handle(r, loopGated(e, e.applyPushDisable))
	SigningKeysAdd.Handle(r, gated(e, e.applySigningKeys))
	WebhookCreate.Handle(r, gated(e, e.applyWebhookCreate))
	WebhookUpdate.Handle(r, gated(e, e.applyWebhookUpdate))
	WebhookDelete.Handle(r, gated(e, e.applyWebhookDelete))
	WebhookSecret.Handle(r, gated(e, e.applyWebhookSecret))
	WebhookProgress.Handle(r, loopGated(e, e.applyWebhookProgress))
	AckPush.Handle(r, gated(e, e.applyAckPush))
	FailPush.Handle(r, gated(e, e.applyFailPush))
	AckBatchPush.Handle(r, gated(e, e.applyAckBatchPush))
	WebhookProgressMetered.Handle(r, loopGated(e, e.applyWebhookProgressMetered))
	WebhookProgressLogged.Handle(r, loopGated(e, e.applyWebhookProgressLogged))
	WebhookLog.Handle(r, gated(e, e.applyWebhookLog))
	EventLogStartDetailed.Handle(r, e.applyEventLogStartDetailed)
	EventLogStartWide.Handle(r, e.applyEventLogStartWide)
	EventLogStartCounted.Handle(r, e.applyEventLogStartCounted)
	EventLogStartBlocks.Handle(r, e.applyEventLogStartBlocks)
	EventLogStartKept.Handle(r, e.applyEventLogStartKept)
	NamespaceConfigureEgress.Handle(r, gated(e, e.applyNamespaceConfigure))
	NamespaceConfigureOTLP.Handle(r, gated(e, e.applyNamespaceConfigure))
	EnqueueTraced.Handle(r, gated(e, e.applyEnqueue))
	ScheduleFireTraced.Handle(r, loopGated(e, e.applyScheduleFire))
	FailNonRetryable.Handle(r, gated(e, e.applyFail))
	FailPushNonRetryable.Handle(r, gated(e, e.applyFailPush))
	RestoreStartRefusing.Handle(r, e.applyRestoreStartRefusing)
}

// EnqueueFor is the op of c; traced says whether some job of c, its
// batch's callback or a chain step it carries has a trace context (the
// proposer knows; the records are encoded).
func EnqueueFor(c *EnqueueCmd, traced bool) replica.Op[EnqueueCmd, []EnqueueResult] {
	if len(c.Checked) > 0 {
		return EnqueueSchema // a node that knows it knows traces
	}
	if traced || c.Batch != nil && c.Batch.TraceParent != "" {
		return EnqueueTraced
	}
	return Enqueue
}

// NamespaceConfigureFor is the op of c.
func NamespaceConfigureFor(c *NamespaceConfigCmd) replica.Op[NamespaceConfigCmd, replica.None] {
	if c.Config.OTLPEndpoint != "" || c.KeepOTLP {
		return NamespaceConfigureOTLP
	}
	if len(c.Config.EgressAllow) > 0 || c.KeepRetention || c.KeepEgress {
		return NamespaceConfigureEgress
	}
	return NamespaceConfigure
}

// QueueConfigureFor is the op of c.
func QueueConfigureFor(c *QueueConfigCmd) replica.Op[QueueConfigCmd, replica.None] {
	if c.Schema != nil || c.KeepSchema {
		return QueueConfigureSchema // a node that knows it knows push
	}
	if c.Push != nil {
		return QueueConfigurePush
	}
	return QueueConfigure
}

// namespaceNames holds the numbers from before ScheduleCmd.QueueNames to
// the rule they applied with, a name free in the whole namespace, even
// for a command that carried the flag under one of them.
func namespaceNames(apply func(*replica.Tx, *ScheduleCmd) (*Schedule, error)) func(*replica.Tx, *ScheduleCmd) (*Schedule, error) {
	return func(tx *replica.Tx, c *ScheduleCmd) (*Schedule, error) {
		c.QueueNames = false
		return apply(tx, c)
	}
}

// FetchFor is the op of c.
func FetchFor(c *FetchCmd) replica.Op[FetchCmd, *job.Job] {
	if c.Named {
		return FetchNamed
	}
	return Fetch
}

// FetchBatchFor is the op of c.
func FetchBatchFor(c *FetchBatchCmd) replica.Op[FetchBatchCmd, []*job.Job] {
	if c.Fetch.Named {
		return FetchBatchNamed
	}
	return FetchBatch
}

// AckFor is the op of c: a push delivery's settle by the dispatcher
// (its worker id, a lease) is metered.
func AckFor(c *AckCmd) replica.Op[AckCmd, job.State] {
	if c.Usage != nil && !isPushWorker(c.WorkerID) {
		return AckUsage // a node that knows it knows leases
	}
	if isPushWorker(c.WorkerID) && !c.Lease.IsZero() {
		return AckPush
	}
	if !c.Lease.IsZero() {
		return AckLease
	}
	return Ack
}

// FailFor is the op of c, metered as AckFor's.
func FailFor(c *FailCmd) replica.Op[FailCmd, *FailOutcome] {
	push := isPushWorker(c.WorkerID) && !c.Lease.IsZero()
	switch {
	case c.Usage != nil && !push:
		return FailUsage // a node that knows it knows leases and non_retryable
	case c.NonRetryable && push:
		return FailPushNonRetryable
	case c.NonRetryable:
		return FailNonRetryable
	case push:
		return FailPush
	}
	if !c.Lease.IsZero() {
		return FailLease
	}
	return Fail
}

// HeartbeatFor is the op of c.
func HeartbeatFor(c *HeartbeatCmd) replica.Op[HeartbeatCmd, []string] {
	for i := range c.Jobs {
		if c.Jobs[i].Usage != nil {
			return HeartbeatUsage
		}
	}
	for i := range c.Jobs {
		if !c.Jobs[i].Lease.IsZero() {
			return HeartbeatLease
		}
	}
	return Heartbeat
}

// AckBatchFor is the op of c.
func AckBatchFor(c *AckBatchCmd) replica.Op[AckBatchCmd, []AckOutcome] {
	for i := range c.Items {
		if c.Items[i].Usage != nil && !isPushWorker(c.WorkerID) {
			return AckBatchUsage
		}
	}
	for i := range c.Items {
		if !c.Items[i].Lease.IsZero() {
			if isPushWorker(c.WorkerID) {
				return AckBatchPush
			}
			return AckBatchLease
		}
	}
	return AckBatch
}

// ReleaseFor is the op of c.
func ReleaseFor(c *ReleaseCmd) replica.Op[ReleaseCmd, []bool] {
	for i := range c.Jobs {
		if !c.Jobs[i].Lease.IsZero() {
			return ReleaseLease
		}
	}
	return Release
}

// ScheduleCreateFor and ScheduleUpdateFor are the ops of c. A node that
// knows the QueueNames numbers knows DefaultRetries too, so they carry
// either.
func ScheduleCreateFor(c *ScheduleCmd) replica.Op[ScheduleCmd, *Schedule] {
	switch {
	case c.QueueNames:
		return ScheduleCreateQueueNames
	case c.Sched.DefaultRetries:
		return ScheduleCreateDefaults
	}
	return ScheduleCreate
}

func ScheduleUpdateFor(c *ScheduleCmd) replica.Op[ScheduleCmd, *Schedule] {
	switch {
	case c.QueueNames:
		return ScheduleUpdateQueueNames
	case c.Sched.DefaultRetries:
		return ScheduleUpdateDefaults
	}
	return ScheduleUpdate
}

// ScheduleFireFor is the op of c.
func ScheduleFireFor(c *FireCmd) replica.Op[FireCmd, bool] {
	if c.Checked {
		return ScheduleFireSchema // a node that knows it knows traces
	}
	if c.Trace != "" {
		return ScheduleFireTraced // a node that knows it knows QueueDefaults
	}
	if c.QueueDefaults {
		return ScheduleFireDefaults
	}
	return ScheduleFire
}

// isPushWorker reports whether id is the dispatcher's worker of some queue.
func isPushWorker(id string) bool { return strings.HasPrefix(id, PushWorker("")) }

// WebhookProgressFor is the op of c: with records for the delivery log,
// the logged number (which meters too); with attempts to meter, the
// metered one.
func WebhookProgressFor(c *WebhookProgressCmd) replica.Op[WebhookProgressCmd, bool] {
	if len(c.Log) > 0 {
		return WebhookProgressLogged
	}
	if c.Attempts > 0 {
		return WebhookProgressMetered
	}
	return WebhookProgress
}
