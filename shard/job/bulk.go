package job

import "github.com/jobbie/jobbie/wire"

// Bulk actions and the states each applies to (the seed's table). A job in
// another state is skipped, not an error. Each action then goes through
// the same decision as the one-job operation, so the rules stay in one
// place: bulk delete, like delete, leaves active jobs alone.
const (
	BulkRetry          = wire.BulkRetry
	BulkDelete         = wire.BulkDelete
	BulkCancel         = wire.BulkCancel
	BulkMove           = wire.BulkMove
	BulkRequeue        = wire.BulkRequeue
	BulkChangePriority = wire.BulkChangePriority
	BulkApprove        = wire.BulkApprove
	BulkReject         = wire.BulkReject
)

var bulkStates = map[string][]State{
	BulkRetry:          {Dead, Cancelled, Completed},
	BulkDelete:         {Scheduled, Pending, Completed, Retrying, Dead, Cancelled, Held},
	BulkCancel:         {Pending, Active, Scheduled, Retrying, Held},
	BulkMove:           {Pending, Dead, Scheduled, Completed},
	BulkRequeue:        {Dead},
	BulkChangePriority: {Pending, Scheduled},
	// Of the held jobs, only those a budget holds (the engine's check).
	BulkApprove: {Held},
	BulkReject:  {Held},
}

// IsBulkAction reports whether a is a bulk action.
func IsBulkAction(a string) bool { _, ok := bulkStates[a]; return ok }

// BulkActions lists the bulk actions, for error messages.
func BulkActions() []string {
	return []string{BulkRetry, BulkDelete, BulkCancel, BulkMove, BulkRequeue, BulkChangePriority, BulkApprove, BulkReject}
}

// BulkApplies reports whether bulk action a applies to a job in state s.
func BulkApplies(a string, s State) bool {
	for _, t := range bulkStates[a] {
		if t == s {
			return true
		}
	}
	return false
}
