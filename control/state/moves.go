package state

import (
	"github.com/cockroachdb/pebble"
	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/wire"
)

// LeftTombstone reports whether the catalog holds a completed move of
// namespace ns of tenant tid away from shard, which left a tombstone
// there (a later move back cleared it, but clearing again is harmless).
func LeftTombstone(r pebble.Reader, tid, ns, shard string) bool {
	found := false
	err := scanJSON(r, layout.Moves(), func(_ []byte, m MoveRecord) {
		if m.State == wire.MoveCompleted && m.TenantID == tid && m.Namespace == ns && m.FromShard == shard {
			found = true
		}
	})
	if err != nil {
		panic(err)
	}
	return found
}

func ListMoves(r pebble.Reader) ([]MoveRecord, error) {
	var out []MoveRecord
	err := scanJSON(r, layout.Moves(), func(_ []byte, m MoveRecord) { out = append(out, m) })
	return out, err
}
