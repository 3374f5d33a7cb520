package tenancy

import (
	"fmt"

	"github.com/jobbie/jobbie/wire"
)

// Role is the role an API key carries (wire.RoleName, where the names
// are defined): a built-in role, or a tenant's custom role's name.
type Role = wire.RoleName

// The built-in roles, under their wire names.
const (
	RoleOwner     = wire.RoleOwner
	RoleAdmin     = wire.RoleAdmin
	RoleDeveloper = wire.RoleDeveloper
	RoleProducer  = wire.RoleProducer
	RoleWorker    = wire.RoleWorker
	RoleViewer    = wire.RoleViewer
	RoleBilling   = wire.RoleBilling
	RoleOperator  = wire.RoleOperator
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
func CanGrant(r, other Role) bool {
	return rank[r] >= 3 && rank[r] >= rank[other]
}

// Action is what a request wants to do (wire.Action, where the names are
// defined); RBAC decides role × action.
type Action = wire.Action

// The actions, under their wire names.
const (
	ActJobEnqueue      = wire.ActJobEnqueue
	ActJobWork         = wire.ActJobWork
	ActJobRead         = wire.ActJobRead
	ActJobManage       = wire.ActJobManage
	ActQueueRead       = wire.ActQueueRead
	ActQueueManage     = wire.ActQueueManage
	ActScheduleRead    = wire.ActScheduleRead
	ActScheduleManage  = wire.ActScheduleManage
	ActNamespaceRead   = wire.ActNamespaceRead
	ActNamespaceManage = wire.ActNamespaceManage
	ActKeyRead         = wire.ActKeyRead
	ActKeyManage       = wire.ActKeyManage
	ActUsageRead       = wire.ActUsageRead
	ActBackupRead      = wire.ActBackupRead
	ActBackupManage    = wire.ActBackupManage
	ActWebhookRead     = wire.ActWebhookRead
	ActWebhookManage   = wire.ActWebhookManage
	ActAuditRead       = wire.ActAuditRead

	ActEncryptionManage = wire.ActEncryptionManage
)
