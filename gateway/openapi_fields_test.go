package gateway

import (
	"sort"

	"github.com/jobbie/jobbie/wire"
)

// What the wire types' Go types cannot say of their fields: the values a
// string takes and the limits wire states, by "Type.json_name". Each takes
// the field's schema as reflection made it.
var fieldSchemas = map[string]func(obj) obj{}

func init() {
	states := []string{wire.StateScheduled, wire.StatePending, wire.StateActive, wire.StateCompleted,
		wire.StateRetrying, wire.StateDead, wire.StateCancelled, wire.StateHeld}
	priorities := []string{wire.PriorityCritical, wire.PriorityHigh, wire.PriorityNormal}
	backoffs := []string{wire.BackoffExponential, wire.BackoffLinear, wire.BackoffFixed, wire.BackoffNone}
	bulkActions := []string{wire.BulkRetry, wire.BulkDelete, wire.BulkCancel, wire.BulkMove, wire.BulkRequeue, wire.BulkChangePriority,
		wire.BulkApprove, wire.BulkReject}
	bulkStates := []string{wire.BulkProcessing, wire.BulkCompleted, wire.BulkCancelled}
	for field, values := range map[string][]string{
		"EnqueueRequest.priority":              priorities,
		"EnqueueRequest.retry_backoff":         backoffs,
		"EnqueueRequest.on_dependency_failure": {wire.OnDependencyFailureCancel, wire.OnDependencyFailureRun},
		"EnqueueResponse.status":               states,
		"JobDetail.state":                      states,
		"JobDetail.priority":                   priorities,
		"JobDetail.retry_backoff":              backoffs,
		"DeadJob.state":                        states,
		"AckRequest.step_status":               {wire.StepContinue, wire.StepExit},
		"AckBatchEntry.step_status":            {wire.StepContinue, wire.StepExit},
		"FailResponse.status":                  {wire.StateRetrying, wire.StatePending, wire.StateDead, wire.StateCancelled},
		"BulkRequest.action":                   bulkActions,
		"BulkRequest.priority":                 priorities,
		"BulkOperation.action":                 bulkActions,
		"BulkOperation.status":                 bulkStates,
		"BulkAccepted.status":                  bulkStates,
		"SearchFilter.priority":                priorities,
		"SearchFilter.held_reason":             {wire.HeldReasonBudget},
		"SearchRequest.order":                  {wire.OrderAsc, wire.OrderDesc},
		"Worker.status":                        {wire.WorkerActive, wire.WorkerGone},
		"ClusterNode.role":                     {wire.NodeLeader, wire.NodeFollower, wire.NodeNonvoter},
		"ClusterNode.status":                   {wire.NodeHealthy, wire.NodeUnreachable},
		"Event.type": {wire.EventEnqueued, wire.EventStarted, wire.EventCompleted, wire.EventFailed,
			wire.EventDead, wire.EventCancelled, wire.EventPending, wire.EventRetried},
		"Backup.state":             {wire.BackupRunning, wire.BackupCompleted, wire.BackupFailed},
		"Event.state":              states,
		"Schedule.priority":        priorities,
		"ScheduleRequest.priority": priorities,
		"StepSpec.priority":        priorities,
		"StepSpec.retry_backoff":   backoffs,
		"Usage.granularity":        {wire.GranularityHour, wire.GranularityDay},
		"Invoice.status":           {wire.InvoiceOpen, wire.InvoiceClosed},
		"InvoiceSummary.status":    {wire.InvoiceOpen, wire.InvoiceClosed},
		"QueuePush.mode":           {wire.PushAlways, wire.PushWhenNoWorkers},
		"QueuePushRequest.mode":    {wire.PushAlways, wire.PushWhenNoWorkers},
		"AlertRuleRequest.kind":    wire.AlertKinds,
		"AlertRule.kind":           wire.AlertKinds,
		"AlertRule.state":          {wire.AlertOK, wire.AlertFiring},
		"WebhookAlertData.kind":    wire.AlertKinds,
		"QueueScale.limited_by":    {wire.ScaleLimitedPaused, wire.ScaleLimitedConcurrency},
	} {
		fieldSchemas[field] = enum(values...)
	}
	fieldSchemas["SearchFilter.state"] = func(sc obj) obj {
		return obj{"type": "array", "items": obj{"type": "string", "enum": states}}
	}
	// The fields wire keeps as raw JSON to tell absent, null and a value
	// apart, or to name a field of the wrong type: what they take.
	for field, sc := range map[string]obj{
		"BulkRequest.filter":                         ref("SearchFilter"),
		"EnqueueRequest.scheduled_at":                {"type": []string{"string", "null"}, "format": "date-time"},
		"CreateKeyRequest.expires_at":                {"type": []string{"string", "null"}, "format": "date-time"},
		"ConcurrencyRequest.max":                     {"type": []string{"integer", "null"}, "minimum": 1},
		"QueueSpec.concurrency":                      {"type": []string{"integer", "null"}, "minimum": 1},
		"KeyConcurrencyRequest.max":                  {"type": "integer", "minimum": 1, "maximum": wire.MaxKeyConcurrency},
		"NamespaceEgressRequest.egress_allow":        {"type": []string{"array", "null"}, "items": obj{"type": "string"}},
		"UpdateNamespaceRequest.description":         {"type": []string{"string", "null"}, "maxLength": wire.MaxDescription},
		"UpdateNamespaceRequest.deletion_protection": {"type": []string{"boolean", "null"}},
		"QueuePushRequest.max_in_flight":             {"type": []string{"integer", "null"}, "minimum": 1, "maximum": wire.MaxPushMaxInFlight},
		"QueuePushRequest.disabled":                  {"description": "Accepted so that a queue read back is a valid spec; ignored."},
		"QueueSpec.schema": {"type": []string{"object", "boolean", "null"}, "description": "A JSON Schema (draft 2020-12, at most " +
			"65,536 bytes, no remote $ref) every payload enqueued to the queue must satisfy; null removes it, absent keeps it."},
		"Queue.schema": {"type": []string{"object", "boolean", "null"}, "description": "The queue's payload schema, canonical (keys sorted), or null."},
	} {
		fieldSchemas[field] = func(obj) obj { return sc }
	}
	for field, lim := range map[string]obj{
		"EnqueueRequest.queue":               {"minLength": 1},
		"EnqueueRequest.unique_key":          {"maxLength": wire.MaxUniqueKey},
		"EnqueueRequest.max_retries":         {"minimum": 0, "maximum": wire.MaxMaxRetries},
		"EnqueueRequest.tags":                {"maxProperties": wire.MaxTags},
		"EnqueueRequest.depends_on":          {"maxItems": wire.MaxDependsOn},
		"EnqueueRequest.concurrency_key":     {"maxLength": wire.MaxFairnessKey},
		"EnqueueRequest.fairness_key":        {"maxLength": wire.MaxFairnessKey},
		"BatchRequest.jobs":                  {"minItems": 1, "maxItems": wire.MaxBatchJobs},
		"FetchRequest.queues":                {"minItems": 1, "maxItems": wire.MaxFetchQueues},
		"FetchRequest.worker_id":             {"maxLength": wire.MaxWorkerID},
		"FetchRequest.hostname":              {"maxLength": wire.MaxWorkerID},
		"FetchRequest.timeout":               {"minimum": 0, "maximum": wire.MaxFetchTimeout.Seconds()},
		"FetchBatchRequest.max":              {"minimum": 0, "maximum": wire.MaxFetchBatch},
		"AckBatchRequest.acks":               {"minItems": 1, "maxItems": wire.MaxAckBatch},
		"HeartbeatRequest.jobs":              {"maxItems": wire.MaxHeartbeatJobs},
		"BulkRequest.job_ids":                {"maxItems": wire.MaxBulkIDs},
		"SearchRequest.limit":                {"minimum": 1, "maximum": wire.MaxSearchLimit},
		"CreateNamespaceRequest.description": {"maxLength": wire.MaxDescription},
		"CreateKeyRequest.description":       {"maxLength": wire.MaxDescription},
		"ScheduleRequest.name":               {"maxLength": wire.MaxScheduleName},
		"QueueSpec.description":              {"maxLength": wire.MaxQueueDescription},
		"AlertRuleRequest.name":              {"maxLength": 64},
		"AlertRuleRequest.threshold":         {"minimum": 0, "maximum": wire.MaxAlertThreshold},
		"AlertRuleRequest.min_count":         {"minimum": 0, "maximum": wire.MaxAlertMinCount},
	} {
		fieldSchemas[field] = limit(lim)
	}
}

// requiredIn are the fields a request body must have: the server refuses
// a body without them (400 naming the field).
var requiredIn = map[string]bool{}

func init() {
	for _, f := range []string{
		"EnqueueRequest.queue", "BatchRequest.jobs", "BatchSpec.callback_queue", "ChainSpec.steps", "StepSpec.queue",
		"FetchRequest.queues", "AckBatchRequest.acks", "AckBatchEntry.job_id", "HeartbeatRequest.jobs",
		"MoveRequest.queue", "BulkRequest.action",
		"ScheduleRequest.queue", "ScheduleRequest.cron", "SchedulePreviewRequest.cron",
		"WebhookRequest.url", "WebhookRedeliverRequest.event_id",
		"CreateNamespaceRequest.name", "NamespaceEgressRequest.egress_allow", "NamespaceTracingRequest.otlp_endpoint",
		"CreateBackupRequest.namespace", "BackupPolicyRequest.cron", "CreateJoinTokenRequest.name",
		"ConcurrencyRequest.max", "QueuePushRequest.url",
		"AlertRuleRequest.kind", "AlertRuleRequest.for",
	} {
		requiredIn[f] = true
	}
}

// durationFields are the duration fields of wire, which it holds as raw
// JSON (wire.ParseDuration reads them): by their JSON names.
var durationFields = map[string]bool{
	"retry_base_delay": true, "retry_max_delay": true, "expire_after": true, "lease_duration": true,
	"retention": true, "period": true, "timeout": true, "grace_period": true, "expires_in": true,
	"retire_after": true,
}

// enum narrows a string (or a list of strings, or a nullable one) to
// values.
func enum(values ...string) func(obj) obj {
	sort.Strings(values)
	return func(sc obj) obj { return with(sc, obj{"enum": values}) }
}

func limit(lim obj) func(obj) obj { return func(sc obj) obj { return with(sc, lim) } }

// with is sc with more keywords; on an array's items for an item's.
func with(sc, more obj) obj {
	out := obj{}
	for k, v := range sc {
		out[k] = v
	}
	if items, ok := sc["items"].(obj); ok {
		if _, isEnum := more["enum"]; isEnum {
			out["items"] = with(items, more)
			return out
		}
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// errorCodes is every error code wire names.
func errorCodes() []string {
	codes := []wire.ErrorCode{
		wire.CodeBadRequest, wire.CodeInvalidJSON, wire.CodeUnauthenticated, wire.CodeForbidden,
		wire.CodeNotFound, wire.CodeMethodNotAllowed, wire.CodeConflict, wire.CodeLeaseMismatch,
		wire.CodeTooLarge, wire.CodeRateLimited, wire.CodeNoLeader, wire.CodeUnavailable, wire.CodeInternal,
		wire.CodeConnectionLimit, wire.CodeKeyLongPollLimit, wire.CodeTenantLongPollLimit,
		wire.CodeHeadersTooLarge, wire.CodeRevocationsStale, wire.CodeShardAnswerTooLarge,
		wire.CodeSelfHostedBudget, wire.CodeDeletionProtected, wire.CodeNamespaceNotEmpty,
		wire.CodeRoleInUse, wire.CodeQuotaExceeded, wire.CodeNamespaceMoving, wire.CodeAmbiguousName,
		wire.CodeIdempotencyKeyReused, wire.CodeEncryptionKeyRevoked, wire.CodeEncryptionOff, wire.CodeSchemaChanged, wire.CodeBudgetExceeded,
	}
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = string(c)
	}
	sort.Strings(out)
	return out
}
