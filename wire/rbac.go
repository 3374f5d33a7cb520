package wire

// The names RBAC speaks in: the role an API key carries and the actions
// a role's permissions grant. They are defined here, in the public
// vocabulary, so the SDK can name them without the RBAC engine; package
// tenancy gives them their meaning (which role may do what, who may mint
// which key) under the same names.

// RoleName is the role an API key carries: a built-in role below, or the
// name of one of its tenant's custom roles.
type RoleName string

// The built-in roles.
const (
	RoleOwner     RoleName = "owner"
	RoleAdmin     RoleName = "admin"
	RoleDeveloper RoleName = "developer"
	RoleProducer  RoleName = "producer"
	RoleWorker    RoleName = "worker"
	RoleViewer    RoleName = "viewer"
	RoleBilling   RoleName = "billing"
	// RoleOperator is the service operator's role; it is honoured only by the
	// control plane's operator API, never by tenant endpoints.
	RoleOperator RoleName = "operator"
)

// Action is what a request wants to do; RBAC decides role × action. A
// Permission's Actions are these (or patterns of them, "job.*").
type Action string

// The actions.
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
	// A namespace's encryption at rest and the tenant's key
	// (/api/v1/encryption PUT): the owner's alone, whatever another role
	// holds (tenancy.RBACModel).
	ActEncryptionManage Action = "encryption.manage"
)
