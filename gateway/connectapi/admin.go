package connectapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// AdminService: each method is the HTTP API's route of the same name.

func (s *Services) ListQueues(ctx context.Context, req *connect.Request[jobbiev1.ListQueuesRequest]) (*connect.Response[jobbiev1.ListQueuesResponse], error) {
	out := new(jobbiev1.ListQueuesResponse)
	h, err := s.do(ctx, req.Header(), http.MethodGet, "/api/v1/queues", nil, out)
	return respond(out, h, err)
}

func (s *Services) GetQueue(ctx context.Context, req *connect.Request[jobbiev1.GetQueueRequest]) (*connect.Response[jobbiev1.GetQueueResponse], error) {
	out := &jobbiev1.GetQueueResponse{Queue: new(jobbiev1.Queue)}
	h, err := s.queue(ctx, req.Header(), http.MethodGet, req.Msg.GetName(), "", out.Queue)
	return respond(out, h, err)
}

func (s *Services) PauseQueue(ctx context.Context, req *connect.Request[jobbiev1.PauseQueueRequest]) (*connect.Response[jobbiev1.PauseQueueResponse], error) {
	out := &jobbiev1.PauseQueueResponse{Queue: new(jobbiev1.Queue)}
	h, err := s.queue(ctx, req.Header(), http.MethodPost, req.Msg.GetName(), "/pause", out.Queue)
	return respond(out, h, err)
}

func (s *Services) ResumeQueue(ctx context.Context, req *connect.Request[jobbiev1.ResumeQueueRequest]) (*connect.Response[jobbiev1.ResumeQueueResponse], error) {
	out := &jobbiev1.ResumeQueueResponse{Queue: new(jobbiev1.Queue)}
	h, err := s.queue(ctx, req.Header(), http.MethodPost, req.Msg.GetName(), "/resume", out.Queue)
	return respond(out, h, err)
}

func (s *Services) DrainQueue(ctx context.Context, req *connect.Request[jobbiev1.DrainQueueRequest]) (*connect.Response[jobbiev1.DrainQueueResponse], error) {
	out := new(jobbiev1.DrainQueueResponse)
	h, err := s.queue(ctx, req.Header(), http.MethodPost, req.Msg.GetName(), "/drain", out)
	return respond(out, h, err)
}

func (s *Services) ClearQueue(ctx context.Context, req *connect.Request[jobbiev1.ClearQueueRequest]) (*connect.Response[jobbiev1.ClearQueueResponse], error) {
	out := new(jobbiev1.ClearQueueResponse)
	h, err := s.queue(ctx, req.Header(), http.MethodPost, req.Msg.GetName(), "/clear", out)
	return respond(out, h, err)
}

// queue calls /api/v1/queues/{name}{action}.
func (s *Services) queue(ctx context.Context, h http.Header, method, name, action string, out proto.Message) (http.Header, error) {
	if err := segment("name", name); err != nil {
		return nil, err
	}
	return s.do(ctx, h, method, "/api/v1/queues/"+name+action, nil, out)
}

func (s *Services) ListDeadJobs(ctx context.Context, req *connect.Request[jobbiev1.ListDeadJobsRequest]) (*connect.Response[jobbiev1.ListDeadJobsResponse], error) {
	q := url.Values{}
	if v := req.Msg.GetQueue(); v != "" {
		q.Set("queue", v)
	}
	if v := req.Msg.GetCursor(); v != "" {
		q.Set("cursor", v)
	}
	if v := req.Msg.GetLimit(); v != 0 {
		q.Set("limit", strconv.Itoa(int(v)))
	}
	path := "/api/v1/dead"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	out := new(jobbiev1.ListDeadJobsResponse)
	h, err := s.do(ctx, req.Header(), http.MethodGet, path, nil, out)
	return respond(out, h, err)
}

func (s *Services) RetryDeadJobs(ctx context.Context, req *connect.Request[jobbiev1.RetryDeadJobsRequest]) (*connect.Response[jobbiev1.RetryDeadJobsResponse], error) {
	filter, err := json.Marshal(wire.SearchFilter{Queue: req.Msg.GetQueue(), State: []string{wire.StateDead}})
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	b, err := json.Marshal(wire.BulkRequest{Filter: filter, Action: wire.BulkRetry})
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	out := new(jobbiev1.RetryDeadJobsResponse)
	h, err := s.do(ctx, req.Header(), http.MethodPost, "/api/v1/jobs/bulk", b, out)
	return respond(out, h, err)
}

func (s *Services) ListWorkers(ctx context.Context, req *connect.Request[jobbiev1.ListWorkersRequest]) (*connect.Response[jobbiev1.ListWorkersResponse], error) {
	out := new(jobbiev1.ListWorkersResponse)
	h, err := s.do(ctx, req.Header(), http.MethodGet, "/api/v1/workers", nil, out)
	return respond(out, h, err)
}

func (s *Services) DrainWorker(ctx context.Context, req *connect.Request[jobbiev1.DrainWorkerRequest]) (*connect.Response[jobbiev1.DrainWorkerResponse], error) {
	id := req.Msg.GetWorkerId()
	if err := segment("worker_id", id); err != nil {
		return nil, err
	}
	out := new(jobbiev1.DrainWorkerResponse)
	h, err := s.do(ctx, req.Header(), http.MethodPost, "/api/v1/workers/"+id+"/drain", nil, out)
	return respond(out, h, err)
}
