package bench

import (
	"net/http"
	"time"

	// The load generator decodes every fetch answer: goccy's decoder
	// leaves more of the shared cores to the server under test.
	json "github.com/goccy/go-json"
)

// maxWorkerBatch is the server's bound on fetch/batch's max and on the
// acks of one ack/batch.
const maxWorkerBatch = 1000

// API paths of the batch worker calls.
const (
	pathFetchBatch = "/api/v1/fetch/batch"
	pathAckBatch   = "/api/v1/ack/batch"
)

// batchWorker fetches up to FetchBatch jobs per call and acks them in
// calls of up to AckBatch, until the run ends. Either side may still be
// the single-job call (a batch of 1).
func (r *runner) batchWorker(id string, st *loopStats) {
	c := r.tr.newCaller()
	path, fetch := pathFetch, fetchBody(r.cfg.Queue, id, hostname(), r.cfg.FetchTimeout)
	if r.cfg.FetchBatch > 1 {
		path, fetch = pathFetchBatch, fetchBatchBody(r.cfg.Queue, id, hostname(), r.cfg.FetchTimeout, r.cfg.FetchBatch)
	}
	ack := ackBody(id)
	ids := make([]string, 0, r.cfg.FetchBatch)
	var body []byte
	for r.stopCtx.Err() == nil {
		rep, err := c.post(r.base, path, "", fetch, r.cfg.FetchTimeout+fetchSlack)
		at := r.now()
		if r.stopCtx.Err() != nil && (err != nil || rep.status != http.StatusOK) {
			return
		}
		if err == nil && rep.status == http.StatusOK {
			ids, err = parseFetched(rep.body, r.cfg.FetchBatch > 1, ids[:0])
		}
		if err != nil || (rep.status != http.StatusOK && rep.status != http.StatusNoContent) {
			r.failed(st, rep, err)
			continue
		}
		if rep.status == http.StatusNoContent || len(ids) == 0 {
			r.counter.empty.Add(1)
			continue
		}
		r.counter.delivered.Add(int64(len(ids)))
		r.gate.release(int64(len(ids)))
		for _, jid := range ids {
			if s, ok := r.track.delivered(jid, at); ok {
				st.recordSample(s)
			}
		}
		if r.cfg.AckBatch == 1 {
			for _, jid := range ids {
				r.ackJob(c, st, jid, ack)
			}
			continue
		}
		for len(ids) > 0 {
			n := min(len(ids), r.cfg.AckBatch)
			body = ackBatchBody(body[:0], id, ids[:n])
			r.ackBatch(c, st, body)
			ids = ids[n:]
		}
	}
}

// parseFetched reads the job ids of a fetch (one job) or fetch/batch
// reply.
func parseFetched(body []byte, batch bool, ids []string) ([]string, error) {
	if !batch {
		var one fetchReply
		if err := json.Unmarshal(body, &one); err != nil {
			return ids, err
		}
		return append(ids, one.JobID), nil
	}
	var many fetchBatchReply
	if err := json.Unmarshal(body, &many); err != nil {
		return ids, err
	}
	for _, j := range many.Jobs {
		ids = append(ids, j.JobID)
	}
	return ids, nil
}

// ackBatch sends one ack/batch and counts each job's outcome.
func (r *runner) ackBatch(c caller, st *loopStats, body []byte) {
	start := time.Now()
	rep, err := c.post(r.base, pathAckBatch, "", body, callTimeout)
	var res ackBatchReply
	if err == nil && rep.status == http.StatusOK {
		err = json.Unmarshal(rep.body, &res)
	}
	if err != nil || rep.status != http.StatusOK {
		r.failed(st, rep, err)
		return
	}
	st.ack.record(time.Since(start))
	var acked int64
	for _, x := range res.Results {
		if x.Error != nil {
			st.errors[x.Error.Code]++
			r.counter.errors.Add(1)
			continue
		}
		acked++
	}
	if n := r.counter.acked.Add(acked); r.cfg.Jobs > 0 && n >= r.cfg.Jobs {
		r.finish()
	}
}

// fetchBatchBody is a worker's fetch/batch request.
func fetchBatchBody(queue, workerID, hostname string, timeout time.Duration, max int) []byte {
	b, _ := json.Marshal(map[string]any{
		"queues": []string{queue}, "worker_id": workerID, "hostname": hostname,
		"timeout": timeout.Seconds(), "max": max,
	})
	return b
}

// ackBatchBody appends an ack/batch request for ids to b. Job ids and
// worker ids are plain ASCII, so they are written without escaping.
func ackBatchBody(b []byte, workerID string, ids []string) []byte {
	w, _ := json.Marshal(workerID)
	b = append(b, `{"worker_id":`...)
	b = append(b, w...)
	b = append(b, `,"acks":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"job_id":"`...)
		b = append(b, id...)
		b = append(b, `"}`...)
	}
	return append(b, "]}"...)
}

// The parts of batch replies the bench reads.
type (
	fetchBatchReply struct {
		Jobs []fetchReply `json:"jobs"`
	}
	ackBatchReply struct {
		Results []struct {
			JobID string `json:"job_id"`
			Error *struct {
				Code string `json:"code"`
			} `json:"error"`
		} `json:"results"`
	}
)
