package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
)

// One read path for handlers and queries: every loader takes a
// pebble.Reader, which is the command's indexed batch inside a handler (so
// it sees the entry's earlier writes) and a snapshot or the DB outside.

// getRaw returns a copy of the value at k, or nil, false if there is none.
func getRaw(r pebble.Reader, k []byte) ([]byte, bool, error) {
	v, closer, err := r.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("control: read %q: %w", k, err)
	}
	defer closer.Close()
	return bytes.Clone(v), true, nil
}

// getJSON decodes the record at k into v and reports whether it existed.
func getJSON(r pebble.Reader, k []byte, v any) (bool, error) {
	b, ok, err := getRaw(r, k)
	if err != nil || !ok {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("control: decode %q: %w", k, err)
	}
	return true, nil
}

func getUint64(r pebble.Reader, k []byte) (uint64, error) {
	b, _, err := getRaw(r, k)
	return layout.DecodeUint64(b), err
}

// scan calls fn with every key and value under prefix, in key order. The
// slices are valid only during the call.
func scan(r pebble.Reader, prefix []byte, fn func(k, v []byte) error) error {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: layout.PrefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("control: scan %q: %w", prefix, err)
	}
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// scanJSON decodes every record under prefix with decode.
func scanJSON[T any](r pebble.Reader, prefix []byte, each func(k []byte, v T)) error {
	return scan(r, prefix, func(k, b []byte) error {
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("control: decode %q: %w", k, err)
		}
		each(k, v)
		return nil
	})
}

// count returns how many keys are under prefix.
func count(r pebble.Reader, prefix []byte) (int, error) {
	n := 0
	err := scan(r, prefix, func(_, _ []byte) error { n++; return nil })
	return n, err
}

// Writes happen only inside command handlers, on the command's batch.
// Storage failures there are not business outcomes: the state can no
// longer be trusted to match the other nodes', so they panic.

func mustSetJSON(tx *replica.Tx, k []byte, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("control: encode %q: %v", k, err))
	}
	mustSet(tx, k, b)
}

func mustSet(tx *replica.Tx, k, v []byte) {
	if err := tx.Set(k, v, nil); err != nil {
		panic(fmt.Sprintf("control: write %q: %v", k, err))
	}
}

func mustDelete(tx *replica.Tx, k []byte) {
	if err := tx.Delete(k, nil); err != nil {
		panic(fmt.Sprintf("control: delete %q: %v", k, err))
	}
}

// businessErr returns a loader's error as a handler's result when it is a
// business failure (an *apierr.Error, such as not found) and panics on a
// storage failure (see above).
func businessErr(err error) error {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e
	}
	panic(err)
}

// must panics on a storage error inside a handler (see above).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
