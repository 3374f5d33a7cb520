package replica

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/atomicfile"
)

// A state machine may assume more of its store than Pebble does: the
// shard's engine removes its job index keys with a SingleDelete, correct
// only when the key was set once since its last delete. A store written
// before that rule may hold two sets of one key in different levels, and
// a SingleDelete meeting the newer one would bring the older back (on
// one member and not another: the state would diverge). So the state
// machine names the store format its writes assume
// (Registry.StoreFormat), and a node that opens a store last opened
// under a lower format first compacts it whole: compacted to the bottom
// with no snapshot open, every key keeps one version. Then it records
// the format (a file beside the store), so that it compacts once.
//
// A store the newer format was recorded for and an older build then
// wrote (a downgrade) is not compacted again; the format file says what
// the newest build that opened it did, not what every writer did.

// storeFormatFile holds, in a node's directory, the last store format it
// was opened under.
const storeFormatFile = "state-format"

// StoreFormat sets the store format the state machine's writes assume
// (see above); 0, the default, assumes nothing.
func (r *Registry) StoreFormat(v uint32) { r.format = v }

// upgradeStore compacts db whole if the format recorded in dir is lower
// than want, then records want.
func upgradeStore(db *pebble.DB, dir string, want uint32) error {
	path := filepath.Join(dir, storeFormatFile)
	have, err := readStoreFormat(path)
	if err != nil || have >= want {
		return err
	}
	if err := compactAll(db); err != nil {
		return fmt.Errorf("compact the store for format %d: %w", want, err)
	}
	return atomicfile.Write(path, []byte(strconv.FormatUint(uint64(want), 10)+"\n"), 0o644)
}

func readStoreFormat(path string) (uint32, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return uint32(v), nil
}

// compactAll compacts every key of db into the bottom level (nothing
// to do for an empty store), where each keeps one version: it runs with
// no snapshot open. The compaction rewrites a bottom-level file only with
// files from above that overlap it, and two sets of one key may both be
// there already (a snapshot open when they met kept them apart), so the
// first and last keys are set again, to their own values, first: the file
// they are flushed to spans every key, and the bottom level is rewritten
// whole with it.
func compactAll(db *pebble.DB) error {
	it, err := db.NewIter(nil)
	if err != nil {
		return err
	}
	b := db.NewBatch()
	defer b.Close()
	var first, last []byte
	if it.First() {
		first = append(first, it.Key()...)
		err = b.Set(first, it.Value(), nil)
		it.Last()
		last = append(last, it.Key()...)
		if err == nil && !bytes.Equal(first, last) {
			err = b.Set(last, it.Value(), nil)
		}
	}
	if cerr := it.Close(); err != nil || cerr != nil || first == nil {
		return errors.Join(err, cerr)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return err
	}
	return db.Compact(first, append(last, 0), true)
}

// singleDeleteMetTwoSets is told by Pebble when a compaction finds a
// SingleDelete over a key set more than once: a writer broke the state
// machine's rule, and the older set may be back on this member alone.
// It is said loudly (the operator's log) rather than stopping the node:
// the compaction would find it again at every start.
func singleDeleteMetTwoSets(key []byte) {
	fmt.Fprintf(os.Stderr, "pebble: a single delete met a key set more than once (%q): an older value of it may be back on this member\n", key)
}
