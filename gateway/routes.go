package gateway

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admin"
	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/tenancy"
)

// route is one public endpoint, its whole chain in one row: the action
// RBAC must allow, the checks it passes (admitted.go applies them, in the
// order of the checks below), and what serves it.
type route struct {
	method string
	path   string
	action tenancy.Action
	checks checks
	serve  serve
}

// serve serves an admitted request.
type serve func(s *Server, c *fiber.Ctx, r *admitted.Request) error

// checks are a route's checks besides authentication, its namespace and
// RBAC, which every route passes.
type checks uint16

const (
	// batchBody: the body may be Config.BatchBodyLimit, not BodyLimit.
	batchBody checks = 1 << iota
	// scoped: about queues. A custom role needs the action on some queue
	// of the namespace, and the queues it may act on go to the shard
	// (X-Jobbie-Queue-Scope). Without it a route is about the namespace
	// as a whole.
	scoped
	// queueNamed: the path names a queue (/queues/:name), on which a
	// custom role is checked.
	queueNamed
	// local: a self-hosted node's local API serves it (the endpoints a
	// namespace's shard serves); the rest are the hosted gateway's alone.
	local
	// enqueueOne: counts 1 against enqueues_per_second, and its payload
	// against max_payload_bytes; enqueueBatch: each job of its batch.
	enqueueOne
	enqueueBatch
	// createsJobs: can create jobs (or put them back in a queue), so the
	// plan's max_pending_jobs goes to the shard.
	createsJobs
	// executionCap: refused while the tenant's month is at a hard
	// monthly_executions cap.
	executionCap
	// longPollCap: holds a place among its key's and tenant's long-polls
	// (MaxLongPollsPerKey, MaxLongPollsPerTenant) while it waits.
	longPollCap
	// scheduleQuota: a schedule create, under the plan's max_schedules,
	// counted on the tenant's shards; scheduleForget: a schedule delete,
	// after which the tenant's count is counted afresh.
	scheduleQuota
	scheduleForget
	// public: served to anyone, with no key and no chain (the API's own
	// description, where its gRPC port is); its action is none.
	public
)

// What serves a route: the namespace's shard, or tenant administration.
var (
	forward  serve = func(s *Server, c *fiber.Ctx, r *admitted.Request) error { return s.proxy.Forward(c, r) }
	longPoll serve = func(s *Server, c *fiber.Ctx, r *admitted.Request) error { return s.proxy.ForwardLongPoll(c, r) }
	stream   serve = func(s *Server, c *fiber.Ctx, r *admitted.Request) error { return s.proxy.ForwardStream(c, r) }
)

// adm serves a route with tenant administration's h.
func adm(h func(*admin.Admin, *fiber.Ctx, *admitted.Request) error) serve {
	return func(s *Server, c *fiber.Ctx, r *admitted.Request) error { return h(s.admin, c, r) }
}

// job is the checks of every endpoint of a namespace's shard.
const job = scoped | local

const (
	get   = fiber.MethodGet
	post  = fiber.MethodPost
	put   = fiber.MethodPut
	patch = fiber.MethodPatch
	del   = fiber.MethodDelete
)

// routeTable is every public endpoint; a new endpoint is one line here.
// Fixed paths come before parameters (ack/batch before ack/:id).
var routeTable = []route{
	{get, "/api/v1/openapi.json", "", public, openAPI},
	{get, "/api/v1/info", "", public, info},
	{post, "/api/v1/enqueue", tenancy.ActJobEnqueue, job | enqueueOne | createsJobs, forward},
	{post, "/api/v1/enqueue/batch", tenancy.ActJobEnqueue, job | batchBody | enqueueBatch | createsJobs, forward},
	{post, "/api/v1/fetch", tenancy.ActJobWork, job | executionCap | longPollCap, longPoll},
	{post, "/api/v1/fetch/batch", tenancy.ActJobWork, job | executionCap | longPollCap, longPoll},
	// An ack or a fail may enqueue a chain's next step, its on_failure or
	// on_exit job or a batch's callback; retry, move and bulk put jobs back.
	{post, "/api/v1/ack/batch", tenancy.ActJobWork, job | batchBody | createsJobs, forward},
	{post, "/api/v1/ack/:id", tenancy.ActJobWork, job | createsJobs, forward},
	{post, "/api/v1/fail/:id", tenancy.ActJobWork, job | createsJobs, forward},
	{post, "/api/v1/heartbeat", tenancy.ActJobWork, job, forward},
	// A worker gives back leases it will not work on (a worker stream
	// that closed holding jobs); the shard releases only its own.
	{post, "/api/v1/release", tenancy.ActJobWork, job, forward},
	{get, "/api/v1/jobs/:id", tenancy.ActJobRead, job, forward},
	{get, "/api/v1/jobs/:id/chain", tenancy.ActJobRead, job, forward},
	{post, "/api/v1/jobs/:id/retry", tenancy.ActJobManage, job | createsJobs, forward},
	{post, "/api/v1/jobs/:id/cancel", tenancy.ActJobManage, job, forward},
	{post, "/api/v1/jobs/:id/approve", tenancy.ActJobManage, job, forward}, // a job an AI budget held: run it
	{post, "/api/v1/jobs/:id/reject", tenancy.ActJobManage, job, forward},  // a job an AI budget held: cancel it
	{post, "/api/v1/jobs/:id/move", tenancy.ActJobManage, job | createsJobs, forward},
	{del, "/api/v1/jobs/:id", tenancy.ActJobManage, job, forward},
	{get, "/api/v1/dead", tenancy.ActJobRead, job, forward},
	{post, "/api/v1/jobs/search", tenancy.ActJobRead, job, forward},
	{post, "/api/v1/jobs/bulk", tenancy.ActJobManage, job | batchBody | createsJobs, forward},
	{get, "/api/v1/bulk", tenancy.ActJobRead, job, forward}, // before the :id routes
	{get, "/api/v1/bulk/:id", tenancy.ActJobRead, job, forward},
	{get, "/api/v1/bulk/:id/progress", tenancy.ActJobRead, job, stream},
	{del, "/api/v1/bulk/:id", tenancy.ActJobManage, job, forward},
	{get, "/api/v1/batches", tenancy.ActJobRead, job, forward},
	{get, "/api/v1/batches/:id", tenancy.ActJobRead, job, forward},
	{get, "/api/v1/workers", tenancy.ActQueueRead, job, forward},
	{post, "/api/v1/workers/:id/drain", tenancy.ActQueueManage, job, forward},
	{get, "/api/v1/signing-keys", tenancy.ActWebhookRead, job, forward},
	{post, "/api/v1/signing-keys/rotate", tenancy.ActWebhookManage, job, forward},
	{get, "/api/v1/webhooks", tenancy.ActWebhookRead, job, forward},
	{post, "/api/v1/webhooks", tenancy.ActWebhookManage, job, forward},
	{get, "/api/v1/webhooks/:id", tenancy.ActWebhookRead, job, forward},
	{put, "/api/v1/webhooks/:id", tenancy.ActWebhookManage, job, forward},
	{del, "/api/v1/webhooks/:id", tenancy.ActWebhookManage, job, forward},
	{get, "/api/v1/webhooks/:id/deliveries", tenancy.ActWebhookRead, job, forward},
	{post, "/api/v1/webhooks/:id/rotate-secret", tenancy.ActWebhookManage, job, forward},
	{post, "/api/v1/webhooks/:id/test", tenancy.ActWebhookManage, job, forward},
	{post, "/api/v1/webhooks/:id/redeliver", tenancy.ActWebhookManage, job, forward},
	{get, "/api/v1/alerts", tenancy.ActNamespaceRead, job, forward},
	{post, "/api/v1/alerts", tenancy.ActQueueManage, job, forward},
	{get, "/api/v1/alerts/:name", tenancy.ActNamespaceRead, job, forward},
	{put, "/api/v1/alerts/:name", tenancy.ActQueueManage, job, forward},
	{del, "/api/v1/alerts/:name", tenancy.ActQueueManage, job, forward},
	{get, "/api/v1/cluster", tenancy.ActQueueRead, job, forward}, // the namespace's shard: its nodes' health
	// The namespace's own OTLP endpoint, kept and checked by its shard.
	{get, "/api/v1/tracing", tenancy.ActNamespaceRead, job, forward},
	{put, "/api/v1/tracing", tenancy.ActNamespaceManage, job, forward},
	// The namespace's encryption at rest, kept by its shard; changing it
	// (the tenant's key among it) is the owner's alone.
	{get, "/api/v1/encryption", tenancy.ActNamespaceRead, job, forward},
	{put, "/api/v1/encryption", tenancy.ActEncryptionManage, job, forward},
	{get, "/api/v1/events", tenancy.ActJobRead, job, stream},
	{get, "/api/v1/schedules", tenancy.ActScheduleRead, job, forward},
	{post, "/api/v1/schedules", tenancy.ActScheduleManage, job | scheduleQuota, forward},
	{post, "/api/v1/schedules/preview", tenancy.ActScheduleRead, job, forward}, // next runs of a cron, nothing stored
	{get, "/api/v1/schedules/:id", tenancy.ActScheduleRead, job, forward},
	{put, "/api/v1/schedules/:id", tenancy.ActScheduleManage, job, forward}, // replaces one: no create
	{del, "/api/v1/schedules/:id", tenancy.ActScheduleManage, job | scheduleForget, forward},
	{post, "/api/v1/schedules/:id/enable", tenancy.ActScheduleManage, job, forward},
	{post, "/api/v1/schedules/:id/disable", tenancy.ActScheduleManage, job, forward},
	{post, "/api/v1/schedules/:id/run", tenancy.ActScheduleManage, job | createsJobs, forward}, // a run by hand: enqueues its job now
	{get, "/api/v1/queues", tenancy.ActQueueRead, job, forward},
	{get, "/api/v1/queues/:name", tenancy.ActQueueRead, job | queueNamed, forward},
	{get, "/api/v1/queues/:name/stats", tenancy.ActQueueRead, job | queueNamed, forward}, // history: from, to, step
	{get, "/api/v1/ai/usage", tenancy.ActUsageRead, job, forward},                        // AI usage per queue, model, tag or namespace: from, to, group_by, step
	{get, "/api/v1/ai/budgets", tenancy.ActUsageRead, job, forward},
	{post, "/api/v1/ai/budgets", tenancy.ActNamespaceManage, job, forward},
	{get, "/api/v1/ai/budgets/:name", tenancy.ActUsageRead, job, forward},
	{put, "/api/v1/ai/budgets/:name", tenancy.ActNamespaceManage, job, forward},
	{del, "/api/v1/ai/budgets/:name", tenancy.ActNamespaceManage, job, forward},
	{get, "/api/v1/queues/:name/scale", tenancy.ActQueueRead, job | queueNamed, forward}, // autoscaling: backlog, age, in flight, demand
	{put, "/api/v1/queues/:name", tenancy.ActQueueManage, job | queueNamed, forward},     // the whole configuration, declaratively
	{del, "/api/v1/queues/:name", tenancy.ActQueueManage, job | queueNamed, forward},
	{post, "/api/v1/queues/:name/pause", tenancy.ActQueueManage, job | queueNamed, forward},
	{post, "/api/v1/queues/:name/resume", tenancy.ActQueueManage, job | queueNamed, forward},
	{post, "/api/v1/queues/:name/drain", tenancy.ActQueueManage, job | queueNamed, forward},
	{post, "/api/v1/queues/:name/clear", tenancy.ActQueueManage, job | queueNamed, forward},
	{post, "/api/v1/queues/:name/concurrency", tenancy.ActQueueManage, job | queueNamed, forward},
	{del, "/api/v1/queues/:name/concurrency", tenancy.ActQueueManage, job | queueNamed, forward},
	{post, "/api/v1/queues/:name/throttle", tenancy.ActQueueManage, job | queueNamed, forward},
	{del, "/api/v1/queues/:name/throttle", tenancy.ActQueueManage, job | queueNamed, forward},
	{post, "/api/v1/queues/:name/defaults", tenancy.ActQueueManage, job | queueNamed, forward},

	// Tenant administration (package admin), about a namespace as a whole.
	{get, "/api/v1/namespaces", tenancy.ActNamespaceRead, 0, adm((*admin.Admin).ListNamespaces)},
	{post, "/api/v1/namespaces", tenancy.ActNamespaceManage, 0, adm((*admin.Admin).CreateNamespace)},
	{get, "/api/v1/namespaces/:name", tenancy.ActNamespaceRead, 0, adm((*admin.Admin).GetNamespace)},
	{patch, "/api/v1/namespaces/:name", tenancy.ActNamespaceManage, 0, adm((*admin.Admin).UpdateNamespace)},
	{del, "/api/v1/namespaces/:name", tenancy.ActNamespaceManage, 0, adm((*admin.Admin).DeleteNamespace)},
	{get, "/api/v1/namespaces/:name/egress", tenancy.ActNamespaceRead, 0, adm((*admin.Admin).GetNamespaceEgress)},
	{put, "/api/v1/namespaces/:name/egress", tenancy.ActNamespaceManage, 0, adm((*admin.Admin).PutNamespaceEgress)},
	{get, "/api/v1/namespaces/:name/backup-policy", tenancy.ActBackupRead, 0, adm((*admin.Admin).GetBackupPolicy)},
	{put, "/api/v1/namespaces/:name/backup-policy", tenancy.ActBackupManage, 0, adm((*admin.Admin).PutBackupPolicy)},
	{del, "/api/v1/namespaces/:name/backup-policy", tenancy.ActBackupManage, 0, adm((*admin.Admin).DeleteBackupPolicy)},
	// Backups: the action is checked again in the backup's namespace once
	// control said which it is.
	{post, "/api/v1/backups", tenancy.ActBackupManage, 0, adm((*admin.Admin).CreateBackup)},
	{get, "/api/v1/backups", tenancy.ActBackupRead, 0, adm((*admin.Admin).ListBackups)},
	{get, "/api/v1/backups/:id", tenancy.ActBackupRead, 0, adm((*admin.Admin).GetBackup)},
	{del, "/api/v1/backups/:id", tenancy.ActBackupManage, 0, adm((*admin.Admin).DeleteBackup)},
	{get, "/api/v1/backups/:id/download", tenancy.ActBackupManage, 0, adm((*admin.Admin).DownloadBackup)},
	{post, "/api/v1/backups/:id/restore", tenancy.ActBackupManage, 0, adm((*admin.Admin).RestoreBackup)},
	{get, "/api/v1/keys", tenancy.ActKeyRead, 0, adm((*admin.Admin).ListKeys)},
	{post, "/api/v1/keys", tenancy.ActKeyManage, 0, adm((*admin.Admin).CreateKey)},
	{get, "/api/v1/keys/:id", tenancy.ActKeyRead, 0, adm((*admin.Admin).GetKey)},
	{del, "/api/v1/keys/:id", tenancy.ActKeyManage, 0, adm((*admin.Admin).DeleteKey)},
	{post, "/api/v1/keys/:id/rotate", tenancy.ActKeyManage, 0, adm((*admin.Admin).RotateKey)},
	// Roles decide what keys may do: the key actions govern them.
	{get, "/api/v1/roles", tenancy.ActKeyRead, 0, adm((*admin.Admin).ListRoles)},
	{post, "/api/v1/roles", tenancy.ActKeyManage, 0, adm((*admin.Admin).CreateRole)},
	{get, "/api/v1/roles/:name", tenancy.ActKeyRead, 0, adm((*admin.Admin).ShowRole)},
	{put, "/api/v1/roles/:name", tenancy.ActKeyManage, 0, adm((*admin.Admin).UpdateRole)},
	{del, "/api/v1/roles/:name", tenancy.ActKeyManage, 0, adm((*admin.Admin).DeleteRole)},
	// The audit log: the namespace's records (its shard's) merged with the
	// tenant's at control (admin/audit.go).
	{get, "/api/v1/audit", tenancy.ActAuditRead, 0, adm((*admin.Admin).Audit)},
	// Console sign-in through the tenant's identity provider: the owner's.
	{get, "/api/v1/sso", tenancy.ActSSOManage, 0, adm((*admin.Admin).GetSSO)},
	{put, "/api/v1/sso", tenancy.ActSSOManage, 0, adm((*admin.Admin).PutSSO)},
	{del, "/api/v1/sso", tenancy.ActSSOManage, 0, adm((*admin.Admin).DeleteSSO)},
	{get, "/api/v1/usage", tenancy.ActUsageRead, 0, adm((*admin.Admin).Usage)},
	{get, "/api/v1/plan", tenancy.ActUsageRead, 0, adm((*admin.Admin).Plan)},
	{get, "/api/v1/invoices", tenancy.ActUsageRead, 0, adm((*admin.Admin).Invoices)},
	{get, "/api/v1/invoices/upcoming", tenancy.ActUsageRead, 0, adm((*admin.Admin).UpcomingInvoice)}, // before :id
	{get, "/api/v1/invoices/:id", tenancy.ActUsageRead, 0, adm((*admin.Admin).Invoice)},
	{get, "/api/v1/invoices/:id/csv", tenancy.ActUsageRead, 0, adm((*admin.Admin).InvoiceCSV)},
	// The tenant's self-hosted shards: minting and revoking are the
	// owner's alone (admin/shards.go). Fixed paths before parameters:
	// /shards/join-tokens mints a new shard, /shards/:id/join-tokens (one
	// segment more) nodes for one.
	{get, "/api/v1/shards", tenancy.ActNamespaceRead, 0, adm((*admin.Admin).ListShards)},
	{post, "/api/v1/shards/join-tokens", tenancy.ActKeyManage, 0, adm((*admin.Admin).CreateJoinToken)},
	{del, "/api/v1/shards/:id", tenancy.ActKeyManage, 0, adm((*admin.Admin).RevokeShard)},
	{post, "/api/v1/shards/:id/join-tokens", tenancy.ActKeyManage, 0, adm((*admin.Admin).AddShardNodes)},
	{del, "/api/v1/shards/:id/nodes/:node", tenancy.ActKeyManage, 0, adm((*admin.Admin).RemoveShardNode)},
}
