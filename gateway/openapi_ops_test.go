package gateway

import (
	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/wire"
)

// op is what the OpenAPI document says of one route besides what the
// route table says: its operationId, tag, summary, body and answers.
type op struct {
	id, tag, summary string
	req              any  // the request body's type (a zero value), nil for none
	optionalBody     bool // the body may be empty
	ok               []opAnswer
	query            []obj
	conflictOnRead   bool // a GET that may opAnswer 409 (a schedule's ambiguous name)
}

// opAnswer is one successful opAnswer: body is a zero value of its JSON type,
// or with media another content type (a string when body is nil).
type opAnswer struct {
	status  int
	desc    string
	body    any
	media   string
	schema  obj // the schema of a body that is no Go type
	headers []string
}

func okAns(body any) []opAnswer      { return []opAnswer{{status: 200, desc: "OK", body: body}} }
func createdAns(body any) []opAnswer { return []opAnswer{{status: 201, desc: "Created", body: body}} }
func noContent() []opAnswer          { return []opAnswer{{status: 204, desc: "Done; no body."}} }

func qp(name, typ, desc string, extra ...any) obj {
	sc := obj{"type": typ}
	for i := 0; i+1 < len(extra); i += 2 {
		sc[extra[i].(string)] = extra[i+1]
	}
	return obj{"name": name, "in": "query", "required": false, "description": desc, "schema": sc}
}

func pageParams(max int) []obj {
	return []obj{qp("limit", "integer", "Items on a page.", "minimum", 1, "maximum", max),
		qp("cursor", "string", "The cursor of the previous page.")}
}

func sse(desc string) []opAnswer {
	return []opAnswer{{status: 200, desc: desc, media: "text/event-stream"}}
}

// Tags: one per resource family.
const (
	tJobs       = "jobs"
	tWork       = "work"
	tFlows      = "flows"
	tSearch     = "search"
	tQueues     = "queues"
	tSchedules  = "schedules"
	tWorkers    = "workers"
	tWebhooks   = "webhooks"
	tAlerts     = "alerts"
	tNamespaces = "namespaces"
	tBackups    = "backups"
	tKeys       = "keys"
	tRoles      = "roles"
	tUsage      = "usage"
	tShards     = "shards"
	tAudit      = "audit"
	tSSO        = "sso"
	tAI         = "ai"
	tMeta       = "meta"
)

func tagList() []any {
	var out []any
	for _, t := range [][2]string{
		{tJobs, "Enqueueing and managing jobs (docs/api/jobs.md)."},
		{tWork, "Workers' calls: fetch (long-poll), ack, fail, heartbeat."},
		{tFlows, "Batches and chains."},
		{tSearch, "Job search, bulk actions and background bulk operations."},
		{tQueues, "Queues: counts and settings."},
		{tSchedules, "Cron schedules."},
		{tWorkers, "Workers, the shard cluster's health, and Server-Sent Events."},
		{tWebhooks, "Lifecycle webhooks and their signing keys."},
		{tAlerts, "Alert rules on a namespace's queues, fired and resolved as webhook events."},
		{tNamespaces, "A tenant's namespaces and their egress allow-lists."},
		{tBackups, "Backups, restores and backup policies."},
		{tKeys, "API keys."},
		{tRoles, "Built-in and custom roles."},
		{tUsage, "Usage, plan and invoices."},
		{tShards, "A tenant's self-hosted shards."},
		{tAudit, "The tenant's audit log (docs/api/audit.md)."},
		{tSSO, "Console sign-in through the tenant's identity provider (docs/api/sso.md)."},
		{tAI, "AI workloads: model usage and cost (docs/api/ai.md)."},
		{tMeta, "This document."},
	} {
		out = append(out, obj{"name": t[0], "description": t[1]})
	}
	return out
}

var ackOK = opAnswer{status: 200, desc: `"completed", or "cancelled" when a cancel was asked while it ran.`, body: wire.StatusResponse{}}

// operations is every route of the route table, by "METHOD path".
var operations = map[string]op{
	"POST /api/v1/enqueue": {id: "enqueueJob", tag: tJobs, summary: "Enqueue a job", req: wire.EnqueueRequest{},
		ok: []opAnswer{{status: 201, desc: "Enqueued.", body: wire.EnqueueResponse{}},
			{status: 200, desc: "A unique key matched an existing job, which it names; nothing was created.", body: wire.EnqueueResponse{}}}},
	"POST /api/v1/enqueue/batch": {id: "enqueueBatch", tag: tJobs, summary: "Enqueue jobs atomically, optionally as a batch with a callback", req: wire.BatchRequest{}, ok: createdAns(wire.BatchResponse{})},
	"POST /api/v1/fetch": {id: "fetchJob", tag: tWork, summary: "Lease one job, long-polling up to timeout seconds", req: wire.FetchRequest{},
		ok: []opAnswer{{status: 200, desc: "A job, leased to the caller.", body: wire.FetchedJob{}},
			{status: 204, desc: "The wait ended with no job."}}},
	"POST /api/v1/fetch/batch": {id: "fetchJobs", tag: tWork, summary: "Lease up to max jobs in one long-poll", req: wire.FetchBatchRequest{},
		ok: []opAnswer{{status: 200, desc: "The jobs leased: an empty list when the wait ended with none. cancels: the worker's jobs cancelled while it held them, told once; a waiting fetch answers as soon as there is one.", body: wire.FetchBatchResponse{}}}},
	"POST /api/v1/ack/batch": {id: "ackJobs", tag: tWork, summary: "Complete many jobs of one worker", req: wire.AckBatchRequest{}, ok: okAns(wire.AckBatchResponse{})},
	"POST /api/v1/ack/:id":   {id: "ackJob", tag: tWork, summary: "Complete a job", req: wire.AckRequest{}, optionalBody: true, ok: []opAnswer{ackOK}},
	"POST /api/v1/fail/:id":  {id: "failJob", tag: tWork, summary: "Fail a job's attempt", req: wire.FailRequest{}, optionalBody: true, ok: okAns(wire.FailResponse{})},
	"POST /api/v1/heartbeat": {id: "heartbeat", tag: tWork, summary: "Extend leases, report progress; learn of cancels", req: wire.HeartbeatRequest{}, ok: okAns(wire.HeartbeatResponse{})},
	"POST /api/v1/release":   {id: "releaseJobs", tag: tWork, summary: "Give back leases the worker will not work on", req: wire.ReleaseRequest{}, ok: okAns(wire.ReleaseResponse{})},

	"GET /api/v1/jobs/:id":         {id: "getJob", tag: tJobs, summary: "A job, its attempts and timeline", ok: okAns(wire.JobDetail{})},
	"GET /api/v1/jobs/:id/chain":   {id: "getJobChain", tag: tFlows, summary: "The chain a job is a step of", ok: okAns(wire.ChainView{})},
	"POST /api/v1/jobs/:id/retry":  {id: "retryJob", tag: tJobs, summary: "Retry a dead, cancelled or completed job now", req: struct{}{}, optionalBody: true, ok: okAns(wire.JobOpResponse{})},
	"POST /api/v1/jobs/:id/cancel": {id: "cancelJob", tag: tJobs, summary: "Cancel a job", req: struct{}{}, optionalBody: true, ok: okAns(wire.StatusResponse{})},
	"POST /api/v1/jobs/:id/move":   {id: "moveJob", tag: tJobs, summary: "Move a job to another queue", req: wire.MoveRequest{}, ok: okAns(wire.JobOpResponse{})},
	"DELETE /api/v1/jobs/:id":      {id: "deleteJob", tag: tJobs, summary: "Delete a job", ok: noContent()},
	"GET /api/v1/dead": {id: "listDeadJobs", tag: tJobs, summary: "Dead jobs, newest first", ok: okAns(wire.DeadPage{}),
		query: append([]obj{qp("queue", "string", "Only this queue's.")}, pageParams(wire.MaxDeadLimit)...)},
	"POST /api/v1/jobs/search": {id: "searchJobs", tag: tSearch, summary: "Search jobs by filter, sorted, a page at a time", req: wire.SearchRequest{}, ok: okAns(wire.SearchPage{})},
	"POST /api/v1/jobs/bulk": {id: "bulkJobs", tag: tSearch, summary: "Act on jobs by ids or by filter", req: wire.BulkRequest{},
		ok: []opAnswer{{status: 200, desc: "Done at once.", body: wire.BulkResult{}},
			{status: 202, desc: "A filter matched more than a request does at once: a background operation.", body: wire.BulkAccepted{}}}},
	"GET /api/v1/bulk":              {id: "listBulkOperations", tag: tSearch, summary: "Background bulk operations, newest first", ok: okAns(wire.BulkOperationList{}), query: pageParams(wire.MaxBulkListLimit)},
	"GET /api/v1/bulk/:id":          {id: "getBulkOperation", tag: tSearch, summary: "A background bulk operation", ok: okAns(wire.BulkOperation{})},
	"GET /api/v1/bulk/:id/progress": {id: "streamBulkProgress", tag: tSearch, summary: "A bulk operation's progress as Server-Sent Events", ok: sse("`progress` events, then one `done` event (data: a BulkOperation).")},
	"DELETE /api/v1/bulk/:id":       {id: "cancelBulkOperation", tag: tSearch, summary: "Cancel a background bulk operation", ok: okAns(wire.BulkOperation{})},
	"GET /api/v1/batches":           {id: "listBatches", tag: tFlows, summary: "Batches, newest first", ok: okAns(wire.BatchList{}), query: pageParams(wire.MaxBatchListLimit)},
	"GET /api/v1/batches/:id":       {id: "getBatch", tag: tFlows, summary: "A batch and its jobs' counts", ok: okAns(wire.Batch{})},

	"GET /api/v1/workers":            {id: "listWorkers", tag: tWorkers, summary: "Workers seen lately", ok: okAns(wire.WorkerList{})},
	"POST /api/v1/workers/:id/drain": {id: "drainWorker", tag: tWorkers, summary: "Ask a worker to stop taking jobs", ok: okAns(wire.WorkerDrainResponse{})},
	"GET /api/v1/cluster":            {id: "getClusterHealth", tag: tWorkers, summary: "The namespace's shard cluster: its nodes' health", ok: okAns(wire.ClusterHealth{})},
	"GET /api/v1/events": {id: "streamEvents", tag: tWorkers, summary: "The namespace's job lifecycle events as Server-Sent Events",
		ok:    sse("Events (data: an Event; id: resumable with Last-Event-ID)."),
		query: []obj{{"name": wire.LastEventIDHeader, "in": "header", "required": false, "description": "Resume after this event.", "schema": obj{"type": "string"}}}},

	"GET /api/v1/signing-keys":                {id: "listSigningKeys", tag: tWebhooks, summary: "The namespace's webhook signing keys", ok: okAns(wire.WebhookKeyList{})},
	"POST /api/v1/signing-keys/rotate":        {id: "rotateSigningKeys", tag: tWebhooks, summary: "Rotate the webhook signing key", ok: okAns(wire.WebhookKeyList{})},
	"GET /api/v1/webhooks":                    {id: "listWebhooks", tag: tWebhooks, summary: "Webhook endpoints", ok: okAns(wire.WebhookList{})},
	"POST /api/v1/webhooks":                   {id: "createWebhook", tag: tWebhooks, summary: "Create a webhook endpoint", req: wire.WebhookRequest{}, ok: createdAns(wire.Webhook{})},
	"GET /api/v1/webhooks/:id":                {id: "getWebhook", tag: tWebhooks, summary: "A webhook endpoint", ok: okAns(wire.Webhook{})},
	"PUT /api/v1/webhooks/:id":                {id: "updateWebhook", tag: tWebhooks, summary: "Replace a webhook endpoint", req: wire.WebhookRequest{}, ok: okAns(wire.Webhook{})},
	"DELETE /api/v1/webhooks/:id":             {id: "deleteWebhook", tag: tWebhooks, summary: "Delete a webhook endpoint", ok: noContent()},
	"GET /api/v1/webhooks/:id/deliveries":     {id: "listWebhookDeliveries", tag: tWebhooks, summary: "A webhook's recent deliveries", ok: okAns(wire.WebhookDeliveryList{})},
	"POST /api/v1/webhooks/:id/rotate-secret": {id: "rotateWebhookSecret", tag: tWebhooks, summary: "Rotate a webhook's secret", ok: okAns(wire.Webhook{})},
	"POST /api/v1/webhooks/:id/test":          {id: "testWebhook", tag: tWebhooks, summary: "Send a test event now", ok: okAns(wire.WebhookDelivery{})},
	"POST /api/v1/webhooks/:id/redeliver":     {id: "redeliverWebhook", tag: tWebhooks, summary: "Deliver a past event again", req: wire.WebhookRedeliverRequest{}, ok: okAns(wire.WebhookDelivery{})},
	"GET /api/v1/alerts":                      {id: "listAlertRules", tag: tAlerts, summary: "Alert rules and their state", ok: okAns(wire.AlertRuleList{})},
	"POST /api/v1/alerts":                     {id: "createAlertRule", tag: tAlerts, summary: "Create an alert rule", req: wire.AlertRuleRequest{}, ok: createdAns(wire.AlertRule{})},
	"GET /api/v1/alerts/:name":                {id: "getAlertRule", tag: tAlerts, summary: "An alert rule and its state", ok: okAns(wire.AlertRule{})},
	"PUT /api/v1/alerts/:name":                {id: "updateAlertRule", tag: tAlerts, summary: "Replace an alert rule", req: wire.AlertRuleRequest{}, ok: okAns(wire.AlertRule{})},
	"DELETE /api/v1/alerts/:name":             {id: "deleteAlertRule", tag: tAlerts, summary: "Delete an alert rule", ok: noContent()},

	"GET /api/v1/schedules":              {id: "listSchedules", tag: tSchedules, summary: "Schedules", ok: okAns(wire.ScheduleList{})},
	"POST /api/v1/schedules":             {id: "createSchedule", tag: tSchedules, summary: "Create a schedule", req: wire.ScheduleRequest{}, ok: createdAns(wire.Schedule{})},
	"POST /api/v1/schedules/preview":     {id: "previewSchedule", tag: tSchedules, summary: "The next runs of a cron, nothing stored", req: wire.SchedulePreviewRequest{}, ok: okAns(wire.SchedulePreview{})},
	"GET /api/v1/schedules/:id":          {id: "getSchedule", tag: tSchedules, summary: "A schedule, by id or name", ok: okAns(wire.Schedule{}), conflictOnRead: true},
	"PUT /api/v1/schedules/:id":          {id: "updateSchedule", tag: tSchedules, summary: "Replace a schedule", req: wire.ScheduleRequest{}, ok: okAns(wire.Schedule{})},
	"DELETE /api/v1/schedules/:id":       {id: "deleteSchedule", tag: tSchedules, summary: "Delete a schedule", ok: noContent()},
	"POST /api/v1/schedules/:id/enable":  {id: "enableSchedule", tag: tSchedules, summary: "Enable a schedule", ok: okAns(wire.Schedule{})},
	"POST /api/v1/schedules/:id/disable": {id: "disableSchedule", tag: tSchedules, summary: "Disable a schedule", ok: okAns(wire.Schedule{})},
	"POST /api/v1/schedules/:id/run":     {id: "runSchedule", tag: tSchedules, summary: "Enqueue a schedule's job now", ok: createdAns(wire.EnqueueResponse{})},

	"GET /api/v1/queues":       {id: "listQueues", tag: tQueues, summary: "Queues and their counts", ok: okAns(wire.QueueList{})},
	"GET /api/v1/queues/:name": {id: "getQueue", tag: tQueues, summary: "A queue, its counts and settings", ok: okAns(wire.Queue{})},
	"PUT /api/v1/queues/:name": {id: "putQueue", tag: tQueues, summary: "Set a queue's whole configuration, declaratively", req: wire.QueueSpec{}, ok: okAns(wire.Queue{})},
	"DELETE /api/v1/queues/:name": {id: "deleteQueue", tag: tQueues, summary: "Delete a queue and all its jobs", ok: okAns(wire.QueueDeleteResponse{}),
		query: []obj{{"name": "confirm", "in": "query", "required": true, "description": "Must be true.", "schema": obj{"type": "string", "enum": []string{"true"}}}}},
	"GET /api/v1/queues/:name/stats": {id: "getQueueStats", tag: tQueues, summary: "A queue's history: counts, depth, oldest age and processing times per minute or hour",
		ok: okAns(wire.QueueStats{}),
		query: []obj{qp("from", "string", "Start, RFC 3339 (default: an hour before to for 1m, a day for 1h); moved back to its step's start."),
			qp("to", "string", "End, RFC 3339 (default now); moved forward to its step's end."),
			qp("step", "string", "Bucket size: 1m (kept 48 hours) or 1h (kept 30 days); the range may not span more.", "enum", []string{"1m", "1h"})}},
	"GET /api/v1/queues/:name/scale":          {id: "getQueueScale", tag: tQueues, summary: "What an autoscaler reads of a queue: backlog, oldest age, in flight, demand", ok: okAns(wire.QueueScale{})},
	"POST /api/v1/queues/:name/pause":         {id: "pauseQueue", tag: tQueues, summary: "Pause a queue", ok: okAns(wire.Queue{})},
	"POST /api/v1/queues/:name/resume":        {id: "resumeQueue", tag: tQueues, summary: "Resume a queue", ok: okAns(wire.Queue{})},
	"POST /api/v1/queues/:name/drain":         {id: "drainQueue", tag: tQueues, summary: "Stop fetches; let active jobs finish", ok: okAns(wire.DrainResponse{})},
	"POST /api/v1/queues/:name/clear":         {id: "clearQueue", tag: tQueues, summary: "Delete a queue's waiting jobs", ok: okAns(wire.ClearResponse{})},
	"POST /api/v1/queues/:name/concurrency":   {id: "setQueueConcurrency", tag: tQueues, summary: "Set a queue's concurrency limit", req: wire.ConcurrencyRequest{}, ok: okAns(wire.Queue{})},
	"DELETE /api/v1/queues/:name/concurrency": {id: "removeQueueConcurrency", tag: tQueues, summary: "Remove a queue's concurrency limit", ok: okAns(wire.Queue{})},
	"POST /api/v1/queues/:name/throttle":      {id: "setQueueThrottle", tag: tQueues, summary: "Set a queue's rate limit", req: wire.ThrottleRequest{}, ok: okAns(wire.Queue{})},
	"DELETE /api/v1/queues/:name/throttle":    {id: "removeQueueThrottle", tag: tQueues, summary: "Remove a queue's rate limit", ok: okAns(wire.Queue{})},
	"POST /api/v1/queues/:name/defaults":      {id: "setQueueDefaults", tag: tQueues, summary: "Set a queue's job defaults", req: wire.QueueDefaults{}, ok: okAns(wire.Queue{})},

	"GET /api/v1/namespaces":              {id: "listNamespaces", tag: tNamespaces, summary: "Namespaces the key may read", ok: okAns(wire.NamespaceList{})},
	"POST /api/v1/namespaces":             {id: "createNamespace", tag: tNamespaces, summary: "Create a namespace", req: controlapi.NewNamespace{}, ok: createdAns(wire.Namespace{})},
	"GET /api/v1/namespaces/:name":        {id: "getNamespace", tag: tNamespaces, summary: "A namespace", ok: okAns(wire.Namespace{})},
	"PATCH /api/v1/namespaces/:name":      {id: "updateNamespace", tag: tNamespaces, summary: "Change a namespace", req: wire.UpdateNamespaceRequest{}, ok: okAns(wire.Namespace{})},
	"DELETE /api/v1/namespaces/:name":     {id: "deleteNamespace", tag: tNamespaces, summary: "Delete a namespace and all it holds", ok: noContent(), query: []obj{qp("force", "boolean", "Delete it though it holds jobs, queues or schedules.")}},
	"GET /api/v1/namespaces/:name/egress": {id: "getNamespaceEgress", tag: tNamespaces, summary: "A namespace's egress allow-list", ok: okAns(wire.NamespaceEgress{})},
	"PUT /api/v1/namespaces/:name/egress": {id: "putNamespaceEgress", tag: tNamespaces, summary: "Replace a namespace's egress allow-list", req: wire.NamespaceEgressRequest{}, ok: okAns(wire.NamespaceEgress{})},
	"GET /api/v1/tracing":                 {id: "getNamespaceTracing", tag: tNamespaces, summary: "The namespace's OTLP endpoint for the spans of its jobs", ok: okAns(wire.NamespaceTracing{})},
	"PUT /api/v1/tracing":                 {id: "putNamespaceTracing", tag: tNamespaces, summary: "Set the namespace's OTLP endpoint for the spans of its jobs", req: wire.NamespaceTracingRequest{}, ok: okAns(wire.NamespaceTracing{})},
	"GET /api/v1/encryption":              {id: "getEncryption", tag: tNamespaces, summary: "The namespace's encryption at rest (never a key)", ok: okAns(wire.Encryption{})},
	"PUT /api/v1/encryption":              {id: "putEncryption", tag: tNamespaces, summary: "Enable encryption at rest; supply, rotate or revoke the tenant's key (owner only)", req: wire.EncryptionRequest{}, ok: okAns(wire.Encryption{})},

	"GET /api/v1/namespaces/:name/backup-policy":    {id: "getBackupPolicy", tag: tBackups, summary: "A namespace's backup policy", ok: okAns(wire.BackupPolicy{})},
	"PUT /api/v1/namespaces/:name/backup-policy":    {id: "putBackupPolicy", tag: tBackups, summary: "Set a namespace's backup policy", req: wire.BackupPolicyRequest{}, ok: okAns(wire.BackupPolicy{})},
	"DELETE /api/v1/namespaces/:name/backup-policy": {id: "deleteBackupPolicy", tag: tBackups, summary: "Remove a namespace's backup policy", ok: noContent()},
	"POST /api/v1/backups":                          {id: "createBackup", tag: tBackups, summary: "Back up a namespace", req: wire.CreateBackupRequest{}, ok: []opAnswer{{status: 202, desc: "Started.", body: wire.Backup{}}}},
	"GET /api/v1/backups":                           {id: "listBackups", tag: tBackups, summary: "Backups of the namespaces the key may read", ok: okAns(wire.BackupList{})},
	"GET /api/v1/backups/:id":                       {id: "getBackup", tag: tBackups, summary: "A backup", ok: okAns(wire.Backup{})},
	"DELETE /api/v1/backups/:id":                    {id: "deleteBackup", tag: tBackups, summary: "Delete a backup", ok: noContent()},
	"GET /api/v1/backups/:id/download": {id: "downloadBackup", tag: tBackups, summary: "A backup's bytes",
		ok: []opAnswer{{status: 200, desc: "The backup stream.", media: wire.BackupContentType}}},
	"POST /api/v1/backups/:id/restore": {id: "restoreBackup", tag: tBackups, summary: "Restore a backup into its namespace or another", req: wire.RestoreRequest{}, ok: []opAnswer{{status: 202, desc: "Started.", body: wire.Backup{}}}},

	"GET /api/v1/keys":             {id: "listKeys", tag: tKeys, summary: "API keys", ok: okAns(wire.KeyList{})},
	"POST /api/v1/keys":            {id: "createKey", tag: tKeys, summary: "Create an API key", req: wire.CreateKeyRequest{}, ok: createdAns(wire.CreatedKey{})},
	"GET /api/v1/keys/:id":         {id: "getKey", tag: tKeys, summary: "An API key", ok: okAns(wire.Key{})},
	"DELETE /api/v1/keys/:id":      {id: "deleteKey", tag: tKeys, summary: "Revoke an API key", ok: noContent()},
	"POST /api/v1/keys/:id/rotate": {id: "rotateKey", tag: tKeys, summary: "Rotate an API key's secret", req: wire.RotateKeyRequest{}, optionalBody: true, ok: okAns(wire.RotatedKey{})},
	"GET /api/v1/roles":            {id: "listRoles", tag: tRoles, summary: "Built-in and custom roles", ok: okAns(wire.RoleList{})},
	"POST /api/v1/roles":           {id: "createRole", tag: tRoles, summary: "Create a custom role", req: wire.RoleRequest{}, ok: createdAns(wire.Role{})},
	"GET /api/v1/roles/:name":      {id: "getRole", tag: tRoles, summary: "A role", ok: okAns(wire.Role{})},
	"PUT /api/v1/roles/:name":      {id: "updateRole", tag: tRoles, summary: "Replace a custom role", req: wire.RoleRequest{}, ok: okAns(wire.Role{})},
	"DELETE /api/v1/roles/:name":   {id: "deleteRole", tag: tRoles, summary: "Delete a custom role", ok: noContent()},

	"GET /api/v1/usage": {id: "getUsage", tag: tUsage, summary: "Usage by meter over a period", ok: okAns(wire.Usage{}),
		query: []obj{qp("namespace", "string", "Only this namespace's."), qp("from", "string", "Start (RFC 3339 or YYYY-MM-DD)."),
			qp("to", "string", "End (RFC 3339 or YYYY-MM-DD)."), qp("granularity", "string", "Bucket size.", "enum", []string{"hour", "day"})}},
	"GET /api/v1/audit": {id: "listAuditRecords", tag: tAudit, summary: "The audit log: a namespace's records merged with the tenant's, oldest or newest first",
		ok: []opAnswer{{status: 200, desc: "A page of records; with format=jsonl, one record per line and the next page's cursor in Jobbie-Cursor.",
			body: wire.AuditPage{}}},
		query: append([]obj{qp("action", "string", "Only this RBAC action's records."), qp("key_id", "string", "Only this key's."),
			qp("namespace", "string", "This namespace's records (its shard's, and control's of it); default: the request's namespace, with every record of control."),
			qp("object", "string", "Only this object's: its type, or type/id."),
			qp("result", "string", "ok, error (any refusal or failure), or an error code."),
			qp("from", "string", "From this time (RFC 3339), inclusive."), qp("to", "string", "Until this time (RFC 3339), exclusive."),
			qp("format", "string", "The answer's form.", "enum", []string{"json", "jsonl"}),
			qp("order", "string", "asc: oldest first (the default); desc: newest first. A cursor goes on in its own order.", "enum", []string{"asc", "desc"})},
			pageParams(wire.MaxAuditLimit)...)},
	"GET /api/v1/sso":                       {id: "getSSO", tag: tSSO, summary: "The tenant's OIDC sign-in configuration (never its client secret)", ok: okAns(wire.SSOConfig{})},
	"PUT /api/v1/sso":                       {id: "putSSO", tag: tSSO, summary: "Set the tenant's OIDC sign-in configuration", req: wire.SSORequest{}, ok: okAns(wire.SSOConfig{})},
	"DELETE /api/v1/sso":                    {id: "deleteSSO", tag: tSSO, summary: "End sign-in through the tenant's identity provider", ok: noContent()},
	"GET /api/v1/plan":                      {id: "getPlan", tag: tUsage, summary: "The tenant's plan and its limits", ok: okAns(wire.TenantPlan{})},
	"GET /api/v1/invoices":                  {id: "listInvoices", tag: tUsage, summary: "Invoices", ok: okAns(wire.InvoiceList{})},
	"GET /api/v1/invoices/upcoming":         {id: "getUpcomingInvoice", tag: tUsage, summary: "This month's invoice so far", ok: okAns(wire.Invoice{})},
	"GET /api/v1/invoices/:id":              {id: "getInvoice", tag: tUsage, summary: "An invoice", ok: okAns(wire.Invoice{})},
	"GET /api/v1/invoices/:id/csv":          {id: "getInvoiceCSV", tag: tUsage, summary: "An invoice as CSV", ok: []opAnswer{{status: 200, desc: "A header row, then a row per line.", media: "text/csv"}}},
	"GET /api/v1/shards":                    {id: "listShards", tag: tShards, summary: "The tenant's self-hosted shards", ok: okAns(wire.OwnedShardList{})},
	"POST /api/v1/shards/join-tokens":       {id: "createJoinToken", tag: tShards, summary: "Mint a join token for a new self-hosted shard", req: wire.CreateJoinTokenRequest{}, ok: createdAns(wire.JoinToken{})},
	"DELETE /api/v1/shards/:id":             {id: "revokeShard", tag: tShards, summary: "Revoke a self-hosted shard", ok: noContent()},
	"POST /api/v1/shards/:id/join-tokens":   {id: "addShardNodes", tag: tShards, summary: "Mint join tokens for more nodes of a shard", req: wire.AddNodesRequest{}, optionalBody: true, ok: createdAns(wire.JoinToken{})},
	"DELETE /api/v1/shards/:id/nodes/:node": {id: "removeShardNode", tag: tShards, summary: "Remove a node of a self-hosted shard", ok: noContent()},

	"GET /api/v1/info": {id: "getInfo", tag: tMeta, summary: "Where the gateway serves gRPC (the worker stream)", ok: okAns(wire.GatewayInfo{})},
	"GET /api/v1/openapi.json": {id: "getOpenAPI", tag: tMeta, summary: "This document",
		ok: []opAnswer{{status: 200, desc: "The OpenAPI document.", media: "application/json", schema: obj{"type": "object"}, headers: []string{"ETag"}},
			{status: 304, desc: "Not modified (If-None-Match)."}}},
}
