package bench

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/proto/gen/jobbie/v1/jobbiev1connect"
)

// Transport "stream": each worker holds one WorkerService.Work stream to
// the gateway's gRPC port, grants FetchBatch jobs of credit, and acks
// every frame of jobs in one frame that grants the same credit again
// (the server answers a frame's acks with one ack/batch). A broken
// stream is counted as an error and opened again.

// streamEndWait is how long a stream waits at the run's end for the
// answers to its last acks.
const streamEndWait = 2 * time.Second

// streamClient speaks HTTP/2 to the gRPC URL: h2c for http://.
func streamClient(url string) *http.Client {
	var p http.Protocols
	if strings.HasPrefix(url, "http://") {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP2(true)
	}
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}

// streamWorker runs streams until the run ends.
func (r *runner) streamWorker(id string, st *loopStats) {
	hc := streamClient(r.cfg.GRPCURL)
	defer hc.CloseIdleConnections()
	api := jobbiev1connect.NewWorkerServiceClient(hc, strings.TrimRight(r.cfg.GRPCURL, "/"), connect.WithGRPC())
	for r.stopCtx.Err() == nil {
		if err := r.oneStream(api, id, st); err != nil && r.stopCtx.Err() == nil {
			r.failed(st, reply{}, err)
		}
	}
}

// oneStream works one stream; it returns when the run ended and every
// ack was answered, or when the stream broke.
func (r *runner) oneStream(api jobbiev1connect.WorkerServiceClient, id string, st *loopStats) error {
	ctx, cancel := context.WithCancel(r.base)
	defer cancel()
	bidi := api.Work(ctx)
	defer func() { _ = bidi.CloseResponse() }() // resets the stream if the server has not ended it
	go func() {
		// An idle stream sends nothing to wake its reader: once the run
		// ended, give the last acks a moment to be answered, then end it
		// (closing both sides unblocks a Receive, which ctx alone does
		// not while the request body is open).
		select {
		case <-ctx.Done():
			return
		case <-r.stopCtx.Done():
		}
		t := time.NewTimer(streamEndWait)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			cancel()
			_ = bidi.CloseRequest()
			_ = bidi.CloseResponse()
		}
	}()
	for _, h := range r.cfg.headers() {
		bidi.RequestHeader().Set(h.key, h.value)
	}
	credit := int32(r.cfg.FetchBatch)
	err := bidi.Send(&jobbiev1.WorkRequest{Credit: &jobbiev1.Credit{N: credit}, Hello: &jobbiev1.Hello{WorkerId: id, Hostname: hostname(),
		Queues: []string{r.cfg.Queue}, Concurrency: credit}})
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	sent := map[uint64]time.Time{} // acks awaiting their results, by correlation id
	var next uint64
	for {
		res, err := bidi.Receive()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		at := r.now()
		if jobs := res.GetJobs(); len(jobs) > 0 {
			r.counter.delivered.Add(int64(len(jobs)))
			r.gate.release(int64(len(jobs)))
			f := &jobbiev1.WorkRequest{Acks: make([]*jobbiev1.Ack, len(jobs))}
			now := time.Now()
			for i, j := range jobs {
				if s, ok := r.track.delivered(j.GetJobId(), at); ok {
					st.recordSample(s)
				}
				next++
				sent[next] = now
				f.Acks[i] = &jobbiev1.Ack{CorrelationId: next, JobId: j.GetJobId(), LeaseToken: j.GetLeaseToken()}
			}
			if r.stopCtx.Err() == nil {
				f.Credit = &jobbiev1.Credit{N: int32(len(jobs))}
			}
			if err := bidi.Send(f); err != nil {
				return err
			}
		}
		r.countResults(st, res.GetResults(), sent)
		if r.stopCtx.Err() != nil && len(sent) == 0 {
			// Every job this stream got is acked; what the server still
			// fetches for the credit it holds, it releases when the
			// stream closes cleanly.
			return bidi.CloseRequest()
		}
	}
}

// countResults counts the answered acks.
func (r *runner) countResults(st *loopStats, results []*jobbiev1.Result, sent map[uint64]time.Time) {
	var acked int64
	for _, x := range results {
		start, ok := sent[x.GetCorrelationId()]
		if !ok {
			continue
		}
		delete(sent, x.GetCorrelationId())
		if x.GetErrorCode() != "" {
			st.errors[x.GetErrorCode()]++
			r.counter.errors.Add(1)
			continue
		}
		st.ack.record(time.Since(start))
		acked++
	}
	if acked == 0 {
		return
	}
	if n := r.counter.acked.Add(acked); r.cfg.Jobs > 0 && n >= r.cfg.Jobs {
		r.finish()
	}
}
