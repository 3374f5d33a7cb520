package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/proto/gen/jobbie/v1/jobbiev1connect"
	"github.com/jobbie/jobbie/wire"
)

// refusingStream serves WorkerService.Work for the worker runtime's
// unit tests: one job on the first credit, then each ack refused with
// no_leader (as the gateway answers while the shard elects a leader)
// until refuse acks came, and the next answered completed.
type refusingStream struct {
	jobbiev1connect.UnimplementedWorkerServiceHandler
	refuse   int
	firstAck chan struct{} // closed at the first ack
	acked    chan struct{} // closed once an ack was answered completed

	mu   sync.Mutex
	gave bool
	acks []*jobbiev1.Ack
}

func (s *refusingStream) Work(_ context.Context, bidi *connect.BidiStream[jobbiev1.WorkRequest, jobbiev1.WorkResponse]) error {
	for {
		f, err := bidi.Receive()
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		out := &jobbiev1.WorkResponse{}
		s.mu.Lock()
		if !s.gave && f.GetCredit().GetN() > 0 {
			s.gave = true
			out.Jobs = append(out.Jobs, &jobbiev1.LeasedJob{JobId: "job_1", Queue: "q", Attempt: 1, LeaseToken: "tok_1",
				PayloadJson: []byte(`{"n":1}`)})
		}
		for _, a := range f.GetAcks() {
			s.acks = append(s.acks, a)
			if len(s.acks) == 1 {
				close(s.firstAck)
			}
			if len(s.acks) <= s.refuse {
				out.Results = append(out.Results, &jobbiev1.Result{CorrelationId: a.GetCorrelationId(),
					ErrorCode: string(wire.CodeNoLeader), ErrorMessage: "the shard has no leader yet"})
				continue
			}
			out.Results = append(out.Results, &jobbiev1.Result{CorrelationId: a.GetCorrelationId(), Status: wire.StateCompleted})
			close(s.acked)
		}
		s.mu.Unlock()
		if len(out.Jobs)+len(out.Results) > 0 {
			if err := bidi.Send(out); err != nil {
				return err
			}
		}
	}
}

func (s *refusingStream) sentAcks() []*jobbiev1.Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*jobbiev1.Ack(nil), s.acks...)
}

// serveRefusing starts s on an h2c server and returns its URL.
func serveRefusing(t *testing.T, s *refusingStream) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(jobbiev1connect.NewWorkerServiceHandler(s))
	return h2cServer(t, mux)
}

// An ack refused for now (no_leader: the shard between leaders) is sent
// again, under a new correlation id, with its lease token, until it is
// answered: the job runs once, as over HTTP, where the worker retries
// the ack's 503. Before, the stream worker logged the refusal and the
// job ran again once its lease ran out. A worker told to stop while such
// an ack waits for its backoff still sends it, and Run returns only once
// it is answered.
func TestStreamWorkerSendsAnAckRefusedForNowAgain(t *testing.T) {
	t.Parallel()
	for _, stopEarly := range []bool{false, true} {
		name := "running"
		if stopEarly {
			name = "stopping"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := &refusingStream{refuse: 2, firstAck: make(chan struct{}), acked: make(chan struct{})}
			url := serveRefusing(t, s)
			f := newFakeServer(t)
			c := client.New(f.srv.URL, "key", client.WithRetryPolicy(client.RetryPolicy{MinBackoff: 20 * time.Millisecond, MaxBackoff: 40 * time.Millisecond}))
			t.Cleanup(c.CloseIdleConnections)
			var runs atomic.Int64
			w := quietWorker(c, client.WorkerConfig{Transport: client.TransportStream, StreamURL: url, Concurrency: 1},
				func(context.Context, *client.JobContext) (any, error) {
					runs.Add(1)
					return nil, nil
				})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			if stopEarly {
				<-s.firstAck
				cancel() // the refused ack now waits for its backoff
			}
			select {
			case <-s.acked:
			case err := <-done:
				t.Fatalf("the worker stopped (%v) before its ack was answered; acks sent: %d", err, len(s.sentAcks()))
			case <-time.After(time.Minute):
				t.Fatalf("the ack refused for now was not sent again; acks sent: %d", len(s.sentAcks()))
			}
			cancel()
			require.NoError(t, <-done)
			require.Equal(t, int64(1), runs.Load(), "the job ran once")
			acks := s.sentAcks()
			require.Len(t, acks, 3, "refused twice, answered the third time")
			ids := map[uint64]bool{}
			for _, a := range acks {
				require.Equal(t, "job_1", a.GetJobId())
				require.Equal(t, "tok_1", a.GetLeaseToken(), "the same lease: an ack applied after all is refused, not applied twice")
				ids[a.GetCorrelationId()] = true
			}
			require.Len(t, ids, 3, "each sending has its own correlation id")
		})
	}
}
