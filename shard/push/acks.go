package push

import (
	"errors"
	"sync"

	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// ackBatcher settles a runner's acks in batches, as a group commit: the
// first delivery to ack while no batch is in flight proposes every ack
// waiting then (one AckBatch command), the others wait for its answer.
// One command per job made the acks, not the handler, a busy queue's
// bound on deliveries per second.
type ackBatcher struct {
	mu       sync.Mutex
	waiting  []*pendingAck
	flushing bool
}

type pendingAck struct {
	entry wire.AckBatchEntry
	err   error
	done  chan struct{}
}

// ackJob acks one job, in a batch with whatever else is waiting.
func (r *runner) ackJob(e wire.AckBatchEntry) error {
	p := &pendingAck{entry: e, done: make(chan struct{})}
	b := &r.acks
	b.mu.Lock()
	b.waiting = append(b.waiting, p)
	if b.flushing {
		b.mu.Unlock()
		<-p.done
		return p.err
	}
	b.flushing = true
	for len(b.waiting) > 0 {
		n := min(len(b.waiting), wire.MaxAckBatch)
		batch := b.waiting[:n:n]
		b.waiting = append([]*pendingAck(nil), b.waiting[n:]...)
		b.mu.Unlock()
		r.settleAcks(batch)
		b.mu.Lock()
	}
	b.flushing = false
	b.mu.Unlock()
	<-p.done
	return p.err
}

// settleAcks proposes one batch and hands each ack its outcome.
func (r *runner) settleAcks(batch []*pendingAck) {
	req := &wire.AckBatchRequest{WorkerID: r.worker, Acks: make([]wire.AckBatchEntry, len(batch))}
	for i, p := range batch {
		req.Acks[i] = p.entry
	}
	ctx, cancel := settleCtx()
	defer cancel()
	res, err := r.d.svc.AckBatch(ctx, r.k.ns, tenancy.AllQueues(), service.Limits{}, req)
	if err != nil && len(batch) > 1 {
		// A refusal of the whole batch (one answer's result the service
		// will not store) must not fail the others: each on its own.
		for _, p := range batch {
			_, p.err = r.d.svc.Ack(ctx, r.k.ns, tenancy.AllQueues(), service.Limits{}, p.entry.JobID,
				&wire.AckRequest{Result: p.entry.Result, WorkerID: r.worker, LeaseToken: p.entry.LeaseToken})
			close(p.done)
		}
		return
	}
	for i, p := range batch {
		switch {
		case err != nil:
			p.err = err
		case i >= len(res):
			p.err = errors.New("no outcome for this ack")
		case res[i].Error != nil:
			p.err = errors.New(string(res[i].Error.Code) + ": " + res[i].Error.Message)
		}
		close(p.done)
	}
}
