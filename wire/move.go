package wire

import "time"

// Live namespace moves: control copies a namespace from its shard (the
// source) to another (the target) while it serves, then switches its
// placement. See docs/internal-api.md, "Live namespace moves".

// Headers and codes of a move between control, shards and gateways.
const (
	// MoveTokenHeader names the move a request to a shard's
	// /internal/v1/move/* routes belongs to (the move's id). Control sets
	// it; a shard holds at most one move session per namespace.
	MoveTokenHeader = "X-Jobbie-Move-Token"
	// MovingHeader marks a shard's 503 namespace_moving answer: "fenced"
	// while the namespace's writes are held for the cut-over, "moved"
	// once it lives elsewhere. The request changed nothing; a gateway
	// asks control where the namespace is now and sends it again.
	MovingHeader = "X-Jobbie-Namespace-Moving"
	MovingFenced = "fenced"
	MovingMoved  = "moved"
)

// CodeNamespaceMoving (503, Retry-After set) refuses a request to a
// namespace being cut over to another shard, or already moved from the
// shard asked. Nothing changed; retry.
const CodeNamespaceMoving ErrorCode = "namespace_moving"

// Move states. A move is cancellable until it is switched.
const (
	MoveCopying    = "copying"     // the snapshot is being copied to the target
	MoveCatchingUp = "catching_up" // changes since the snapshot are being copied
	MoveFenced     = "fenced"      // writes held at the source; the last changes are copied
	MoveSwitched   = "switched"    // placement names the target; the source's copy is being removed
	MoveCompleted  = "completed"
	MoveCancelled  = "cancelled"
	MoveFailed     = "failed"
)

// NamespaceMoveRequest is POST {control}/control/v1/namespaces/{tenant}/{namespace}/move.
type NamespaceMoveRequest struct {
	ToShard string `json:"to_shard"`
}

// Move is a namespace move as control reports it.
type Move struct {
	ID        string `json:"id"`
	TenantID  string `json:"tenant_id"`
	Namespace string `json:"namespace"`
	FromShard string `json:"from_shard"`
	ToShard   string `json:"to_shard"`
	State     string `json:"state"`
	// Rounds counts the copies of changes made after the snapshot
	// (the last one under the fence included).
	Rounds int `json:"rounds"`
	// Records and Bytes are what was sent to the target so far.
	Records int64 `json:"records"`
	Bytes   int64 `json:"bytes"`
	// PauseMS is how long the source held writes (fence to switch).
	PauseMS    int64      `json:"pause_ms,omitempty"`
	Error      string     `json:"error,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// MoveList is GET {control}/control/v1/moves.
type MoveList struct {
	Moves []Move `json:"moves"`
}
