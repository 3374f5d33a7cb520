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
	api := jobbiev1connect.NewWorkerServiceClient(hc, strings.TrimRight(r.cfg.GRPCURL, "/"), connect.WithGRPC(),
		connect.WithCodec(streamCodec{}))
	for r.stopCtx.Err() == nil {
		if err := r.oneStream(api, id, st); err != nil && r.stopCtx.Err() == nil {
			r.failed(st, reply{}, err)
		}
	}
}

// oneStream works one stream; it returns when the run ended and every
// ack was answered, or when the stream broke. It speaks through the
// stream's connection, with streamCodec's frames, reused.
func (r *runner) oneStream(api jobbiev1connect.WorkerServiceClient, id string, st *loopStats) error {
	ctx, cancel := context.WithCancel(r.base)
	defer cancel()
	conn, err := api.Work(ctx).Conn()
	if err != nil {
		return err
	}
	defer func() { _ = conn.CloseResponse() }() // resets the stream if the server has not ended it
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
			_ = conn.CloseRequest()
			_ = conn.CloseResponse()
		}
	}()
	for _, h := range r.cfg.headers() {
		conn.RequestHeader().Set(h.key, h.value)
	}
	credit := int32(r.cfg.FetchBatch)
	err = conn.Send(streamHello(id, r.cfg.Queue, credit))
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	sent := map[uint64]time.Time{} // acks awaiting their results, by correlation id
	var (
		next uint64
		res  jobFrame
		acks ackFrame
	)
	for {
		res.reset()
		if err := conn.Receive(&res); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		at := r.now()
		if jobs := res.jobs; len(jobs) > 0 {
			r.counter.delivered.Add(int64(len(jobs)))
			r.gate.release(int64(len(jobs)))
			acks.reset()
			now := time.Now()
			for _, j := range jobs {
				if s, ok := r.track.delivered(j.id, at); ok {
					st.recordSample(s)
				}
				next++
				sent[next] = now
				acks.ack(next, j.id, j.token)
			}
			if r.stopCtx.Err() == nil {
				acks.credit(int32(len(jobs)))
			}
			if err := conn.Send(&acks); err != nil {
				return err
			}
		}
		r.countResults(st, res.results, sent)
		if r.stopCtx.Err() != nil && len(sent) == 0 {
			// Every job this stream got is acked; what the server still
			// fetches for the credit it holds, it releases when the
			// stream closes cleanly.
			return conn.CloseRequest()
		}
	}
}

// countResults counts the answered acks.
func (r *runner) countResults(st *loopStats, results []frameResult, sent map[uint64]time.Time) {
	var acked int64
	for _, x := range results {
		start, ok := sent[x.corrID]
		if !ok {
			continue
		}
		delete(sent, x.corrID)
		if x.errCode != "" {
			st.errors[x.errCode]++
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

// streamHello opens a bench stream with credit for its jobs. It asks for
// JSON payloads, as the Go SDK's worker does: the bench skips payloads,
// and the gateway's work for it is then what it does for the SDK.
func streamHello(id, queue string, credit int32) *jobbiev1.WorkRequest {
	return &jobbiev1.WorkRequest{Credit: &jobbiev1.Credit{N: credit}, Hello: &jobbiev1.Hello{WorkerId: id, Hostname: hostname(),
		Queues: []string{queue}, Concurrency: credit, JsonPayloads: true}}
}
