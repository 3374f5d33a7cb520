package engine

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/keys"
)

// The head window must always agree with the index it summarizes: random
// inserts (before, inside and after the window), removals anywhere and
// pops, checked against a plain sorted set after every step.
func TestPendingHeadsMatchIndex(t *testing.T) {
	t.Parallel()
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	defer db.Close()
	rng := rand.New(rand.NewSource(1))
	h := pendingHeads{}
	live := map[string][]byte{}
	var sorted [][]byte // live's keys in order: the reference set
	key := func(i int) []byte {
		return keys.Pending(testNS, "q", uint8(i%3), int64(i), fmt.Sprintf("job_%026d", i))
	}
	find := func(k []byte) int {
		return sort.Search(len(sorted), func(i int) bool { return bytes.Compare(sorted[i], k) >= 0 })
	}
	add := func(k []byte) { live[string(k)] = k; sorted = slices.Insert(sorted, find(k), k) }
	del := func(k []byte) { delete(live, string(k)); sorted = slices.Delete(sorted, find(k), find(k)+1) }
	want := func() []byte {
		if len(sorted) == 0 {
			return nil
		}
		return sorted[0]
	}
	for step := 0; step < 20000; step++ {
		op := rng.Intn(10)
		if step > 10000 { // drain by removals so the window empties between seeks
			op = []int{0, 0, 5, 5, 5, 5, 5, 5, 9, 9}[op]
		}
		switch {
		case op < 5: // insert
			k := key(rng.Intn(5000))
			if _, ok := live[string(k)]; ok {
				continue
			}
			require.NoError(t, db.Set(k, nil, pebble.NoSync))
			add(k)
			h.inserted(testNS, "q", k)
		case op < 7: // remove a random live key
			for _, k := range live {
				require.NoError(t, db.Delete(k, pebble.NoSync))
				del(k)
				h.removed(testNS, "q", k)
				break
			}
		default: // pop the head
			k := h.first(db, testNS, "q")
			require.Equal(t, want(), k, "step %d", step)
			if k != nil {
				k = append([]byte(nil), k...)
				require.NoError(t, db.Delete(k, pebble.NoSync))
				del(k)
				h.removed(testNS, "q", k)
			}
		}
		if step <= 10000 {
			require.Equal(t, want(), h.first(db, testNS, "q"), "step %d", step)
		}
	}
}
