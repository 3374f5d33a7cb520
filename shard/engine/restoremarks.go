package engine

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// RestoreMark is the marker of a restore running into a namespace: its
// token, and the entry clock (unix ns) of its begin or its last chunk.
type RestoreMark struct {
	Token string
	At    int64
}

// restoreMarkV1 starts a marker value holding its time; a value without it
// (token only, as first written) reads as At 0. Tokens are hex text, so
// they never start with this byte.
const restoreMarkV1 = 0x01

func encodeRestoreMark(m RestoreMark) []byte {
	v := make([]byte, 9, 9+len(m.Token))
	v[0] = restoreMarkV1
	binary.BigEndian.PutUint64(v[1:], uint64(m.At))
	return append(v, m.Token...)
}

func decodeRestoreMark(v []byte) RestoreMark {
	if len(v) >= 9 && v[0] == restoreMarkV1 {
		return RestoreMark{Token: string(v[9:]), At: int64(binary.BigEndian.Uint64(v[1:9]))}
	}
	return RestoreMark{Token: string(v)}
}

// readRestoreMark reads ns's marker from r.
func readRestoreMark(r pebble.Reader, ns string) (RestoreMark, bool) {
	v, closer, err := r.Get(keys.Restoring(ns))
	if errors.Is(err, pebble.ErrNotFound) {
		return RestoreMark{}, false
	}
	must(err)
	defer closer.Close()
	return decodeRestoreMark(v), true
}

// restoreMarks is the set of markers as last committed, so the API's gate
// asks memory, not Pebble, on every request. It is loaded from the state
// on first read and again after every reset (a snapshot restore, a redo),
// and kept by each apply that sets or clears a marker, after its commit.
// Updates are idempotent writes of the committed value, so a load racing
// a commit ends with the committed set either way.
type restoreMarks struct {
	mu     sync.RWMutex
	loaded bool
	m      map[string]RestoreMark
}

// get returns ns's marker, loading the set from r first if needed.
func (c *restoreMarks) get(r pebble.Reader, ns string) (RestoreMark, bool) {
	c.mu.RLock()
	if c.loaded {
		m, ok := c.m[ns]
		c.mu.RUnlock()
		return m, ok
	}
	c.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.load(r)
	m, ok := c.m[ns]
	return m, ok
}

// all returns a copy of the set, loading it from r first if needed.
func (c *restoreMarks) all(r pebble.Reader) map[string]RestoreMark {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.load(r)
	out := make(map[string]RestoreMark, len(c.m))
	for ns, m := range c.m {
		out[ns] = m
	}
	return out
}

// load reads every marker from r unless the set is loaded; under mu.
func (c *restoreMarks) load(r pebble.Reader) {
	if c.loaded {
		return
	}
	p := keys.RestoringPrefix()
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	c.m = map[string]RestoreMark{}
	for ok := it.First(); ok; ok = it.Next() {
		c.m[keys.RestoringNamespace(it.Key())] = decodeRestoreMark(it.Value())
	}
	must(it.Close())
	c.loaded = true
}

// committed records ns's committed marker (set false: cleared). Before the
// set is loaded there is nothing to keep: the load will read it.
func (c *restoreMarks) committed(ns string, m RestoreMark, set bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.loaded {
		return
	}
	if set {
		c.m[ns] = m
	} else {
		delete(c.m, ns)
	}
}

// reset forgets the set: the next read loads it from the state.
func (c *restoreMarks) reset() {
	c.mu.Lock()
	c.loaded, c.m = false, nil
	c.mu.Unlock()
}

// setRestoreMark writes ns's marker, and keeps it in the set once committed.
func (e *Engine) setRestoreMark(tx *replica.Tx, ns string, m RestoreMark) {
	must(tx.Set(keys.Restoring(ns), encodeRestoreMark(m), nil))
	e.restoreRefuse.known = false // the gate counts the markers again (restoregate.go)
	tx.AfterCommit(func() { e.marks.committed(ns, m, true) })
}

// clearRestoreMark deletes ns's marker, and drops it from the set once
// committed.
func (e *Engine) clearRestoreMark(tx *replica.Tx, ns string) {
	must(tx.Delete(keys.Restoring(ns), nil))
	e.restoreRefuse.known = false
	tx.AfterCommit(func() { e.marks.committed(ns, RestoreMark{}, false) })
}

// Restoring reports whether a restore holds ns, as last committed (safe
// from any goroutine; r, the node's state, is read only to load the set).
func (e *Engine) Restoring(r pebble.Reader, ns string) bool {
	_, ok := e.marks.get(r, ns)
	return ok
}

// RestoreMarks returns every restore marker as last committed (safe from
// any goroutine), for the leader's sweep of idle restores.
func (e *Engine) RestoreMarks(r pebble.Reader) map[string]RestoreMark { return e.marks.all(r) }
