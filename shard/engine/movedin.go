package engine

import (
	"encoding/binary"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// MovedIn is the mark a move's end leaves on its target (keys.MovedIn,
// outside the namespace): which move ended the namespace here, at which
// log index, and whether a client's command changed it since.
//
// Control switches placement only after the end, and gateways reach the
// target only after the switch. So while no client's command has reached
// the namespace, the target's copy is one nothing but this move knows of,
// and the move's abort (its end's answer lost, control's leader changed,
// a cancel raced the end) removes it, as a restore's abort does. Once a
// client's command reached it, it is live here and the abort refuses. The
// mark stays until the next restore or move into the namespace, a move
// out of it, its delete or that abort.
type MovedIn struct {
	Token   string
	Index   uint64
	Touched bool
}

func encodeMovedIn(m MovedIn) []byte {
	v := make([]byte, 9, 9+len(m.Token))
	if m.Touched {
		v[0] = 1
	}
	binary.BigEndian.PutUint64(v[1:], m.Index)
	return append(v, m.Token...)
}

func decodeMovedIn(v []byte) MovedIn {
	if len(v) < 9 {
		return MovedIn{Touched: true} // unreadable: never removed by an abort
	}
	return MovedIn{Touched: v[0]&1 != 0, Index: binary.BigEndian.Uint64(v[1:9]), Token: string(v[9:])}
}

// ErrMovedInLive refuses the abort of a move whose end made the namespace
// live here and which clients have used since: it is not removed.
var ErrMovedInLive = apierr.New(apierr.Conflict,
	"this move ended here and the namespace is live on this shard: it took client commands since, so it is not removed (its placement may name this shard)")

// writeMovedIn and clearMovedIn change the state and both sets, as the
// fence's writers do.
func (e *Engine) writeMovedIn(tx *replica.Tx, ns string, in MovedIn) {
	e.changeMark(tx, keys.MovedIn(ns), encodeMovedIn(in), func(m *moveSet) { setIn(m, &m.in, ns, in, true) })
}

// touchMovedIn marks ns touched if a move ended it here and no client's
// command reached it since: that move's abort no longer removes it.
func (e *Engine) touchMovedIn(tx *replica.Tx, ns string) {
	if _, _, in, ok := e.movesFSM.marks(tx, ns); ok && !in.Touched {
		in.Touched = true
		e.writeMovedIn(tx, ns, in)
	}
}

// clearMovedIn drops ns's moved-in mark, if it has one.
func (e *Engine) clearMovedIn(tx *replica.Tx, ns string) {
	if _, _, _, ok := e.movesFSM.marks(tx, ns); !ok {
		return
	}
	e.changeMark(tx, keys.MovedIn(ns), nil, func(m *moveSet) { setIn(m, &m.in, ns, MovedIn{}, false) })
}

// movedInBy returns ns's moved-in mark if the move token ended it here.
func (e *Engine) movedInBy(tx *replica.Tx, ns, token string) (MovedIn, bool) {
	_, _, in, ok := e.movesFSM.marks(tx, ns)
	return in, ok && in.Token == token
}

// abortMovedIn removes ns, which the move token ended here, if no client's
// command reached it since (MovedIn).
func (e *Engine) abortMovedIn(tx *replica.Tx, ns string, in MovedIn) error {
	if in.Touched {
		return ErrMovedInLive
	}
	e.wipeAborted(tx, ns)
	e.clearMovedIn(tx, ns)
	return nil
}
