package gateway

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func TestRBACRolesOnJobEndpoints(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fetch := map[string]any{"queues": []string{"emails.send"}, "timeout": 0}
	cases := []struct {
		role         tenancy.Role
		method, path string
		body         any
		status       int
	}{
		{tenancy.RoleProducer, http.MethodPost, "/api/v1/enqueue", enqueueBody, http.StatusCreated},
		{tenancy.RoleProducer, http.MethodPost, "/api/v1/fetch", fetch, http.StatusForbidden},
		{tenancy.RoleProducer, http.MethodPost, "/api/v1/ack/job_1", map[string]any{}, http.StatusForbidden},
		{tenancy.RoleWorker, http.MethodPost, "/api/v1/enqueue", enqueueBody, http.StatusForbidden},
		{tenancy.RoleWorker, http.MethodPost, "/api/v1/enqueue/batch", map[string]any{"jobs": []any{enqueueBody}}, http.StatusForbidden},
		{tenancy.RoleWorker, http.MethodPost, "/api/v1/fetch", fetch, http.StatusCreated},
		{tenancy.RoleWorker, http.MethodPost, "/api/v1/heartbeat", map[string]any{"jobs": map[string]any{}}, http.StatusCreated},
		{tenancy.RoleViewer, http.MethodGet, "/api/v1/jobs/job_1", nil, http.StatusCreated},
		{tenancy.RoleViewer, http.MethodPost, "/api/v1/enqueue", enqueueBody, http.StatusForbidden},
		{tenancy.RoleBilling, http.MethodGet, "/api/v1/jobs/job_1", nil, http.StatusForbidden},
		{tenancy.RoleBilling, http.MethodGet, "/api/v1/queues", nil, http.StatusForbidden},
		{tenancy.RoleDeveloper, http.MethodPost, "/api/v1/fail/job_1", map[string]any{"error": "x"}, http.StatusCreated},
	}
	for _, tc := range cases {
		t.Run(string(tc.role)+" "+tc.path, func(t *testing.T) {
			r := b.do(t, tc.method, tc.path, b.key(t, tc.role, "default"), tc.body)
			if tc.status != http.StatusForbidden {
				require.Equal(t, tc.status, r.status, "body: %s", r.body) // the fake shard answers 201
				return
			}
			e := r.requireError(t, http.StatusForbidden, apierr.Forbidden)
			require.Contains(t, e.Message, "role "+string(tc.role))
		})
	}
}

func TestNamespaceSelection(t *testing.T) {
	t.Parallel()
	b := setup(t)
	emailsOnly := b.key(t, tenancy.RoleProducer, "emails")

	r := b.do(t, http.MethodPost, "/api/v1/enqueue", emailsOnly, enqueueBody)
	require.Equal(t, http.StatusCreated, r.status)
	require.Equal(t, tenantA+"/emails", b.shard.last(t).Header.Get(wire.ShardNamespaceHeader))

	e := b.do(t, http.MethodPost, "/api/v1/enqueue", emailsOnly, enqueueBody, wire.NamespaceHeader, "default").
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Contains(t, e.Message, `namespace "default"`)

	e = b.do(t, http.MethodPost, "/api/v1/enqueue", emailsOnly, enqueueBody, wire.NamespaceHeader, "Not_A_Name").
		requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, wire.NamespaceHeader, e.Field)

	b.do(t, http.MethodPost, "/api/v1/enqueue", b.key(t, tenancy.RoleOwner, "*"), enqueueBody, wire.NamespaceHeader, "*").
		requireError(t, http.StatusBadRequest, apierr.BadRequest)

	owner := b.key(t, tenancy.RoleOwner, "*")
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", owner, enqueueBody, wire.NamespaceHeader, "emails").status)
	require.Equal(t, tenantA+"/emails", b.shard.last(t).Header.Get(wire.ShardNamespaceHeader))
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", owner, enqueueBody).status)
	require.Equal(t, tenantA+"/default", b.shard.last(t).Header.Get(wire.ShardNamespaceHeader))
}

func TestRouteTableActions(t *testing.T) {
	t.Parallel()
	want := map[string]tenancy.Action{
		"POST /api/v1/enqueue":                    tenancy.ActJobEnqueue,
		"POST /api/v1/enqueue/batch":              tenancy.ActJobEnqueue,
		"POST /api/v1/fetch":                      tenancy.ActJobWork,
		"POST /api/v1/ack/:id":                    tenancy.ActJobWork,
		"POST /api/v1/fetch/batch":                tenancy.ActJobWork,
		"POST /api/v1/ack/batch":                  tenancy.ActJobWork,
		"POST /api/v1/release":                    tenancy.ActJobWork,
		"POST /api/v1/fail/:id":                   tenancy.ActJobWork,
		"POST /api/v1/heartbeat":                  tenancy.ActJobWork,
		"GET /api/v1/jobs/:id":                    tenancy.ActJobRead,
		"POST /api/v1/jobs/:id/retry":             tenancy.ActJobManage,
		"POST /api/v1/jobs/:id/cancel":            tenancy.ActJobManage,
		"POST /api/v1/jobs/:id/move":              tenancy.ActJobManage,
		"DELETE /api/v1/jobs/:id":                 tenancy.ActJobManage,
		"GET /api/v1/dead":                        tenancy.ActJobRead,
		"POST /api/v1/jobs/search":                tenancy.ActJobRead,
		"POST /api/v1/jobs/bulk":                  tenancy.ActJobManage,
		"GET /api/v1/bulk":                        tenancy.ActJobRead,
		"GET /api/v1/bulk/:id":                    tenancy.ActJobRead,
		"GET /api/v1/bulk/:id/progress":           tenancy.ActJobRead,
		"GET /api/v1/cluster":                     tenancy.ActQueueRead,
		"DELETE /api/v1/bulk/:id":                 tenancy.ActJobManage,
		"GET /api/v1/batches":                     tenancy.ActJobRead,
		"GET /api/v1/jobs/:id/chain":              tenancy.ActJobRead,
		"GET /api/v1/batches/:id":                 tenancy.ActJobRead,
		"GET /api/v1/workers":                     tenancy.ActQueueRead,
		"POST /api/v1/workers/:id/drain":          tenancy.ActQueueManage,
		"GET /api/v1/signing-keys":                tenancy.ActWebhookRead,
		"POST /api/v1/signing-keys/rotate":        tenancy.ActWebhookManage,
		"GET /api/v1/webhooks":                    tenancy.ActWebhookRead,
		"POST /api/v1/webhooks":                   tenancy.ActWebhookManage,
		"GET /api/v1/webhooks/:id":                tenancy.ActWebhookRead,
		"PUT /api/v1/webhooks/:id":                tenancy.ActWebhookManage,
		"DELETE /api/v1/webhooks/:id":             tenancy.ActWebhookManage,
		"GET /api/v1/webhooks/:id/deliveries":     tenancy.ActWebhookRead,
		"POST /api/v1/webhooks/:id/rotate-secret": tenancy.ActWebhookManage,
		"POST /api/v1/webhooks/:id/test":          tenancy.ActWebhookManage,
		"POST /api/v1/webhooks/:id/redeliver":     tenancy.ActWebhookManage,
		"GET /api/v1/ai/usage":                    tenancy.ActUsageRead,
		"GET /api/v1/ai/budgets":                  tenancy.ActUsageRead,
		"POST /api/v1/ai/budgets":                 tenancy.ActNamespaceManage,
		"GET /api/v1/ai/budgets/:name":            tenancy.ActUsageRead,
		"PUT /api/v1/ai/budgets/:name":            tenancy.ActNamespaceManage,
		"DELETE /api/v1/ai/budgets/:name":         tenancy.ActNamespaceManage,
		"POST /api/v1/jobs/:id/approve":           tenancy.ActJobManage,
		"POST /api/v1/jobs/:id/reject":            tenancy.ActJobManage,
		"GET /api/v1/alerts":                      tenancy.ActNamespaceRead,
		"POST /api/v1/alerts":                     tenancy.ActQueueManage,
		"GET /api/v1/alerts/:name":                tenancy.ActNamespaceRead,
		"PUT /api/v1/alerts/:name":                tenancy.ActQueueManage,
		"DELETE /api/v1/alerts/:name":             tenancy.ActQueueManage,
		"GET /api/v1/events":                      tenancy.ActJobRead,

		"GET /api/v1/schedules":              tenancy.ActScheduleRead,
		"POST /api/v1/schedules":             tenancy.ActScheduleManage,
		"GET /api/v1/schedules/:id":          tenancy.ActScheduleRead,
		"PUT /api/v1/schedules/:id":          tenancy.ActScheduleManage,
		"DELETE /api/v1/schedules/:id":       tenancy.ActScheduleManage,
		"POST /api/v1/schedules/:id/enable":  tenancy.ActScheduleManage,
		"POST /api/v1/schedules/:id/run":     tenancy.ActScheduleManage,
		"POST /api/v1/schedules/preview":     tenancy.ActScheduleRead,
		"POST /api/v1/schedules/:id/disable": tenancy.ActScheduleManage,

		"GET /api/v1/queues":                      tenancy.ActQueueRead,
		"GET /api/v1/queues/:name":                tenancy.ActQueueRead,
		"GET /api/v1/queues/:name/stats":          tenancy.ActQueueRead,
		"GET /api/v1/queues/:name/scale":          tenancy.ActQueueRead,
		"PUT /api/v1/queues/:name":                tenancy.ActQueueManage,
		"DELETE /api/v1/queues/:name":             tenancy.ActQueueManage,
		"POST /api/v1/queues/:name/pause":         tenancy.ActQueueManage,
		"POST /api/v1/queues/:name/resume":        tenancy.ActQueueManage,
		"POST /api/v1/queues/:name/drain":         tenancy.ActQueueManage,
		"POST /api/v1/queues/:name/clear":         tenancy.ActQueueManage,
		"POST /api/v1/queues/:name/concurrency":   tenancy.ActQueueManage,
		"DELETE /api/v1/queues/:name/concurrency": tenancy.ActQueueManage,
		"POST /api/v1/queues/:name/throttle":      tenancy.ActQueueManage,
		"DELETE /api/v1/queues/:name/throttle":    tenancy.ActQueueManage,
		"POST /api/v1/queues/:name/defaults":      tenancy.ActQueueManage,

		"GET /api/v1/namespaces":  tenancy.ActNamespaceRead,
		"POST /api/v1/namespaces": tenancy.ActNamespaceManage,
		"GET /api/v1/keys":        tenancy.ActKeyRead,
		"POST /api/v1/keys":       tenancy.ActKeyManage,
		"DELETE /api/v1/keys/:id": tenancy.ActKeyManage,

		"GET /api/v1/namespaces/:name":    tenancy.ActNamespaceRead,
		"PATCH /api/v1/namespaces/:name":  tenancy.ActNamespaceManage,
		"DELETE /api/v1/namespaces/:name": tenancy.ActNamespaceManage,
		"GET /api/v1/keys/:id":            tenancy.ActKeyRead,
		"POST /api/v1/keys/:id/rotate":    tenancy.ActKeyManage,

		"GET /api/v1/roles":          tenancy.ActKeyRead,
		"POST /api/v1/roles":         tenancy.ActKeyManage,
		"GET /api/v1/roles/:name":    tenancy.ActKeyRead,
		"PUT /api/v1/roles/:name":    tenancy.ActKeyManage,
		"DELETE /api/v1/roles/:name": tenancy.ActKeyManage,

		"GET /api/v1/audit":             tenancy.ActAuditRead,
		"GET /api/v1/usage":             tenancy.ActUsageRead,
		"GET /api/v1/plan":              tenancy.ActUsageRead,
		"GET /api/v1/invoices":          tenancy.ActUsageRead,
		"GET /api/v1/invoices/upcoming": tenancy.ActUsageRead,
		"GET /api/v1/invoices/:id":      tenancy.ActUsageRead,
		"GET /api/v1/invoices/:id/csv":  tenancy.ActUsageRead,

		"POST /api/v1/backups":                          tenancy.ActBackupManage,
		"GET /api/v1/backups":                           tenancy.ActBackupRead,
		"GET /api/v1/backups/:id":                       tenancy.ActBackupRead,
		"DELETE /api/v1/backups/:id":                    tenancy.ActBackupManage,
		"GET /api/v1/backups/:id/download":              tenancy.ActBackupManage,
		"POST /api/v1/backups/:id/restore":              tenancy.ActBackupManage,
		"GET /api/v1/namespaces/:name/backup-policy":    tenancy.ActBackupRead,
		"PUT /api/v1/namespaces/:name/backup-policy":    tenancy.ActBackupManage,
		"DELETE /api/v1/namespaces/:name/backup-policy": tenancy.ActBackupManage,
		"GET /api/v1/namespaces/:name/egress":           tenancy.ActNamespaceRead,
		"PUT /api/v1/namespaces/:name/egress":           tenancy.ActNamespaceManage,
		"GET /api/v1/tracing":                           tenancy.ActNamespaceRead,
		"PUT /api/v1/tracing":                           tenancy.ActNamespaceManage,
		"GET /api/v1/encryption":                        tenancy.ActNamespaceRead,
		"PUT /api/v1/encryption":                        tenancy.ActEncryptionManage,

		"GET /api/v1/openapi.json": "", // public: no key, no action
		"GET /api/v1/info":         "",

		"GET /api/v1/shards":                    tenancy.ActNamespaceRead,
		"POST /api/v1/shards/join-tokens":       tenancy.ActKeyManage,
		"DELETE /api/v1/shards/:id":             tenancy.ActKeyManage,
		"POST /api/v1/shards/:id/join-tokens":   tenancy.ActKeyManage,
		"DELETE /api/v1/shards/:id/nodes/:node": tenancy.ActKeyManage,

		"GET /api/v1/sso":    tenancy.ActSSOManage,
		"PUT /api/v1/sso":    tenancy.ActSSOManage,
		"DELETE /api/v1/sso": tenancy.ActSSOManage,
	}
	got := map[string]tenancy.Action{}
	for _, rt := range routeTable {
		got[rt.method+" "+rt.path] = rt.action
	}
	require.Equal(t, want, got)
}
