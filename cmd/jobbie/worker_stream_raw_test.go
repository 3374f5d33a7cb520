package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/proto/gen/jobbie/v1/jobbiev1connect"
)

// rawStream is a WorkerService.Work stream driven frame by frame, with
// everything the server sent gathered for the test to wait on.
type rawStream struct {
	bidi   *connect.BidiStreamForClient[jobbiev1.WorkRequest, jobbiev1.WorkResponse]
	cancel context.CancelFunc

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every frame
	jobs    []*jobbiev1.LeasedJob
	frames  int // frames with jobs
	results map[uint64]*jobbiev1.Result
	resFrm  map[uint64]int // the frame each result came in
	cancels []*jobbiev1.Cancel
	drained bool
	keep    int
	end     error // the stream's end, once it ended
	ended   bool
	n       int // frames received
}

// openStream opens a stream with key and sends first (nil: nothing).
func openStream(t *testing.T, hc *http.Client, url, key string, first *jobbiev1.WorkRequest) *rawStream {
	t.Helper()
	return openStreamWith(t, hc, url, http.Header{"Authorization": {"Bearer " + key}}, first)
}

// openStreamWith opens a stream with the metadata md and sends first.
func openStreamWith(t *testing.T, hc *http.Client, url string, md http.Header, first *jobbiev1.WorkRequest) *rawStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	bidi := jobbiev1connect.NewWorkerServiceClient(hc, url, connect.WithGRPC()).Work(ctx)
	for k, v := range md {
		bidi.RequestHeader()[k] = v
	}
	s := &rawStream{bidi: bidi, cancel: cancel, changed: make(chan struct{}), results: map[uint64]*jobbiev1.Result{}, resFrm: map[uint64]int{}}
	t.Cleanup(cancel)
	if first != nil {
		s.send(t, first)
	} else {
		require.NoError(t, bidi.Send(nil))
	}
	go s.read()
	return s
}

func (s *rawStream) read() {
	for {
		f, err := s.bidi.Receive()
		s.mu.Lock()
		if err != nil {
			s.end, s.ended = err, true
		} else {
			s.n++
			if len(f.GetJobs()) > 0 {
				s.frames++
				s.jobs = append(s.jobs, f.GetJobs()...)
			}
			for _, r := range f.GetResults() {
				s.results[r.GetCorrelationId()] = r
				s.resFrm[r.GetCorrelationId()] = s.n
			}
			s.cancels = append(s.cancels, f.GetCancels()...)
			s.drained = s.drained || f.GetDrain() != nil
			if f.GetKeepAlive() != nil {
				s.keep++
			}
		}
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (s *rawStream) send(t *testing.T, f *jobbiev1.WorkRequest) {
	t.Helper()
	require.NoError(t, s.bidi.Send(f))
}

// until waits, at most a minute, for cond (called with s.mu held).
func (s *rawStream) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		s.mu.Lock()
		ok, ch := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("stream: no %s within a minute", what)
		}
	}
}

// waitJobs waits until n jobs came in all, and returns them all.
func (s *rawStream) waitJobs(t *testing.T, n int) []*jobbiev1.LeasedJob {
	t.Helper()
	s.until(t, "jobs", func() bool { return len(s.jobs) >= n })
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*jobbiev1.LeasedJob(nil), s.jobs...)
}

// waitResults waits for the results of ids.
func (s *rawStream) waitResults(t *testing.T, ids ...uint64) map[uint64]*jobbiev1.Result {
	t.Helper()
	s.until(t, "results", func() bool {
		for _, id := range ids {
			if s.results[id] == nil {
				return false
			}
		}
		return true
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[uint64]*jobbiev1.Result{}
	for _, id := range ids {
		out[id] = s.results[id]
	}
	return out
}

// waitEnd waits for the stream to end, and returns how: nil when the
// server ended it without an error.
func (s *rawStream) waitEnd(t *testing.T) error {
	t.Helper()
	s.until(t, "end", func() bool { return s.ended })
	s.mu.Lock()
	defer s.mu.Unlock()
	if errors.Is(s.end, io.EOF) {
		return nil
	}
	return s.end
}

// drop ends the stream as a worker that vanished does: no clean close,
// the stream reset.
func (s *rawStream) drop() {
	s.cancel()
	_ = s.bidi.CloseResponse()
}

// closeSend ends the worker's side cleanly.
func (s *rawStream) closeSend(t *testing.T) {
	t.Helper()
	require.NoError(t, s.bidi.CloseRequest())
}
