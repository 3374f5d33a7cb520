package gateway

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

// route is one public endpoint: the action RBAC must allow, and what
// serves it once the caller is admitted.
type route struct {
	method string
	path   string
	action tenancy.Action
	serve  endpoint
}

// namesQueue reports whether rt's path names a queue (/queues/:name), on
// which a custom role is then checked.
func (rt route) namesQueue() bool { return strings.HasPrefix(rt.path, "/api/v1/queues/:name") }

// endpoint serves an admitted request.
type endpoint struct {
	handle func(s *Server, c *fiber.Ctx, r *call) error
	// batchBody selects Config.BatchBodyLimit instead of Config.BodyLimit.
	batchBody bool
	// queues marks the shard's job endpoints, which are about queues: a
	// custom role's queue scope goes with them to the shard. Any other
	// endpoint is about a namespace as a whole.
	queues bool
	// createsJobs marks the shard endpoints that can create jobs (or put
	// them back in a queue): the plan's max_pending_jobs goes with them
	// (shardheaders.go).
	createsJobs bool
}

// What an endpoint does. Job endpoints are proxied to the namespace's
// shard unchanged; tenant administration is served here through control.
var (
	proxied = endpoint{handle: (*Server).forward, queues: true}
	// Routes besides the enqueues (quota.go) that can put jobs in a
	// queue: an ack or a fail may enqueue a chain's next step, its
	// on_failure or on_exit job or a batch's callback; retry, move and
	// bulk put jobs back.
	proxiedCreates      = endpoint{handle: (*Server).forward, queues: true, createsJobs: true}
	proxiedBatchCreates = endpoint{handle: (*Server).forward, batchBody: true, queues: true, createsJobs: true}
	listNamespaces      = endpoint{handle: (*Server).listNamespaces}
	createNamespace     = endpoint{handle: (*Server).createNamespace}
	listKeys            = endpoint{handle: (*Server).listKeys}
	createKey           = endpoint{handle: (*Server).createKey}
	deleteKey           = endpoint{handle: (*Server).deleteKey}
	getNamespace        = endpoint{handle: (*Server).getNamespace}
	updateNamespace     = endpoint{handle: (*Server).updateNamespace}
	deleteNamespace     = endpoint{handle: (*Server).deleteNamespace}
	getKey              = endpoint{handle: (*Server).getKey}
	rotateKey           = endpoint{handle: (*Server).rotateKey}
	listRoles           = endpoint{handle: (*Server).listRoles}
	createRole          = endpoint{handle: (*Server).createRole}
	showRole            = endpoint{handle: (*Server).showRole}
	updateRole          = endpoint{handle: (*Server).updateRole}
	deleteRole          = endpoint{handle: (*Server).deleteRole}
	usage               = endpoint{handle: (*Server).getUsage}
	plan                = endpoint{handle: (*Server).getPlan}
	invoices            = endpoint{handle: (*Server).listInvoices}
	upcomingInvoice     = endpoint{handle: (*Server).upcomingInvoice}
	invoice             = endpoint{handle: (*Server).showInvoice}
	invoiceCSV          = endpoint{handle: (*Server).invoiceCSV}
	createBackup        = endpoint{handle: (*Server).createBackup}
	listBackups         = endpoint{handle: (*Server).listBackups}
	getBackup           = endpoint{handle: (*Server).getBackup}
	deleteBackup        = endpoint{handle: (*Server).deleteBackup}
	downloadBackup      = endpoint{handle: (*Server).downloadBackup}
	restoreBackup       = endpoint{handle: (*Server).restoreBackup}
	getBackupPolicy     = endpoint{handle: (*Server).getBackupPolicy}
	putBackupPolicy     = endpoint{handle: (*Server).putBackupPolicy}
	deleteBackupPolicy  = endpoint{handle: (*Server).deleteBackupPolicy}
)

// routeTable is every public endpoint and the action it needs; a new
// endpoint is one line here.
var routeTable = []route{
	{fiber.MethodPost, "/api/v1/enqueue", tenancy.ActJobEnqueue, proxiedEnqueue},            // max_payload_bytes (quota.go)
	{fiber.MethodPost, "/api/v1/enqueue/batch", tenancy.ActJobEnqueue, proxiedEnqueueBatch}, // max_payload_bytes
	{fiber.MethodPost, "/api/v1/fetch", tenancy.ActJobWork, proxiedFetch},                   // monthly_executions, then a long-poll
	{fiber.MethodPost, "/api/v1/fetch/batch", tenancy.ActJobWork, proxiedFetch},
	{fiber.MethodPost, "/api/v1/ack/batch", tenancy.ActJobWork, proxiedBatchCreates}, // before ack/:id
	{fiber.MethodPost, "/api/v1/ack/:id", tenancy.ActJobWork, proxiedCreates},
	{fiber.MethodPost, "/api/v1/fail/:id", tenancy.ActJobWork, proxiedCreates},
	{fiber.MethodPost, "/api/v1/heartbeat", tenancy.ActJobWork, proxied},
	{fiber.MethodGet, "/api/v1/jobs/:id", tenancy.ActJobRead, proxied},
	{fiber.MethodPost, "/api/v1/jobs/:id/retry", tenancy.ActJobManage, proxiedCreates},
	{fiber.MethodPost, "/api/v1/jobs/:id/cancel", tenancy.ActJobManage, proxied},
	{fiber.MethodPost, "/api/v1/jobs/:id/move", tenancy.ActJobManage, proxiedCreates},
	{fiber.MethodDelete, "/api/v1/jobs/:id", tenancy.ActJobManage, proxied},
	{fiber.MethodGet, "/api/v1/dead", tenancy.ActJobRead, proxied},
	{fiber.MethodPost, "/api/v1/jobs/search", tenancy.ActJobRead, proxied},
	{fiber.MethodPost, "/api/v1/jobs/bulk", tenancy.ActJobManage, proxiedBatchCreates},
	{fiber.MethodGet, "/api/v1/bulk", tenancy.ActJobRead, proxied}, // before the :id routes
	{fiber.MethodGet, "/api/v1/bulk/:id", tenancy.ActJobRead, proxied},
	{fiber.MethodGet, "/api/v1/bulk/:id/progress", tenancy.ActJobRead, proxiedStream},
	{fiber.MethodDelete, "/api/v1/bulk/:id", tenancy.ActJobManage, proxied},
	{fiber.MethodGet, "/api/v1/batches/:id", tenancy.ActJobRead, proxied},
	{fiber.MethodGet, "/api/v1/workers", tenancy.ActQueueRead, proxied},
	{fiber.MethodGet, "/api/v1/cluster", tenancy.ActQueueRead, proxied}, // the namespace's shard: its nodes' health
	{fiber.MethodGet, "/api/v1/events", tenancy.ActJobRead, proxiedStream},
	{fiber.MethodGet, "/api/v1/schedules", tenancy.ActScheduleRead, proxied},
	{fiber.MethodPost, "/api/v1/schedules", tenancy.ActScheduleManage, proxiedScheduleCreate}, // max_schedules (schedquota.go),
	{fiber.MethodPost, "/api/v1/schedules/preview", tenancy.ActScheduleRead, proxied},         // next runs of a cron, nothing stored
	{fiber.MethodGet, "/api/v1/schedules/:id", tenancy.ActScheduleRead, proxied},
	{fiber.MethodPut, "/api/v1/schedules/:id", tenancy.ActScheduleManage, proxied},
	{fiber.MethodDelete, "/api/v1/schedules/:id", tenancy.ActScheduleManage, proxiedScheduleDelete},
	{fiber.MethodPost, "/api/v1/schedules/:id/enable", tenancy.ActScheduleManage, proxied},
	{fiber.MethodPost, "/api/v1/schedules/:id/disable", tenancy.ActScheduleManage, proxied},
	{fiber.MethodGet, "/api/v1/queues", tenancy.ActQueueRead, proxied},
	{fiber.MethodGet, "/api/v1/queues/:name", tenancy.ActQueueRead, proxied},
	{fiber.MethodPut, "/api/v1/queues/:name", tenancy.ActQueueManage, proxied}, // the whole configuration, declaratively
	{fiber.MethodDelete, "/api/v1/queues/:name", tenancy.ActQueueManage, proxied},
	{fiber.MethodPost, "/api/v1/queues/:name/pause", tenancy.ActQueueManage, proxied},
	{fiber.MethodPost, "/api/v1/queues/:name/resume", tenancy.ActQueueManage, proxied},
	{fiber.MethodPost, "/api/v1/queues/:name/drain", tenancy.ActQueueManage, proxied},
	{fiber.MethodPost, "/api/v1/queues/:name/clear", tenancy.ActQueueManage, proxied},
	{fiber.MethodPost, "/api/v1/queues/:name/concurrency", tenancy.ActQueueManage, proxied},
	{fiber.MethodDelete, "/api/v1/queues/:name/concurrency", tenancy.ActQueueManage, proxied},
	{fiber.MethodPost, "/api/v1/queues/:name/throttle", tenancy.ActQueueManage, proxied},
	{fiber.MethodDelete, "/api/v1/queues/:name/throttle", tenancy.ActQueueManage, proxied},
	{fiber.MethodPost, "/api/v1/queues/:name/defaults", tenancy.ActQueueManage, proxied},

	{fiber.MethodGet, "/api/v1/namespaces", tenancy.ActNamespaceRead, listNamespaces},
	{fiber.MethodPost, "/api/v1/namespaces", tenancy.ActNamespaceManage, createNamespace},
	{fiber.MethodGet, "/api/v1/namespaces/:name", tenancy.ActNamespaceRead, getNamespace},
	{fiber.MethodPatch, "/api/v1/namespaces/:name", tenancy.ActNamespaceManage, updateNamespace},
	{fiber.MethodDelete, "/api/v1/namespaces/:name", tenancy.ActNamespaceManage, deleteNamespace},
	{fiber.MethodGet, "/api/v1/namespaces/:name/backup-policy", tenancy.ActBackupRead, getBackupPolicy},
	{fiber.MethodPut, "/api/v1/namespaces/:name/backup-policy", tenancy.ActBackupManage, putBackupPolicy},
	{fiber.MethodDelete, "/api/v1/namespaces/:name/backup-policy", tenancy.ActBackupManage, deleteBackupPolicy},
	// Backups (backups.go): the action is checked again in the backup's
	// namespace once control said which it is.
	{fiber.MethodPost, "/api/v1/backups", tenancy.ActBackupManage, createBackup},
	{fiber.MethodGet, "/api/v1/backups", tenancy.ActBackupRead, listBackups},
	{fiber.MethodGet, "/api/v1/backups/:id", tenancy.ActBackupRead, getBackup},
	{fiber.MethodDelete, "/api/v1/backups/:id", tenancy.ActBackupManage, deleteBackup},
	{fiber.MethodGet, "/api/v1/backups/:id/download", tenancy.ActBackupManage, downloadBackup},
	{fiber.MethodPost, "/api/v1/backups/:id/restore", tenancy.ActBackupManage, restoreBackup},
	{fiber.MethodGet, "/api/v1/keys", tenancy.ActKeyRead, listKeys},
	{fiber.MethodPost, "/api/v1/keys", tenancy.ActKeyManage, createKey},
	{fiber.MethodGet, "/api/v1/keys/:id", tenancy.ActKeyRead, getKey},
	{fiber.MethodDelete, "/api/v1/keys/:id", tenancy.ActKeyManage, deleteKey},
	{fiber.MethodPost, "/api/v1/keys/:id/rotate", tenancy.ActKeyManage, rotateKey},
	// Roles decide what keys may do: the key actions govern them.
	{fiber.MethodGet, "/api/v1/roles", tenancy.ActKeyRead, listRoles},
	{fiber.MethodPost, "/api/v1/roles", tenancy.ActKeyManage, createRole},
	{fiber.MethodGet, "/api/v1/roles/:name", tenancy.ActKeyRead, showRole},
	{fiber.MethodPut, "/api/v1/roles/:name", tenancy.ActKeyManage, updateRole},
	{fiber.MethodDelete, "/api/v1/roles/:name", tenancy.ActKeyManage, deleteRole},
	{fiber.MethodGet, "/api/v1/usage", tenancy.ActUsageRead, usage},
	{fiber.MethodGet, "/api/v1/plan", tenancy.ActUsageRead, plan},
	{fiber.MethodGet, "/api/v1/invoices", tenancy.ActUsageRead, invoices},
	{fiber.MethodGet, "/api/v1/invoices/upcoming", tenancy.ActUsageRead, upcomingInvoice}, // before :id
	{fiber.MethodGet, "/api/v1/invoices/:id", tenancy.ActUsageRead, invoice},
	{fiber.MethodGet, "/api/v1/invoices/:id/csv", tenancy.ActUsageRead, invoiceCSV},
}

// register mounts the route table, each endpoint behind admission.
func (s *Server) register(app *fiber.App) {
	for _, rt := range append(routeTable, shardRoutes...) {
		if s.cfg.Local == nil || localOnly(rt) {
			app.Add(rt.method, rt.path, s.admitted(rt))
		}
	}
	if s.cfg.Local != nil {
		app.All("/api/v1/*", func(c *fiber.Ctx) error {
			return apierr.New(apierr.NotFound, "%s %s is not served by a self-hosted shard's local API, which serves the job, queue, schedule, worker and event endpoints of the namespaces on its shard: use the hosted gateway",
				c.Method(), c.Path())
		})
	}
}

func (s *Server) admitted(rt route) fiber.Handler {
	limit := s.cfg.BodyLimit
	if rt.serve.batchBody {
		limit = s.cfg.BatchBodyLimit
	}
	m := newRouteMetrics(rt)
	return func(c *fiber.Ctx) error {
		start := s.cfg.Clock.Now()
		var r call
		err := s.admit(c, rt, limit, &r)
		if err == nil {
			s.requests.add(r.key.TenantID, start) // the api_requests meter
			err = rt.serve.handle(s, c, &r)
		}
		status := c.Response().StatusCode()
		if err != nil {
			status = apierr.Status(apierr.From(err).Code)
		}
		m.observe(status, s.cfg.Clock.Since(start))
		return err
	}
}
