package state

import (
	"slices"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// The move catalog: a record per live namespace move, and an index naming
// the move of each namespace that has not ended (at most one). A move is
// started, its progress recorded step by step, switched (the namespace's
// Placement and the move's state in one entry), and ended: completed
// once switched, failed or cancelled before. The runner (move_run.go)
// drives the shards between these entries.

// MoveIDPrefix starts every move id; the rest is a ULID.
const MoveIDPrefix = "mov_"

// MoveRecord is a move's catalog entry.
type MoveRecord struct {
	wire.Move
	// FencedAt is when the fence was recorded: pause_ms runs from it.
	FencedAt *time.Time `json:"fenced_at,omitempty"`
	// CancelRequested is set by a cancel before the switch: the switch
	// is then refused and the move ends cancelled, whoever ends it.
	CancelRequested bool `json:"cancel_requested,omitempty"`
	// Committing is set once the last delta is copied, before the
	// target ends: a cancel is refused from then on.
	Committing bool `json:"committing,omitempty"`
}

// Ended reports whether a move is over (completed, failed or cancelled).
func (m MoveRecord) Ended() bool { return MoveEnded(m.State) }

// StartMoveCmd starts a move of a namespace to ToShard. StaticShards are
// the proposer's configured shards (configuration, not state), so every
// node decides whether ToShard exists the same way.
type StartMoveCmd struct {
	ID           string   `json:"id"`
	Tenant       string   `json:"tenant"`
	Namespace    string   `json:"namespace"`
	ToShard      string   `json:"to_shard"`
	StaticShards []string `json:"static_shards"`
}

// MoveProgressCmd records a step of a running move that is not switched:
// its state and counters. FencedAt marks the entry that records the fence.
type MoveProgressCmd struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	Rounds  int    `json:"rounds"`
	Records int64  `json:"records"`
	Bytes   int64  `json:"bytes"`
	Fenced  bool   `json:"fenced,omitempty"`
	// Committing refuses cancels from this entry on (see moveRecord).
	Committing bool `json:"committing,omitempty"`
}

// SwitchMoveCmd places the namespace on the move's target and marks the
// move switched, in one entry; refused unless the move is fenced and not
// being cancelled.
type SwitchMoveCmd struct {
	ID      string `json:"id"`
	Rounds  int    `json:"rounds"`
	Records int64  `json:"records"`
	Bytes   int64  `json:"bytes"`
}

// CancelMoveCmd asks a move that is not switched to end cancelled.
type CancelMoveCmd struct {
	ID string `json:"id"`
}

// EndMoveCmd ends a move: completed (once switched), or failed with
// Error before the switch (cancelled instead when a cancel was asked).
// A move already ended is left as it is.
type EndMoveCmd struct {
	ID     string `json:"id"`
	Failed bool   `json:"failed,omitempty"`
	Error  string `json:"error,omitempty"`
}

func applyStartMove(tx *replica.Tx, c *StartMoveCmd) (MoveRecord, error) {
	if _, err := LoadTenant(tx, c.Tenant); err != nil {
		return MoveRecord{}, businessErr(err)
	}
	ns, err := LoadNamespace(tx, c.Tenant, c.Namespace)
	if err != nil {
		return MoveRecord{}, businessErr(err)
	}
	if ns.ShardID == c.ToShard {
		return MoveRecord{}, apierr.Field("to_shard", "namespace %q is on shard %s already", c.Namespace, c.ToShard)
	}
	registered := must(Exists(tx, layout.Shard(c.ToShard)))
	toOwner := must(ShardOwner(tx, c.ToShard))
	if !registered && toOwner == "" && !slices.Contains(c.StaticShards, c.ToShard) {
		return MoveRecord{}, apierr.New(apierr.NotFound, "shard %q not found", c.ToShard)
	}
	for _, sh := range []string{ns.ShardID, c.ToShard} {
		if must(ShardOwner(tx, sh)) != "" {
			return MoveRecord{}, apierr.New(apierr.Conflict,
				"shard %s is self-hosted: control cannot reach self-hosted shards, so it cannot move a namespace to or from one", sh)
		}
	}
	if id, ok := RunningMove(tx, c.Tenant, c.Namespace); ok {
		return MoveRecord{}, apierr.New(apierr.Conflict, "move %s of namespace %q is running: one at a time", id, c.Namespace)
	}
	if id := runningRestoreInto(tx, c.Tenant, c.Namespace); id != "" {
		return MoveRecord{}, apierr.New(apierr.Conflict, "restore %s into namespace %q is running: move it once the restore has ended", id, c.Namespace)
	}
	m := MoveRecord{Move: wire.Move{ID: c.ID, TenantID: c.Tenant, Namespace: c.Namespace, FromShard: ns.ShardID,
		ToShard: c.ToShard, State: moveSteps[MoveStart][""], CreatedAt: tx.Now, UpdatedAt: tx.Now}}
	mustSetJSON(tx, layout.Move(c.ID), m)
	mustSet(tx, layout.MoveRunning(c.Tenant, c.Namespace), []byte(c.ID))
	return m, nil
}

func applyMoveProgress(tx *replica.Tx, c *MoveProgressCmd) (MoveRecord, error) {
	m, err := LoadMove(tx, c.ID)
	if err != nil {
		return MoveRecord{}, businessErr(err)
	}
	if err := m.beforeSwitch(); err != nil {
		return m, err
	}
	step, ok := progressStep(c)
	if !ok {
		return m, apierr.New(apierr.Conflict, "move %s: progress to %s (fenced %t, committing %t) is no step of a move", m.ID, c.State, c.Fenced, c.Committing)
	}
	to, ok := MoveNext(m.State, step)
	if !ok {
		return m, apierr.New(apierr.Conflict, "move %s is %s: it cannot %s", m.ID, m.State, step)
	}
	m.State, m.Rounds, m.Records, m.Bytes, m.UpdatedAt = to, c.Rounds, c.Records, c.Bytes, tx.Now
	if c.Fenced {
		now := tx.Now
		m.FencedAt = &now
	}
	if c.Committing {
		if m.State != wire.MoveFenced || m.FencedAt == nil {
			return m, apierr.New(apierr.Conflict, "move %s is %s, not fenced: it cannot commit", m.ID, m.State)
		}
		m.Committing = true
	}
	mustSetJSON(tx, layout.Move(c.ID), m)
	return m, nil
}

// beforeSwitch refuses a step of a move that has ended, switched or is
// being cancelled.
func (m MoveRecord) beforeSwitch() error {
	switch {
	case m.CancelRequested:
		return apierr.New(apierr.Conflict, "move %s is being cancelled", m.ID)
	case m.Ended() || m.State == wire.MoveSwitched:
		return apierr.New(apierr.Conflict, "move %s is %s", m.ID, m.State)
	}
	return nil
}

func applySwitchMove(tx *replica.Tx, c *SwitchMoveCmd) (MoveRecord, error) {
	m, err := LoadMove(tx, c.ID)
	if err != nil {
		return MoveRecord{}, businessErr(err)
	}
	if err := m.beforeSwitch(); err != nil {
		return m, err
	}
	to, ok := MoveNext(m.State, MoveSwitch)
	if !ok || m.FencedAt == nil {
		return m, apierr.New(apierr.Conflict, "move %s is %s, not fenced: it cannot switch", m.ID, m.State)
	}
	ns, err := LoadNamespace(tx, m.TenantID, m.Namespace)
	if err != nil {
		return m, businessErr(err)
	}
	// The namespace's placement and its count on each shard, as a
	// delete on the source and a create on the target would leave them.
	switch load := must(getUint64(tx, layout.ShardLoad(ns.ShardID))); {
	case load > 1:
		mustSet(tx, layout.ShardLoad(ns.ShardID), layout.Uint64(load-1))
	default:
		mustDelete(tx, layout.ShardLoad(ns.ShardID))
	}
	ns.ShardID = m.ToShard
	putNamespace(tx, m.TenantID, ns)
	m.State, m.Rounds, m.Records, m.Bytes, m.UpdatedAt = to, c.Rounds, c.Records, c.Bytes, tx.Now
	m.PauseMS = max(tx.Now.Sub(*m.FencedAt).Milliseconds(), 0)
	mustSetJSON(tx, layout.Move(c.ID), m)
	return m, nil
}

func applyCancelMove(tx *replica.Tx, c *CancelMoveCmd) (MoveRecord, error) {
	m, err := LoadMove(tx, c.ID)
	if err != nil {
		return MoveRecord{}, businessErr(err)
	}
	switch {
	case m.State == wire.MoveSwitched || m.State == wire.MoveCompleted:
		return m, apierr.New(apierr.Conflict, "move %s is %s: its namespace is on shard %s, a move can only be cancelled before it switches", m.ID, m.State, m.ToShard)
	case m.Ended() || m.CancelRequested:
		return m, nil
	case m.Committing:
		return m, apierr.New(apierr.Conflict, "move %s is switching its namespace to shard %s: too late to cancel", m.ID, m.ToShard)
	}
	m.CancelRequested, m.UpdatedAt = true, tx.Now
	mustSetJSON(tx, layout.Move(c.ID), m)
	return m, nil
}

func applyEndMove(tx *replica.Tx, c *EndMoveCmd) (MoveRecord, error) {
	m, err := LoadMove(tx, c.ID)
	if err != nil {
		return MoveRecord{}, businessErr(err)
	}
	if m.Ended() {
		return m, nil
	}
	step := MoveComplete
	switch {
	case c.Failed && m.CancelRequested:
		step = MoveCancel
	case c.Failed:
		step = MoveFail
	}
	to, ok := MoveNext(m.State, step)
	switch {
	case !ok && step == MoveComplete:
		return m, apierr.New(apierr.Conflict, "move %s is %s: only a switched move completes", m.ID, m.State)
	case !ok:
		return m, apierr.New(apierr.Conflict, "move %s is %s: it can only complete", m.ID, m.State)
	}
	m.State = to
	switch step {
	case MoveCancel:
		m.Error = ""
	case MoveFail:
		m.Error = c.Error
	}
	now := tx.Now
	m.UpdatedAt, m.FinishedAt = now, &now
	mustSetJSON(tx, layout.Move(c.ID), m)
	mustDelete(tx, layout.MoveRunning(m.TenantID, m.Namespace))
	return m, nil
}

func LoadMove(r pebble.Reader, id string) (MoveRecord, error) {
	var m MoveRecord
	ok, err := getJSON(r, layout.Move(id), &m)
	if err == nil && !ok {
		err = apierr.New(apierr.NotFound, "move %q not found", id)
	}
	return m, err
}

// RunningMove is the id of namespace ns's move that has not ended.
func RunningMove(r pebble.Reader, tid, ns string) (string, bool) {
	v, ok := must2(getRaw(r, layout.MoveRunning(tid, ns)))
	return string(v), ok
}

// runningRestoreInto is the id of a restore running into namespace ns.
func runningRestoreInto(r pebble.Reader, tid, ns string) string {
	id := ""
	err := scanJSON(r, layout.Backups(tid), func(_ []byte, b BackupRecord) {
		if lr := b.LastRestore; lr != nil && lr.State == wire.BackupRunning && lr.TargetNamespace == ns {
			id = lr.ID
		}
	})
	if err != nil {
		panic(err)
	}
	return id
}

// ErrMoveRunning refuses a change to a namespace a move holds.
func ErrMoveRunning(id, ns, what string) error {
	return apierr.New(apierr.Conflict, "move %s of namespace %q is running: %s once it has ended", id, ns, what)
}

// must2 is must for a loader with two results.
func must2[T any](v T, ok bool, err error) (T, bool) {
	if err != nil {
		panic(err)
	}
	return v, ok
}
