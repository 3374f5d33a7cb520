package shard

import (
	"errors"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// queueRecord is the stored record of a queue: it exists once a job was
// enqueued to the queue and keeps live counts per state.
type queueRecord struct {
	Name   string  `codec:"n"`
	Counts []int64 `codec:"c"` // indexed by job.State
}

func getQueue(r pebble.Reader, ns, queue string) (*queueRecord, bool) {
	v, closer, err := r.Get(keys.Queue(ns, queue))
	if errors.Is(err, pebble.ErrNotFound) {
		return &queueRecord{Name: queue}, false
	}
	must(err)
	defer closer.Close()
	q := new(queueRecord)
	must(decode(v, q))
	return q, true
}

// countState moves one job of queue from state "from" (0 = new) to "to".
func countState(tx *replica.Tx, ns, queue string, from, to job.State) {
	q, _ := getQueue(tx, ns, queue)
	for len(q.Counts) <= int(job.Cancelled) {
		q.Counts = append(q.Counts, 0)
	}
	if from != 0 {
		q.Counts[from]--
	}
	q.Counts[to]++
	must(tx.Set(keys.Queue(ns, queue), encode(q), nil))
}
