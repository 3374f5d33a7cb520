package connectapi

import (
	"context"
	"net/http"

	"connectrpc.com/connect"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
)

// JobService: each method is the HTTP API's route of the same name.

func (s *Services) Enqueue(ctx context.Context, req *connect.Request[jobbiev1.EnqueueRequest]) (*connect.Response[jobbiev1.EnqueueResponse], error) {
	b, err := body(req.Msg)
	if err != nil {
		return nil, err
	}
	out := new(jobbiev1.EnqueueResponse)
	h, err := s.do(ctx, req.Header(), http.MethodPost, "/api/v1/enqueue", b, out)
	return respond(out, h, err)
}

func (s *Services) EnqueueBatch(ctx context.Context, req *connect.Request[jobbiev1.EnqueueBatchRequest]) (*connect.Response[jobbiev1.EnqueueBatchResponse], error) {
	b, err := body(req.Msg)
	if err != nil {
		return nil, err
	}
	out := new(jobbiev1.EnqueueBatchResponse)
	h, err := s.do(ctx, req.Header(), http.MethodPost, "/api/v1/enqueue/batch", b, out)
	return respond(out, h, err)
}

func (s *Services) GetJob(ctx context.Context, req *connect.Request[jobbiev1.GetJobRequest]) (*connect.Response[jobbiev1.GetJobResponse], error) {
	if err := segment("id", req.Msg.GetId()); err != nil {
		return nil, err
	}
	out := &jobbiev1.GetJobResponse{Job: new(jobbiev1.Job)}
	h, err := s.do(ctx, req.Header(), http.MethodGet, "/api/v1/jobs/"+req.Msg.GetId(), nil, out.Job)
	return respond(out, h, err)
}

func (s *Services) CancelJob(ctx context.Context, req *connect.Request[jobbiev1.CancelJobRequest]) (*connect.Response[jobbiev1.CancelJobResponse], error) {
	if err := segment("id", req.Msg.GetId()); err != nil {
		return nil, err
	}
	out := new(jobbiev1.CancelJobResponse)
	h, err := s.do(ctx, req.Header(), http.MethodPost, "/api/v1/jobs/"+req.Msg.GetId()+"/cancel", nil, out)
	return respond(out, h, err)
}

func (s *Services) RetryJob(ctx context.Context, req *connect.Request[jobbiev1.RetryJobRequest]) (*connect.Response[jobbiev1.RetryJobResponse], error) {
	if err := segment("id", req.Msg.GetId()); err != nil {
		return nil, err
	}
	out := new(jobbiev1.RetryJobResponse)
	h, err := s.do(ctx, req.Header(), http.MethodPost, "/api/v1/jobs/"+req.Msg.GetId()+"/retry", nil, out)
	return respond(out, h, err)
}

func (s *Services) Search(ctx context.Context, req *connect.Request[jobbiev1.SearchRequest]) (*connect.Response[jobbiev1.SearchResponse], error) {
	b, err := body(req.Msg)
	if err != nil {
		return nil, err
	}
	out := new(jobbiev1.SearchResponse)
	h, err := s.do(ctx, req.Header(), http.MethodPost, "/api/v1/jobs/search", b, out)
	return respond(out, h, err)
}
