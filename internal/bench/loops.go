package bench

import (
	"net/http"
	"time"

	// The load generator decodes every fetch answer: goccy's decoder
	// leaves more of the shared cores to the server under test.
	json "github.com/goccy/go-json"
)

// producer enqueues as fast as the gate and the server allow.
func (r *runner) producer(st *loopStats) {
	c := r.tr.newCaller()
	k := int64(r.cfg.Batch)
	path := pathEnqueue
	if k > 1 {
		path = pathBatch
	}
	var ids []string
	for r.stopCtx.Err() == nil && r.claim(k) && r.gate.acquire(k) {
		if !r.pace.wait(r.stopCtx, k) {
			r.gate.release(k)
			r.refund(k)
			return
		}
		start := r.now()
		rep, err := c.post(r.base, path, "", r.body, callTimeout)
		end := r.now()
		if err == nil && rep.status == http.StatusCreated {
			ids, err = parseIDs(rep.body, k, ids[:0])
		}
		if err != nil || rep.status != http.StatusCreated {
			r.gate.release(k)
			r.refund(k)
			r.failed(st, rep, err)
			continue
		}
		st.enqueue.record(end - start)
		r.counter.calls.Add(1)
		r.counter.enqueued.Add(int64(len(ids)))
		for _, id := range ids {
			if s, ok := r.track.enqueued(id, start, end); ok {
				st.recordSample(s)
			}
		}
	}
}

// parseIDs reads the job ids of an enqueue (k == 1) or batch reply.
func parseIDs(body []byte, k int64, ids []string) ([]string, error) {
	if k == 1 {
		var one enqueueReply
		if err := json.Unmarshal(body, &one); err != nil {
			return ids, err
		}
		return append(ids, one.JobID), nil
	}
	var batch batchReply
	if err := json.Unmarshal(body, &batch); err != nil {
		return ids, err
	}
	return append(ids, batch.JobIDs...), nil
}

// worker fetches and acks one job per call until the run ends.
func (r *runner) worker(id string, st *loopStats) {
	c := r.tr.newCaller()
	fetch := fetchBody(r.cfg.Queue, id, hostname(), r.cfg.FetchTimeout)
	ack := ackBody(id)
	for r.stopCtx.Err() == nil {
		// Not cancelled by the run's end: a fetch abandoned midway could
		// take a job the report never hears of. It ends within the long-poll.
		rep, err := c.post(r.base, pathFetch, "", fetch, r.cfg.FetchTimeout+fetchSlack)
		at := r.now()
		if r.stopCtx.Err() != nil && (err != nil || rep.status != http.StatusOK) {
			return
		}
		if err == nil && rep.status == http.StatusNoContent {
			r.counter.empty.Add(1)
			continue
		}
		var job fetchReply
		if err == nil && rep.status == http.StatusOK {
			err = json.Unmarshal(rep.body, &job)
		}
		if err != nil || rep.status != http.StatusOK {
			r.failed(st, rep, err)
			continue
		}
		r.counter.delivered.Add(1)
		r.gate.release(1)
		if s, ok := r.track.delivered(job.JobID, at); ok {
			st.recordSample(s)
		}
		r.ackJob(c, st, job.JobID, ack)
	}
}

func (r *runner) ackJob(c caller, st *loopStats, id string, body []byte) {
	start := time.Now()
	rep, err := c.post(r.base, pathAck, id, body, callTimeout)
	if err != nil || rep.status/100 != 2 {
		r.failed(st, rep, err)
		return
	}
	st.ack.record(time.Since(start))
	if n := r.counter.acked.Add(1); r.cfg.Jobs > 0 && n >= r.cfg.Jobs {
		r.finish()
	}
	if r.cfg.Latency {
		select {
		case r.acks <- id:
		default:
		}
	}
}

func (s *loopStats) recordSample(x sample) {
	s.delivery.record(x.delivery)
	s.pickup.record(x.pickup)
}

// latencyProducer sends one job, waits until a worker acked it, and sends
// the next: the workers are idle and waiting when each job arrives.
func (r *runner) latencyProducer(st *loopStats) {
	c := r.tr.newCaller()
	for r.stopCtx.Err() == nil && r.claim(1) {
		start := r.now()
		rep, err := c.post(r.base, pathEnqueue, "", r.body, callTimeout)
		end := r.now()
		var one enqueueReply
		if err == nil && rep.status == http.StatusCreated {
			err = json.Unmarshal(rep.body, &one)
		}
		if err != nil || rep.status != http.StatusCreated {
			r.refund(1)
			r.failed(st, rep, err)
			continue
		}
		st.enqueue.record(end - start)
		r.counter.calls.Add(1)
		r.counter.enqueued.Add(1)
		if s, ok := r.track.enqueued(one.JobID, start, end); ok {
			st.recordSample(s)
		}
		if !r.awaitAck(one.JobID) && r.stopCtx.Err() == nil {
			st.errors["not_delivered"]++
			r.counter.errors.Add(1)
		}
	}
}

// awaitAck waits until job id was acked; false if it took too long or
// the run ended.
func (r *runner) awaitAck(id string) bool {
	t := time.NewTimer(pickupWindow + r.cfg.FetchTimeout)
	defer t.Stop()
	for {
		select {
		case got := <-r.acks:
			if got == id {
				return true
			}
		case <-t.C:
			return false
		case <-r.stopCtx.Done():
			return false
		}
	}
}
