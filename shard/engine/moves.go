package engine

import (
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// Live moves of a namespace to another shard (docs/internal-api.md, "Live
// namespace moves"). The target runs a restore in move mode: RestoreBegin,
// then MoveChunk (records set and deleted, as the source's snapshot and
// its later differences say), then MoveEndMarked, which keeps active jobs
// active with their leases and leaves the moved-in mark (movedin.go).
// MoveEnd is its form of older logs, without the mark. The source holds
// the namespace's writes with MoveFence for the cut-over, and after the
// switch MoveFinish removes its copy and leaves a moved tombstone.
var (
	MoveFence   = replica.Op[MoveFenceCmd, int64]{Type: 49, Name: "move.fence"} // until (unix ns)
	MoveUnfence = replica.Op[MoveTokenCmd, replica.None]{Type: 50, Name: "move.unfence"}
	MoveFinish  = replica.Op[MoveFinishCmd, replica.None]{Type: 51, Name: "move.finish"}
	MoveChunk   = replica.Op[MoveChunkCmd, replica.None]{Type: 52, Name: "move.chunk"}
	MoveEnd     = replica.Op[RestoreTokenCmd, *RestoreEnded]{Type: 53, Name: "move.end"} // older logs; proposers use MoveEndMarked

	MoveEndMarked = replica.Op[RestoreTokenCmd, *RestoreEnded]{Type: 54, Name: "move.end.marked"}
)

// Bounds of a fence's ttl.
const (
	MinFenceTTL = 1_000_000_000   // 1 s
	MaxFenceTTL = 120_000_000_000 // 2 min
)

// MoveFenceCmd fences NS for the move Token for TTL (ns) from the entry's
// clock. Fencing again with the same token extends it.
type MoveFenceCmd struct {
	NS    string `codec:"ns"`
	Token string `codec:"t"`
	TTL   int64  `codec:"ttl"`
}

// MoveTokenCmd names a move of NS.
type MoveTokenCmd struct {
	NS    string `codec:"ns"`
	Token string `codec:"t"`
}

// MoveFinishCmd removes NS, moved by Token to the shard To, from here.
type MoveFinishCmd struct {
	NS    string `codec:"ns"`
	Token string `codec:"t"`
	To    string `codec:"to"`
}

// MoveChunkCmd writes records of a move (keys relative to the namespace)
// and deletes keys the source no longer has.
type MoveChunkCmd struct {
	NS    string          `codec:"ns"`
	Token string          `codec:"t"`
	Recs  []RestoreRecord `codec:"r"`
	Dels  [][]byte        `codec:"d"`
}

func (e *Engine) registerMoves(r *replica.Registry) {
	MoveFence.Handle(r, e.applyMoveFence)
	MoveUnfence.Handle(r, e.applyMoveUnfence)
	MoveFinish.Handle(r, e.applyMoveFinish)
	MoveChunk.Handle(r, e.applyMoveChunk)
	MoveEnd.Handle(r, func(tx *replica.Tx, c *RestoreTokenCmd) (*RestoreEnded, error) { return e.endRestore(tx, c, endMove) })
	MoveEndMarked.Handle(r, func(tx *replica.Tx, c *RestoreTokenCmd) (*RestoreEnded, error) {
		return e.endRestore(tx, c, endMoveMarked)
	})
}

func (e *Engine) applyMoveFence(tx *replica.Tx, c *MoveFenceCmd) (int64, error) {
	switch {
	case c.NS == "" || c.Token == "":
		return 0, apierr.New(apierr.BadRequest, "a fence needs a namespace and a token")
	case c.TTL < MinFenceTTL || c.TTL > MaxFenceTTL:
		return 0, apierr.Field("ttl_ms", "ttl_ms must be between 1000 and 120000")
	case restoring(tx, c.NS):
		return 0, apierr.New(apierr.Conflict, "a restore or move into this namespace is running here; it cannot be moved out")
	}
	now := tx.Now.UnixNano()
	f, _, moved := e.movesFSM.get(tx, c.NS)
	switch {
	case moved:
		return 0, apierr.New(apierr.Conflict, "this namespace has already moved away from this shard")
	case f.Token != c.Token && f.holds(now):
		return 0, apierr.New(apierr.Conflict, "another move fences this namespace")
	}
	f = Fence{Token: c.Token, Until: now + c.TTL}
	e.writeFence(tx, c.NS, f)
	return f.Until, nil
}

func (e *Engine) applyMoveUnfence(tx *replica.Tx, c *MoveTokenCmd) (replica.None, error) {
	if c.NS == "" || c.Token == "" {
		return replica.None{}, apierr.New(apierr.BadRequest, "an unfence needs a namespace and a token")
	}
	if f, _, _ := e.movesFSM.get(tx, c.NS); f.Token == c.Token {
		e.clearFence(tx, c.NS)
	}
	return replica.None{}, nil
}

// applyMoveFinish deletes the namespace's keys (its usage stays, as for a
// namespace delete) and leaves the moved tombstone. It needs the move's
// fence, held or lapsed: the placement already names the target, so a
// late finish still removes the copy. Once moved, it does nothing.
func (e *Engine) applyMoveFinish(tx *replica.Tx, c *MoveFinishCmd) (replica.None, error) {
	if c.NS == "" || c.Token == "" || c.To == "" {
		return replica.None{}, apierr.New(apierr.BadRequest, "a finish needs a namespace, a token and the shard it moved to")
	}
	f, _, moved := e.movesFSM.get(tx, c.NS)
	switch {
	case moved:
		return replica.None{}, nil
	case f.Token != c.Token:
		return replica.None{}, apierr.New(apierr.Conflict, "this move does not fence this namespace: fence it before finishing")
	}
	e.wipeNamespace(tx, c.NS)
	e.clearFence(tx, c.NS)
	e.clearMovedIn(tx, c.NS) // it came here by a move
	e.writeMoved(tx, c.NS, c.To)
	return replica.None{}, nil
}

func (e *Engine) applyMoveChunk(tx *replica.Tx, c *MoveChunkCmd) (replica.None, error) {
	if err := e.restoreHeld(tx, c.NS, c.Token); err != nil {
		return replica.None{}, err
	}
	for _, rel := range c.Dels {
		if len(rel) == 0 { // refused before anything is written
			return replica.None{}, apierr.New(apierr.BadRequest, "a deleted record has an empty key")
		}
	}
	if err := e.writeRestored(tx, c.NS, c.Recs, true); err != nil {
		return replica.None{}, err
	}
	p := keys.Namespace(c.NS)
	metering := e.usage.metering(tx)
	var key []byte
	for _, rel := range c.Dels {
		if !e.restoredKeyKept(tx, rel) || setOnce(rel[0]) {
			continue // the shard's own log (eventkept.go); a key of a job's state goes with its record
		}
		key = append(append(key[:0], p...), rel...)
		if IsJobKey(rel) {
			if metering {
				e.storedDelta(tx, c.NS, -storedOf(tx, key)) // what its set added
			}
			dropStateKeysOf(tx, c.NS, key)
			e.jobs.drop(string(rel[1:]))
		}
		must(tx.Delete(key, nil))
	}
	e.setRestoreMark(tx, c.NS, RestoreMark{Token: c.Token, At: tx.Now.UnixNano()})
	return replica.None{}, nil
}
