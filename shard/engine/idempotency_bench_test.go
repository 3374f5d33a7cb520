package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// BenchmarkApplyEnqueueIdempotent applies single-job enqueues straight to
// Pebble with the node's options, each its own entry, without and with an
// Idempotency-Key: what a key's lookup and record cost the state machine
// per enqueue.
func BenchmarkApplyEnqueueIdempotent(b *testing.B) {
	for _, keyed := range []bool{false, true} {
		b.Run(fmt.Sprintf("keyed=%v", keyed), func(b *testing.B) {
			db, err := pebble.Open(b.TempDir(), replica.StateOptions())
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			loc, err := replica.NewLocal(db, New(Options{}).Registry())
			if err != nil {
				b.Fatal(err)
			}
			now := time.Unix(1_800_000_000, 0).UTC()
			hash := make([]byte, 32)
			b.ResetTimer()
			for i := range b.N {
				j := &job.Job{ID: fmt.Sprintf("job_%026d", i), Queue: "q", Payload: []byte(`{"n":1}`),
					Backoff: job.BackoffFixed, BaseDelay: int64(time.Second), MaxDelay: int64(time.Minute)}
				c := &EnqueueCmd{NS: testNS, Jobs: [][]byte{j.Encode()}}
				cmd := Enqueue.Command(c)
				if keyed {
					cmd = IdemApply.Command(&IdemCmd{NS: testNS, Key: fmt.Sprintf("order-%d", i), Hash: hash, Cmd: cmd})
				}
				if out := loc.Apply(now, cmd)[0]; out.Err != nil {
					b.Fatal(out.Err)
				}
				now = now.Add(time.Millisecond)
			}
		})
	}
}
