package tenancy

import "fmt"

// Role is a built-in role name carried in an API key. Custom roles per
// tenant come later and will live alongside these in the casbin policy.
type Role string

const (
	RoleOwner     Role = "owner"
	RoleAdmin     Role = "admin"
	RoleDeveloper Role = "developer"
	RoleProducer  Role = "producer"
	RoleWorker    Role = "worker"
	RoleViewer    Role = "viewer"
	RoleBilling   Role = "billing"
	// RoleOperator is the service operator's role; it is honoured only by the
	// control plane's operator API, never by tenant endpoints.
	RoleOperator Role = "operator"
)

// TenantRoles are the roles a tenant key may carry.
var TenantRoles = []Role{RoleOwner, RoleAdmin, RoleDeveloper, RoleProducer, RoleWorker, RoleViewer, RoleBilling}

// ParseRole validates a tenant role name.
func ParseRole(s string) (Role, error) {
	for _, r := range TenantRoles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("role %q is not one of owner, admin, developer, producer, worker, viewer, billing", s)
}

// rank orders roles for delegation: a key may only mint keys whose role
// ranks at or below its own. Roles of equal rank but different powers
// (producer, worker, viewer, billing) are all below developer.
var rank = map[Role]int{
	RoleOwner: 4, RoleAdmin: 3, RoleDeveloper: 2,
	RoleProducer: 1, RoleWorker: 1, RoleViewer: 1, RoleBilling: 1,
}

// CanGrant reports whether a key with role r may create a key with role other.
func (r Role) CanGrant(other Role) bool {
	return rank[r] >= 3 && rank[r] >= rank[other]
}

// Action is what a request wants to do; RBAC decides role × action.
type Action string

const (
	ActJobEnqueue      Action = "job.enqueue"
	ActJobWork         Action = "job.work" // fetch, ack, fail, heartbeat
	ActJobRead         Action = "job.read"
	ActJobManage       Action = "job.manage"
	ActQueueRead       Action = "queue.read"
	ActQueueManage     Action = "queue.manage"
	ActScheduleRead    Action = "schedule.read"
	ActScheduleManage  Action = "schedule.manage"
	ActNamespaceRead   Action = "namespace.read"
	ActNamespaceManage Action = "namespace.manage"
	ActKeyRead         Action = "key.read"
	ActKeyManage       Action = "key.manage"
	ActUsageRead       Action = "usage.read"
	// Backups of a namespace: read is the catalog and policies; manage
	// takes, deletes, downloads (a backup holds every payload) and
	// restores them, and sets policies.
	ActBackupRead   Action = "backup.read"
	ActBackupManage Action = "backup.manage"
	// Calls Jobbie makes out: read is the namespace's signing keys (public
	// parts only); manage rotates them.
	ActWebhookRead   Action = "webhook.read"
	ActWebhookManage Action = "webhook.manage"
	// The tenant's audit log (GET /api/v1/audit): who did what. Owner and
	// admin hold it (every action); no other built-in role does.
	ActAuditRead Action = "audit.read"
)
