package wire

// Error codes of tenant administration (409s that say what to do).
const (
	CodeDeletionProtected ErrorCode = "deletion_protected"  // DELETE of a namespace whose deletion_protection is on: PATCH it off first
	CodeNamespaceNotEmpty ErrorCode = "namespace_not_empty" // DELETE of a namespace that holds jobs, queues or schedules without ?force=true
	CodeRoleInUse         ErrorCode = "role_in_use"         // DELETE of a custom role that live (unrevoked, unexpired) keys carry; the message counts them
)
