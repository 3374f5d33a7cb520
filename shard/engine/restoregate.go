package engine

import (
	"errors"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// A namespace a restore is writing takes no client command: the API
// answers 503 before proposing one (ErrRestoring), and once
// RestoreStartRefusing has applied, the apply refuses one too, changing
// nothing. That closes the window the API's check leaves: a command
// proposed before the restore began and applied after it, between two of
// its chunks, would change jobs whose records and index keys come in
// different chunks, leaving keys that name jobs in other states. The
// leader's loops leave a restoring namespace alone (their sweeps check
// the marker in their handlers); deleting the namespace ends a restore
// and goes through. Logs written before the start command apply as they
// did, and a member of an older build stops at the start command rather
// than apply later commands differently.

// RestoreStartRefusing makes the apply refuse client commands into a
// namespace being restored; the leader proposes it once.
var RestoreStartRefusing = replica.Op[RestoreStartCmd, replica.None]{Type: 120, Name: "restore.start.refusing"}

// RestoreStartCmd is RestoreStartRefusing's command: it carries nothing.
type RestoreStartCmd struct{}

// ErrRestoring answers a command into a namespace a restore is writing.
var ErrRestoring = apierr.Retry(apierr.Unavailable, 2, "a restore into this namespace is running; retry shortly")

// restoreGate is the apply's view of the gate: whether it refuses
// commands into a restoring namespace, and how many namespaces a restore
// is writing, so that a command pays no read of its namespace's marker
// while none is. Loaded from the state on first use after a reset or a
// marker's change (restoremarks.go), set by the start command's handler.
type restoreGate struct {
	known, on bool
	running   int
}

// gateOf is the apply's view of the gate, read from tx if not known.
func (e *Engine) gateOf(tx *replica.Tx) *restoreGate {
	g := &e.restoreRefuse
	if !g.known {
		*g = restoreGate{known: true, on: RestoreRefusing(tx)}
		if g.on {
			p := keys.RestoringPrefix()
			it, err := tx.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
			must(err)
			for ok := it.First(); ok; ok = it.Next() {
				g.running++
			}
			must(it.Close())
		}
	}
	return g
}

// RestoreRefusing reports whether the state records RestoreStartRefusing
// as applied.
func RestoreRefusing(r pebble.Reader) bool {
	_, closer, err := r.Get(keys.RestoreRefusing())
	if errors.Is(err, pebble.ErrNotFound) {
		return false
	}
	must(err)
	_ = closer.Close()
	return true
}

func (e *Engine) applyRestoreStartRefusing(tx *replica.Tx, _ *RestoreStartCmd) (replica.None, error) {
	if !e.gateOf(tx).on {
		must(tx.Set(keys.RestoreRefusing(), nil, nil))
		e.restoreRefuse.known = false // counted from the state with the gate on
	}
	return replica.None{}, nil
}

// restoreRefuses reports whether the apply refuses client command c into
// ns now: the start command applied, a restore is writing ns, and c is not
// the namespace's deletion (which ends the restore).
func (e *Engine) restoreRefuses(tx *replica.Tx, ns string, c any) bool {
	if _, purge := c.(*NamespacePurgeCmd); purge {
		return false
	}
	g := e.gateOf(tx)
	return g.on && g.running > 0 && restoring(tx, ns)
}
