package engine

import (
	"encoding/binary"
	"sync"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// Fence holds a namespace's writes for a move's cut-over: from the entry
// that set it until Until (unix ns, by the entry clock that set it), every
// command that would change the namespace is refused in its apply. A fence
// past Until is absent: a control that crashed holds nothing for long.
type Fence struct {
	Token string
	Until int64
}

// holds reports whether f holds writes at now (unix ns).
func (f Fence) holds(now int64) bool { return f.Token != "" && now < f.Until }

func encodeFence(f Fence) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(f.Until)), f.Token...)
}

func decodeFence(v []byte) Fence {
	if len(v) < 8 {
		return Fence{}
	}
	return Fence{Until: int64(binary.BigEndian.Uint64(v[:8])), Token: string(v[8:])}
}

// moveSet is the fences, moved tombstones and moved-in marks of the
// shard (movedin.go). The engine
// keeps two: one written inside the applies (FSM goroutine; the gate of
// every later command of the same batch must see a fence), and one
// written after each commit, which the API's gate reads on every request.
// Both load from the state on first use and after every reset.
type moveSet struct {
	mu     sync.RWMutex
	loaded bool
	fences map[string]Fence
	moved  map[string]string // ns → the shard it moved to
	in     map[string]MovedIn
}

func (m *moveSet) get(r pebble.Reader, ns string) (Fence, string, bool) {
	m.mu.RLock()
	if m.loaded {
		f := m.fences[ns]
		to, moved := m.moved[ns]
		m.mu.RUnlock()
		return f, to, moved
	}
	m.mu.RUnlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.load(r)
	to, moved := m.moved[ns]
	return m.fences[ns], to, moved
}

// marks returns everything the move gate asks of ns, under one lock.
func (m *moveSet) marks(r pebble.Reader, ns string) (f Fence, moved bool, in MovedIn, hasIn bool) {
	m.mu.RLock()
	if !m.loaded {
		m.mu.RUnlock()
		m.mu.Lock()
		m.load(r)
		m.mu.Unlock()
		m.mu.RLock()
	}
	defer m.mu.RUnlock()
	_, moved = m.moved[ns]
	in, hasIn = m.in[ns]
	return m.fences[ns], moved, in, hasIn
}

// load reads every fence, tombstone and moved-in mark from r unless
// loaded; under mu.
func (m *moveSet) load(r pebble.Reader) {
	if m.loaded {
		return
	}
	m.fences, m.moved, m.in = map[string]Fence{}, map[string]string{}, map[string]MovedIn{}
	scan := func(p []byte, f func(k, v []byte)) {
		it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
		must(err)
		for ok := it.First(); ok; ok = it.Next() {
			f(it.Key(), it.Value())
		}
		must(it.Close())
	}
	scan(keys.MoveFencePrefix(), func(k, v []byte) { m.fences[keys.MoveFenceNamespace(k)] = decodeFence(v) })
	scan(keys.MovedPrefix(), func(k, v []byte) { m.moved[keys.MovedNamespace(k)] = string(v) })
	scan(keys.MovedInPrefix(), func(k, v []byte) { m.in[keys.MovedInNamespace(k)] = decodeMovedIn(v) })
	m.loaded = true
}

// setIn records a change in m's map in (set: false drops ns's entry);
// before m is loaded there is nothing to keep, the load will read it.
func setIn[V any](m *moveSet, in *map[string]V, ns string, v V, set bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case !m.loaded:
	case set:
		(*in)[ns] = v
	default:
		delete(*in, ns)
	}
}

func (m *moveSet) reset() {
	m.mu.Lock()
	m.loaded, m.fences, m.moved, m.in = false, nil, nil, nil
	m.mu.Unlock()
}

// changeMark sets ns's mark at key to val (nil: deletes it) in the state
// and makes the same change to both sets: the apply's at once, the API's
// once committed.
func (e *Engine) changeMark(tx *replica.Tx, key, val []byte, change func(*moveSet)) {
	if val == nil {
		must(tx.Delete(key, nil))
	} else {
		must(tx.Set(key, val, nil))
	}
	change(e.movesFSM)
	tx.MarkDirty()
	tx.AfterCommit(func() { change(e.movesAPI) })
}

func (e *Engine) writeFence(tx *replica.Tx, ns string, f Fence) {
	e.changeMark(tx, keys.MoveFence(ns), encodeFence(f), func(m *moveSet) { setIn(m, &m.fences, ns, f, true) })
}

func (e *Engine) clearFence(tx *replica.Tx, ns string) {
	e.changeMark(tx, keys.MoveFence(ns), nil, func(m *moveSet) { setIn(m, &m.fences, ns, Fence{}, false) })
}

// writeMoved leaves ns's moved tombstone; to, the shard it moved to, is
// never empty (the finish requires it), so the mark is set, not deleted.
func (e *Engine) writeMoved(tx *replica.Tx, ns, to string) {
	e.changeMark(tx, keys.Moved(ns), []byte(to), func(m *moveSet) { setIn(m, &m.moved, ns, to, true) })
}

func (e *Engine) clearMoved(tx *replica.Tx, ns string) {
	e.changeMark(tx, keys.Moved(ns), nil, func(m *moveSet) { setIn(m, &m.moved, ns, "", false) })
}

// ErrFenced and ErrMoved refuse a command to a namespace being cut over
// to another shard, or already moved from this one. Nothing changed.
var (
	ErrFenced = apierr.Retry(apierr.NamespaceMoving, 1, "this namespace is moving to another shard: writes are held for a moment; retry")
	ErrMoved  = apierr.Retry(apierr.NamespaceMoving, 1, "this namespace has moved to another shard; retry to reach it there")
)

// moveGate refuses a command to ns while a fence holds it (by the entry's
// clock) or once it moved away. untouched: a move ended ns here and no
// client's command changed it since (movedin.go).
func (e *Engine) moveGate(tx *replica.Tx, ns string) (untouched bool, err error) {
	f, moved, in, hasIn := e.movesFSM.marks(tx, ns)
	switch {
	case moved:
		return false, ErrMoved
	case f.holds(tx.Now.UnixNano()):
		return false, ErrFenced
	}
	return hasIn && !in.Touched, nil
}

// nsCommand is a command that changes one namespace.
type nsCommand[C any] interface {
	*C
	namespace() string
}

// byLoop reports whether c is a step the leader's loops propose, of a
// command type clients propose too (a background bulk operation's step).
func byLoop(c any) bool {
	l, ok := c.(interface{ byLoop() bool })
	return ok && l.byLoop()
}

func (c *BulkCmd) byLoop() bool { return c.Op != "" }

// gated wraps the handler of a client's command that changes one
// namespace with the move gate, so every such command is refused,
// changing nothing, from the entry that fences its namespace on (however
// long before it was proposed), and with the restore gate
// (restoregate.go): refused while a restore writes the namespace.
func gated[C any, PC nsCommand[C], R any](e *Engine, apply func(*replica.Tx, PC) (R, error)) func(*replica.Tx, *C) (R, error) {
	return gate(e, true, apply)
}

// loopGated is gated for the commands only the leader's loops propose
// (sweeps, schedule fires, prunes): they do not touch a moved-in
// namespace, since they run whether or not it is placed here.
func loopGated[C any, PC nsCommand[C], R any](e *Engine, apply func(*replica.Tx, PC) (R, error)) func(*replica.Tx, *C) (R, error) {
	return gate(e, false, apply)
}

func gate[C any, PC nsCommand[C], R any](e *Engine, client bool, apply func(*replica.Tx, PC) (R, error)) func(*replica.Tx, *C) (R, error) {
	return func(tx *replica.Tx, c *C) (R, error) {
		ns := PC(c).namespace()
		untouched, err := e.moveGate(tx, ns)
		if err == nil && client && e.restoreRefuses(tx, ns, c) {
			err = ErrRestoring
		}
		if err != nil {
			var zero R
			return zero, err
		}
		out, err := apply(tx, c)
		if err == nil && untouched && client && !byLoop(PC(c)) {
			e.touchMovedIn(tx, ns) // once it changed: a refused command writes nothing
		}
		return out, err
	}
}

func (c *EnqueueCmd) namespace() string         { return c.NS }
func (c *FetchCmd) namespace() string           { return c.NS }
func (c *AckCmd) namespace() string             { return c.NS }
func (c *FailCmd) namespace() string            { return c.NS }
func (c *HeartbeatCmd) namespace() string       { return c.NS }
func (c *SweepCmd) namespace() string           { return c.NS }
func (c *ScheduleCmd) namespace() string        { return c.NS }
func (c *ScheduleIDCmd) namespace() string      { return c.NS }
func (c *FireCmd) namespace() string            { return c.NS }
func (c *JobOpCmd) namespace() string           { return c.NS }
func (c *QueueCmd) namespace() string           { return c.NS }
func (c *QueueSweepCmd) namespace() string      { return c.NS }
func (c *QueueLimitCmd) namespace() string      { return c.NS }
func (c *QueueThrottleCmd) namespace() string   { return c.NS }
func (c *QueueDefaultsCmd) namespace() string   { return c.NS }
func (c *FetchBatchCmd) namespace() string      { return c.Fetch.NS }
func (c *AckBatchCmd) namespace() string        { return c.NS }
func (c *BulkCmd) namespace() string            { return c.NS }
func (c *BulkOpCmd) namespace() string          { return c.NS }
func (c *ReleaseCmd) namespace() string         { return c.NS }
func (c *RecordPruneCmd) namespace() string     { return c.NS }
func (c *QueueConfigCmd) namespace() string     { return c.NS }
func (c *NamespacePurgeCmd) namespace() string  { return c.NS }
func (c *NamespaceConfigCmd) namespace() string { return c.NS }

// Moving says whether ns is fenced (wire.MovingFenced, at now, unix ns)
// or moved away (wire.MovingMoved), as last committed; "" if neither
// (safe from any goroutine; r, the node's state, is read only to load).
func (e *Engine) Moving(r pebble.Reader, ns string, now int64) string {
	f, _, moved := e.movesAPI.get(r, ns)
	switch {
	case moved:
		return wire.MovingMoved
	case f.holds(now):
		return wire.MovingFenced
	}
	return ""
}

// Fenced reports whether a fence of ns holds at now (unix ns), as last
// committed: the leader's loops leave the namespace alone meanwhile.
func (e *Engine) Fenced(r pebble.Reader, ns string, now int64) bool {
	return e.Moving(r, ns, now) != ""
}
