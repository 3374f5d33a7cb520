package engine

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// BenchmarkEventTrimPoint is the leader's look at one namespace whose log
// holds 100,100 events against the default retention (100 past its
// count): counting back from the newest in a log that is not counted,
// reading the 100 it drops in one that is.
func BenchmarkEventTrimPoint(b *testing.B) {
	db, err := pebble.Open(b.TempDir(), replica.StateOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	now := time.Now().UnixNano()
	wb := db.NewBatch()
	var buf []byte
	const n = 100_100
	for i := range n {
		buf = appendEvent(buf[:0], &Event{Type: "enqueued", JobID: "job_x", Queue: "q", At: now})
		if err := wb.Set(keys.Event(testNS, uint64(i+1)<<EventSeqBits), buf, nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := wb.Set(keys.EventCount(testNS), binary.AppendUvarint(nil, n), nil); err != nil {
		b.Fatal(err)
	}
	if err := wb.Commit(pebble.NoSync); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		count int64
	}{{"walk", -1}, {"counted", n}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				at, ok := EventTrimPoint(db, testNS, DefaultEventRetention, now, 10_000, c.count)
				if !ok || at != uint64(100)<<EventSeqBits {
					b.Fatalf("trim point %d, %v", at, ok)
				}
			}
		})
	}
}
