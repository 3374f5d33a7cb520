package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// BenchmarkApplyEnqueueOne applies one-job enqueues, each its own entry,
// before and after RestoreStartRefusing: what the restore gate's read of
// the namespace's marker adds to a single call's command.
func BenchmarkApplyEnqueueOne(b *testing.B) {
	for _, gate := range []bool{false, true} {
		b.Run(fmt.Sprint("gate=", gate), func(b *testing.B) {
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
			apply := func(t replica.CommandType, c any) {
				if out := loc.Apply(now, replica.Command(t, replica.Encode(c)))[0]; out.Err != nil {
					b.Fatal(out.Err)
				}
				now = now.Add(time.Microsecond)
			}
			if gate {
				apply(RestoreStartRefusing.Type, &RestoreStartCmd{})
			}
			b.ResetTimer()
			for i := range b.N {
				j := &job.Job{ID: fmt.Sprintf("job_%026d", i), Queue: "bench", Payload: []byte(`{"n":1}`),
					Backoff: job.BackoffFixed, BaseDelay: int64(time.Second), MaxDelay: int64(time.Minute)}
				apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{j.Encode()}})
			}
		})
	}
}
