package layout

// Live namespace moves. Prefixes continue owned.go's list.
const (
	prefixMove        byte = 0x27 // move id → the move's record (JSON)
	prefixMoveRunning byte = 0x28 // tenant id, namespace → the id of its move not yet ended
)

// Move is the key of move id. Ids are "mov_" and a ULID, so moves sort by
// creation time.
func Move(id string) []byte { return key(prefixMove, id) }

// Moves is the prefix of every move.
func Moves() []byte { return []byte{prefixMove} }

// MoveRunning is the key naming the move of namespace ns of tenant tid
// that has not ended: at most one per namespace.
func MoveRunning(tid, ns string) []byte { return key(prefixMoveRunning, tid, ns) }
