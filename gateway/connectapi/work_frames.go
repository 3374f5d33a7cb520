package connectapi

import (
	"encoding/json"
	"net/http"

	"connectrpc.com/connect"
	gojson "github.com/goccy/go-json"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// What a worker's frames become: each kind the HTTP API's worker route,
// called through Route with the stream's metadata. The bodies a busy
// stream builds and reads per job (an ack/batch's entries and results, a
// heartbeat's) go through goccy/go-json, as the shard's do: encoding/json
// on them was a third of the stream's ack path in the gateway.

// call serves one route request for the stream.
func (st *stream) call(method, path string, body any) Answer {
	var b []byte
	if body != nil {
		var err error
		if b, err = gojson.Marshal(body); err != nil {
			return Answer{Status: http.StatusInternalServerError}
		}
	}
	return st.s.route(&Request{Method: method, Path: path, Header: st.hdr, Body: b, Peer: st.peer})
}

// ok reports a 2xx answer.
func ok(a Answer) bool { return a.Status >= 200 && a.Status <= 299 }

// settled forgets a job the worker no longer holds.
func (st *stream) settled(id string) {
	st.mu.Lock()
	delete(st.held, id)
	st.mu.Unlock()
}

// releaseHeld gives back the leases of the jobs the worker still holds
// when it closed its side: it finished or gave up on the rest.
func (st *stream) releaseHeld() {
	st.mu.Lock()
	rel := make([]wire.ReleaseEntry, 0, len(st.held))
	for _, e := range st.held {
		rel = append(rel, e)
	}
	clear(st.held)
	st.mu.Unlock()
	st.release(rel)
}

// release is POST /api/v1/release for leases of this worker.
func (st *stream) release(rel []wire.ReleaseEntry) {
	for len(rel) > 0 {
		n := min(len(rel), wire.MaxFetchBatch)
		st.call(http.MethodPost, "/api/v1/release", wire.ReleaseRequest{WorkerID: st.hello.GetWorkerId(), Jobs: rel[:n]})
		rel = rel[n:]
	}
}

// handle serves one frame (or several merged) and answers its results
// in one frame.
func (st *stream) handle(f *jobbiev1.WorkRequest) error {
	if f.GetHello() != nil {
		return fieldError("hello", "hello is the stream's first frame only")
	}
	if c := f.GetCredit(); c != nil {
		if c.GetN() < 0 {
			return fieldError("credit.n", "credit.n %d is negative", c.GetN())
		}
		st.mu.Lock()
		st.credit = min(st.credit+int(c.GetN()), maxCredit)
		st.mu.Unlock()
		st.nudge()
	}
	out := &jobbiev1.WorkResponse{}
	for _, e := range f.GetEnqueues() {
		out.Results = append(out.Results, st.enqueue(e))
	}
	st.acks(f.GetAcks(), out)
	for _, fl := range f.GetFails() {
		out.Results = append(out.Results, st.fail(fl))
	}
	st.heartbeats(f.GetHeartbeats(), f.GetExtendLeases(), out)
	if len(out.Results) == 0 && len(out.Cancels) == 0 {
		return nil
	}
	return st.send(out)
}

// failed is a Result carrying an answer's error.
func failed(id uint64, a Answer) *jobbiev1.Result {
	code, msg := errorOf(a)
	return &jobbiev1.Result{CorrelationId: id, ErrorCode: code, ErrorMessage: msg}
}

// errorOf is the HTTP API's error code and message of a failed answer.
func errorOf(a Answer) (string, string) {
	var body wire.ErrorBody
	if json.Unmarshal(a.Body, &body) == nil && body.Error != nil {
		msg := body.Error.Message
		if f := body.Error.Field; f != "" {
			msg = f + ": " + msg
		}
		return string(body.Error.Code), msg
	}
	return string(wire.CodeInternal), http.StatusText(a.Status)
}

// refused is a Result for input refused before it became a request.
func refused(id uint64, field, msg string) *jobbiev1.Result {
	return &jobbiev1.Result{CorrelationId: id, ErrorCode: string(wire.CodeBadRequest), ErrorMessage: field + ": " + msg}
}

// jsonOf is a Value as JSON, nil for none.
func jsonOf(v *structpb.Value) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := protojson.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// enqueue is POST /api/v1/enqueue.
func (st *stream) enqueue(e *jobbiev1.Enqueue) *jobbiev1.Result {
	b, err := marshal.Marshal(e.GetJob())
	if err != nil || e.GetJob() == nil {
		return refused(e.GetCorrelationId(), "enqueues.job", "a job is required")
	}
	a := st.call(http.MethodPost, "/api/v1/enqueue", json.RawMessage(b))
	if !ok(a) {
		return failed(e.GetCorrelationId(), a)
	}
	res := new(jobbiev1.EnqueueResponse)
	if err := unmarshal.Unmarshal(a.Body, res); err != nil {
		return refused(e.GetCorrelationId(), "enqueues.job", err.Error())
	}
	return &jobbiev1.Result{CorrelationId: e.GetCorrelationId(), Status: res.GetStatus(), Enqueued: []*jobbiev1.EnqueueResponse{res}}
}

// acks are one ack/batch per MaxAckBatch acks; the follow-up jobs of
// each ack that completed its job are enqueued (enqueue/batch, all of
// one ack's or none) before its result is answered.
func (st *stream) acks(all []*jobbiev1.Ack, out *jobbiev1.WorkResponse) {
	usage := map[*jobbiev1.Ack]*wire.AIUsage{}
	acks := make([]*jobbiev1.Ack, 0, len(all))
	for _, a := range all {
		u, err := usageOf("acks.usage", a.GetUsage())
		if err != nil {
			out.Results = append(out.Results, refused(a.GetCorrelationId(), "acks.usage", err.Error()))
			continue
		}
		usage[a] = u
		acks = append(acks, a)
	}
	for len(acks) > 0 {
		n := min(len(acks), wire.MaxAckBatch)
		part := acks[:n]
		acks = acks[n:]
		req := wire.AckBatchRequest{WorkerID: st.hello.GetWorkerId(), Acks: make([]wire.AckBatchEntry, n)}
		for i, a := range part {
			req.Acks[i] = wire.AckBatchEntry{JobID: a.GetJobId(), Result: jsonOf(a.GetResult()), StepStatus: a.GetStepStatus(), LeaseToken: a.GetLeaseToken(),
				Usage: usage[a]}
		}
		a := st.call(http.MethodPost, "/api/v1/ack/batch", req)
		var res wire.AckBatchResponse
		if ok(a) && gojson.Unmarshal(a.Body, &res) != nil {
			a = Answer{Status: http.StatusInternalServerError}
		}
		for i, ack := range part {
			if !ok(a) || i >= len(res.Results) {
				out.Results = append(out.Results, failed(ack.GetCorrelationId(), a))
				continue
			}
			r := res.Results[i]
			if r.Error != nil {
				if r.Error.Code == wire.CodeLeaseMismatch || r.Error.Code == wire.CodeNotFound {
					st.settled(ack.GetJobId())
				}
				out.Results = append(out.Results, &jobbiev1.Result{CorrelationId: ack.GetCorrelationId(), ErrorCode: string(r.Error.Code), ErrorMessage: r.Error.Message})
				continue
			}
			st.settled(ack.GetJobId())
			out.Results = append(out.Results, st.followUps(ack, r.Status))
		}
	}
}

// followUps enqueues an acked job's follow-up jobs, when it completed.
func (st *stream) followUps(ack *jobbiev1.Ack, status string) *jobbiev1.Result {
	res := &jobbiev1.Result{CorrelationId: ack.GetCorrelationId(), Status: status}
	if len(ack.GetEnqueue()) == 0 || status != wire.StateCompleted {
		return res
	}
	b, err := marshal.Marshal(&jobbiev1.EnqueueBatchRequest{Jobs: ack.GetEnqueue()})
	if err != nil {
		res.ErrorCode, res.ErrorMessage = string(wire.CodeBadRequest), "acks.enqueue: "+err.Error()
		return res
	}
	a := st.call(http.MethodPost, "/api/v1/enqueue/batch", json.RawMessage(b))
	if !ok(a) {
		res.ErrorCode, res.ErrorMessage = errorOf(a)
		return res
	}
	var batch jobbiev1.EnqueueBatchResponse
	if err := unmarshal.Unmarshal(a.Body, &batch); err == nil {
		res.Enqueued = batch.GetJobs()
	}
	return res
}

// fail is POST /api/v1/fail/{id}.
func (st *stream) fail(f *jobbiev1.Fail) *jobbiev1.Result {
	if err := segment("job_id", f.GetJobId()); err != nil {
		return refused(f.GetCorrelationId(), "fails.job_id", err.(*connect.Error).Message())
	}
	u, err := usageOf("fails.usage", f.GetUsage())
	if err != nil {
		return refused(f.GetCorrelationId(), "fails.usage", err.Error())
	}
	a := st.call(http.MethodPost, "/api/v1/fail/"+f.GetJobId(), wire.FailRequest{Error: f.GetError(), Backtrace: f.GetBacktrace(),
		WorkerID: st.hello.GetWorkerId(), LeaseToken: f.GetLeaseToken(), Usage: u, NonRetryable: f.GetNonRetryable()})
	if a.Status == http.StatusConflict || a.Status == http.StatusNotFound {
		st.settled(f.GetJobId())
	}
	if !ok(a) {
		return failed(f.GetCorrelationId(), a)
	}
	st.settled(f.GetJobId())
	var res wire.FailResponse
	_ = json.Unmarshal(a.Body, &res)
	return &jobbiev1.Result{CorrelationId: f.GetCorrelationId(), Status: res.Status}
}

// beat is one job's entry of a heartbeat, and whom to answer.
type beat struct {
	corr  uint64
	id    string
	token string
}

// heartbeats are one POST /api/v1/heartbeat per MaxHeartbeatJobs jobs, for
// the frame's heartbeats and lease extensions; a job the answer says was
// cancelled is also sent as a Cancel.
func (st *stream) heartbeats(hbs []*jobbiev1.Heartbeat, ext []*jobbiev1.ExtendLease, out *jobbiev1.WorkResponse) {
	jobs := map[string]wire.HeartbeatEntry{}
	var beats []beat
	for _, h := range hbs {
		u, err := usageOf("heartbeats.usage", h.GetUsage())
		if err != nil {
			out.Results = append(out.Results, refused(h.GetCorrelationId(), "heartbeats.usage", err.Error()))
			continue
		}
		jobs[h.GetJobId()] = wire.HeartbeatEntry{Progress: jsonOf(h.GetProgress()), Checkpoint: jsonOf(h.GetCheckpoint()), LeaseToken: h.GetLeaseToken(),
			Usage: sumUsage(jobs[h.GetJobId()].Usage, u)} // reports add up; the rest, the last frame's
		beats = append(beats, beat{h.GetCorrelationId(), h.GetJobId(), h.GetLeaseToken()})
	}
	for _, e := range ext {
		if e.GetLeaseDuration() != "" {
			out.Results = append(out.Results, refused(e.GetCorrelationId(), "extend_leases.lease_duration",
				"a lease is extended by its own length; leave lease_duration empty"))
			continue
		}
		if _, dup := jobs[e.GetJobId()]; !dup {
			jobs[e.GetJobId()] = wire.HeartbeatEntry{LeaseToken: e.GetLeaseToken()}
		}
		beats = append(beats, beat{e.GetCorrelationId(), e.GetJobId(), e.GetLeaseToken()})
	}
	if len(jobs) == 0 {
		return
	}
	statuses := map[string]string{}
	errs := map[string]Answer{}
	part := map[string]wire.HeartbeatEntry{}
	flush := func() {
		a := st.call(http.MethodPost, "/api/v1/heartbeat", wire.HeartbeatRequest{WorkerID: st.hello.GetWorkerId(), Jobs: part})
		var res wire.HeartbeatResponse
		if ok(a) && gojson.Unmarshal(a.Body, &res) != nil {
			a = Answer{Status: http.StatusInternalServerError}
		}
		if res.Drain {
			st.workerDrained() // it holds these jobs: the stream stays
		}
		for id := range part {
			if !ok(a) {
				errs[id] = a
			} else {
				statuses[id] = res.Jobs[id].Status
			}
		}
		part = map[string]wire.HeartbeatEntry{}
	}
	for id, e := range jobs {
		part[id] = e
		if len(part) == wire.MaxHeartbeatJobs {
			flush()
		}
	}
	if len(part) > 0 {
		flush()
	}
	cancelled := map[string]bool{}
	for _, b := range beats {
		if a, bad := errs[b.id]; bad {
			out.Results = append(out.Results, failed(b.corr, a))
			continue
		}
		s := statuses[b.id]
		out.Results = append(out.Results, &jobbiev1.Result{CorrelationId: b.corr, Status: s})
		switch s {
		case wire.HeartbeatCancel:
			if !cancelled[b.id] {
				cancelled[b.id] = true
				out.Cancels = append(out.Cancels, &jobbiev1.Cancel{JobId: b.id, LeaseToken: b.token})
			}
		case wire.HeartbeatLost:
			st.settled(b.id)
		}
	}
}
