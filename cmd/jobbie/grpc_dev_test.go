package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/jobbie/jobbie/client"
	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/proto/gen/jobbie/v1/jobbiev1connect"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// grpcClients are JobService and AdminService clients with one key.
type grpcClients struct {
	jobs  jobbiev1connect.JobServiceClient
	admin jobbiev1connect.AdminServiceClient
}

// h2c is an HTTP client speaking HTTP/2 without TLS, as gRPC needs.
func h2c(t *testing.T) *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// dial makes clients for key ("" for none) over hc with opts (the
// protocol).
func dial(hc *http.Client, url, key string, opts ...connect.ClientOption) grpcClients {
	auth := connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if key != "" {
				req.Header().Set("Authorization", "Bearer "+key)
			}
			return next(ctx, req)
		}
	})
	opts = append(opts, connect.WithInterceptors(auth))
	return grpcClients{jobs: jobbiev1connect.NewJobServiceClient(hc, url, opts...),
		admin: jobbiev1connect.NewAdminServiceClient(hc, url, opts...)}
}

// requireCode checks err is a Connect error of code, and returns it.
func requireCode(t *testing.T, err error, code connect.Code) *connect.Error {
	t.Helper()
	var ce *connect.Error
	require.True(t, errors.As(err, &ce), "want %s, got %v", code, err)
	require.Equal(t, code, ce.Code(), "%v", err)
	return ce
}

// badField is the field a Connect error's BadRequest detail names.
func badField(t *testing.T, ce *connect.Error) string {
	t.Helper()
	for _, d := range ce.Details() {
		v, err := d.Value()
		require.NoError(t, err)
		if br, ok := v.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetField()
		}
	}
	t.Fatalf("no BadRequest detail in %v", ce)
	return ""
}

// JobService and AdminService on jobbie dev's --grpc-addr: every method
// through the generated client over h2c with the gRPC protocol, one with
// the Connect protocol over HTTP/1.1, and the same refusals as over HTTP:
// another tenant's key finds nothing, a viewer cannot enqueue, no key is
// unauthenticated, bad input is InvalidArgument naming the field.
func TestGRPCServicesAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	require.NotEmpty(t, d.grpc, "dev printed no gRPC address")
	ctx := context.Background()
	ownerKey := readKey(t, filepath.Join(d.dir, "owner.key"))
	hc := h2c(t)
	owner := dial(hc, d.grpc, ownerKey, connect.WithGRPC())

	payload, err := structpb.NewValue(map[string]any{"to": "user@example.com", "n": 1})
	require.NoError(t, err)
	enq, err := owner.jobs.Enqueue(ctx, connect.NewRequest(&jobbiev1.EnqueueRequest{Queue: "emails", Payload: payload,
		Priority: wire.PriorityHigh, Tags: map[string]string{"tenant": "acme"}}))
	require.NoError(t, err)
	require.Equal(t, wire.StatePending, enq.Msg.GetStatus())
	require.NotEmpty(t, enq.Header().Get(wire.RequestIDHeader), "the answer's request id")
	first := enq.Msg.GetJobId()

	batch, err := owner.jobs.EnqueueBatch(ctx, connect.NewRequest(&jobbiev1.EnqueueBatchRequest{Jobs: []*jobbiev1.EnqueueRequest{
		{Queue: "emails"}, {Queue: "emails", UniqueKey: "u1"}}}))
	require.NoError(t, err)
	require.Len(t, batch.Msg.GetJobIds(), 2)
	second, third := batch.Msg.GetJobIds()[0], batch.Msg.GetJobIds()[1]

	got, err := owner.jobs.GetJob(ctx, connect.NewRequest(&jobbiev1.GetJobRequest{Id: first}))
	require.NoError(t, err)
	job := got.Msg.GetJob()
	require.Equal(t, first, job.GetId())
	require.Equal(t, "emails", job.GetQueue())
	require.Equal(t, wire.PriorityHigh, job.GetPriority())
	require.Equal(t, map[string]string{"tenant": "acme"}, job.GetTags())
	require.Equal(t, payload.AsInterface(), job.GetPayload().AsInterface())
	require.NotNil(t, job.GetCreatedAt())
	require.NotEmpty(t, job.GetTimeline())

	// The same job over the Connect protocol, on HTTP/1.1, equals it.
	viaConnect := dial(http.DefaultClient, d.grpc, ownerKey)
	again, err := viaConnect.jobs.GetJob(ctx, connect.NewRequest(&jobbiev1.GetJobRequest{Id: first}))
	require.NoError(t, err)
	require.Equal(t, first, again.Msg.GetJob().GetId())
	require.Equal(t, job.GetTags(), again.Msg.GetJob().GetTags())
	require.Equal(t, job.GetCreatedAt().AsTime(), again.Msg.GetJob().GetCreatedAt().AsTime())

	found, err := owner.jobs.Search(ctx, connect.NewRequest(&jobbiev1.SearchRequest{Queue: "emails", Sort: wire.SortCreatedAt, Order: wire.OrderAsc}))
	require.NoError(t, err)
	var ids []string
	for _, j := range found.Msg.GetJobs() {
		ids = append(ids, j.GetId())
	}
	require.Equal(t, []string{first, second, third}, ids)

	cancelled, err := owner.jobs.CancelJob(ctx, connect.NewRequest(&jobbiev1.CancelJobRequest{Id: second}))
	require.NoError(t, err)
	require.Equal(t, wire.CancelDone, cancelled.Msg.GetStatus())
	retried, err := owner.jobs.RetryJob(ctx, connect.NewRequest(&jobbiev1.RetryJobRequest{Id: second}))
	require.NoError(t, err)
	require.Equal(t, second, retried.Msg.GetJobId())
	require.Equal(t, wire.StatePending, retried.Msg.GetStatus())
	_, err = owner.jobs.RetryJob(ctx, connect.NewRequest(&jobbiev1.RetryJobRequest{Id: second}))
	requireCode(t, err, connect.CodeAborted) // a pending job: 409 over HTTP

	// WorkerService: worker_stream_*_test.go.

	t.Run("Admin", func(t *testing.T) {
		queues, err := owner.admin.ListQueues(ctx, connect.NewRequest(&jobbiev1.ListQueuesRequest{}))
		require.NoError(t, err)
		var names []string
		for _, q := range queues.Msg.GetQueues() {
			names = append(names, q.GetName())
		}
		require.Contains(t, names, "emails")
		q, err := owner.admin.GetQueue(ctx, connect.NewRequest(&jobbiev1.GetQueueRequest{Name: "emails"}))
		require.NoError(t, err)
		require.Equal(t, int64(3), q.Msg.GetQueue().GetCounts().GetPending())

		paused, err := owner.admin.PauseQueue(ctx, connect.NewRequest(&jobbiev1.PauseQueueRequest{Name: "emails"}))
		require.NoError(t, err)
		require.True(t, paused.Msg.GetQueue().GetPaused())
		resumed, err := owner.admin.ResumeQueue(ctx, connect.NewRequest(&jobbiev1.ResumeQueueRequest{Name: "emails"}))
		require.NoError(t, err)
		require.False(t, resumed.Msg.GetQueue().GetPaused())
		drain, err := owner.admin.DrainQueue(ctx, connect.NewRequest(&jobbiev1.DrainQueueRequest{Name: "emails"}))
		require.NoError(t, err)
		require.True(t, drain.Msg.GetDraining())
		require.True(t, drain.Msg.GetDrained(), "no job was active")
		_, err = owner.admin.ResumeQueue(ctx, connect.NewRequest(&jobbiev1.ResumeQueueRequest{Name: "emails"}))
		require.NoError(t, err)
		cleared, err := owner.admin.ClearQueue(ctx, connect.NewRequest(&jobbiev1.ClearQueueRequest{Name: "emails"}))
		require.NoError(t, err)
		require.Equal(t, int64(3), cleared.Msg.GetCleared())

		// A job that dies, worked over HTTP, then the dead-letter calls.
		httpOwner := client.New(d.gateway, ownerKey)
		t.Cleanup(httpOwner.CloseIdleConnections)
		zero := int32(0)
		dead, err := owner.jobs.Enqueue(ctx, connect.NewRequest(&jobbiev1.EnqueueRequest{Queue: "flaky", MaxRetries: &zero}))
		require.NoError(t, err)
		leased, err := httpOwner.Fetch(ctx, client.FetchRequest{Queues: []string{"flaky"}, WorkerID: "w-grpc", Hostname: "h1", Timeout: 10 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, leased)
		workers, err := owner.admin.ListWorkers(ctx, connect.NewRequest(&jobbiev1.ListWorkersRequest{}))
		require.NoError(t, err)
		require.Len(t, workers.Msg.GetWorkers(), 1)
		require.Equal(t, "w-grpc", workers.Msg.GetWorkers()[0].GetId())
		require.Equal(t, []string{dead.Msg.GetJobId()}, workers.Msg.GetWorkers()[0].GetActiveJobIds())
		require.False(t, workers.Msg.GetWorkers()[0].GetDraining())
		drained, err := owner.admin.DrainWorker(ctx, connect.NewRequest(&jobbiev1.DrainWorkerRequest{WorkerId: "w-grpc"}))
		require.NoError(t, err)
		require.Equal(t, "w-grpc", drained.Msg.GetWorkerId())
		require.True(t, drained.Msg.GetDraining())
		workers, err = owner.admin.ListWorkers(ctx, connect.NewRequest(&jobbiev1.ListWorkersRequest{}))
		require.NoError(t, err)
		require.True(t, workers.Msg.GetWorkers()[0].GetDraining())
		_, err = httpOwner.Fetch(ctx, client.FetchRequest{Queues: []string{"flaky"}, WorkerID: "w-grpc", Timeout: 10 * time.Second})
		require.ErrorIs(t, err, client.ErrWorkerDraining)
		requireCode(t, second2(owner.admin.DrainWorker(ctx, connect.NewRequest(&jobbiev1.DrainWorkerRequest{WorkerId: "never-seen"}))), connect.CodeNotFound)
		_, err = httpOwner.Fail(ctx, leased.ID, "boom", "", client.Lease(leased.LeaseToken))
		require.NoError(t, err)

		page, err := owner.admin.ListDeadJobs(ctx, connect.NewRequest(&jobbiev1.ListDeadJobsRequest{Queue: "flaky", Limit: 10}))
		require.NoError(t, err)
		require.Len(t, page.Msg.GetJobs(), 1)
		require.Equal(t, dead.Msg.GetJobId(), page.Msg.GetJobs()[0].GetId())
		require.Equal(t, "boom", page.Msg.GetJobs()[0].GetLastError())
		require.False(t, page.Msg.GetHasMore())
		retry, err := owner.admin.RetryDeadJobs(ctx, connect.NewRequest(&jobbiev1.RetryDeadJobsRequest{Queue: "flaky"}))
		require.NoError(t, err)
		require.Equal(t, int64(1), retry.Msg.GetAffected())
		back, err := owner.jobs.GetJob(ctx, connect.NewRequest(&jobbiev1.GetJobRequest{Id: dead.Msg.GetJobId()}))
		require.NoError(t, err)
		require.Equal(t, wire.StatePending, back.Msg.GetJob().GetState())
	})

	t.Run("Refusals", func(t *testing.T) {
		mine, err := owner.jobs.Enqueue(ctx, connect.NewRequest(&jobbiev1.EnqueueRequest{Queue: "reports"}))
		require.NoError(t, err)
		first := mine.Msg.GetJobId()
		// No key: Unauthenticated, as HTTP's 401.
		_, err = dial(hc, d.grpc, "", connect.WithGRPC()).jobs.GetJob(ctx, connect.NewRequest(&jobbiev1.GetJobRequest{Id: first}))
		requireCode(t, err, connect.CodeUnauthenticated)

		// Another tenant's key: the job is not found, not forbidden.
		var ct wire.CreatedTenant
		require.NoError(t, json.Unmarshal([]byte(d.operator(t, "", "tenants", "create", "other", "-o", "json")), &ct))
		other := dial(hc, d.grpc, ct.OwnerKey, connect.WithGRPC())
		_, err = other.jobs.GetJob(ctx, connect.NewRequest(&jobbiev1.GetJobRequest{Id: first}))
		requireCode(t, err, connect.CodeNotFound)
		_, err = other.jobs.CancelJob(ctx, connect.NewRequest(&jobbiev1.CancelJobRequest{Id: first}))
		requireCode(t, err, connect.CodeNotFound)
		theirs, err := other.jobs.Search(ctx, connect.NewRequest(&jobbiev1.SearchRequest{}))
		require.NoError(t, err)
		require.Empty(t, theirs.Msg.GetJobs())

		// A viewer reads but cannot enqueue: PermissionDenied, as HTTP's 403.
		httpOwner := client.New(d.gateway, ownerKey)
		t.Cleanup(httpOwner.CloseIdleConnections)
		vk, err := httpOwner.CreateKey(ctx, client.CreateKeyRequest{Name: "dashboards", Role: tenancy.RoleViewer, Namespaces: []string{tenancy.AllNamespaces}})
		require.NoError(t, err)
		viewer := dial(hc, d.grpc, vk.Token, connect.WithGRPC())
		_, err = viewer.jobs.GetJob(ctx, connect.NewRequest(&jobbiev1.GetJobRequest{Id: first}))
		require.NoError(t, err)
		_, err = viewer.jobs.Enqueue(ctx, connect.NewRequest(&jobbiev1.EnqueueRequest{Queue: "emails"}))
		requireCode(t, err, connect.CodePermissionDenied)
		_, err = viewer.admin.PauseQueue(ctx, connect.NewRequest(&jobbiev1.PauseQueueRequest{Name: "emails"}))
		requireCode(t, err, connect.CodePermissionDenied)
		_, err = viewer.admin.DrainWorker(ctx, connect.NewRequest(&jobbiev1.DrainWorkerRequest{WorkerId: "w-grpc"}))
		requireCode(t, err, connect.CodePermissionDenied)

		// Bad input: InvalidArgument naming the field, and nothing enqueued.
		ce := requireCode(t, second2(owner.jobs.Enqueue(ctx, connect.NewRequest(&jobbiev1.EnqueueRequest{Queue: "emails", Priority: "urgent"}))), connect.CodeInvalidArgument)
		require.Equal(t, "priority", badField(t, ce))
		ce = requireCode(t, second2(owner.jobs.Enqueue(ctx, connect.NewRequest(&jobbiev1.EnqueueRequest{}))), connect.CodeInvalidArgument)
		require.Equal(t, "queue", badField(t, ce))
		ce = requireCode(t, second2(owner.jobs.GetJob(ctx, connect.NewRequest(&jobbiev1.GetJobRequest{Id: first + "/chain"}))), connect.CodeInvalidArgument)
		require.Equal(t, "id", badField(t, ce))
		ce = requireCode(t, second2(owner.admin.PauseQueue(ctx, connect.NewRequest(&jobbiev1.PauseQueueRequest{}))), connect.CodeInvalidArgument)
		require.Equal(t, "name", badField(t, ce))
		ce = requireCode(t, second2(owner.admin.DrainWorker(ctx, connect.NewRequest(&jobbiev1.DrainWorkerRequest{WorkerId: "a/b"}))), connect.CodeInvalidArgument)
		require.Equal(t, "worker_id", badField(t, ce))
		q, err := owner.admin.GetQueue(ctx, connect.NewRequest(&jobbiev1.GetQueueRequest{Name: "emails"}))
		require.NoError(t, err)
		require.Zero(t, q.Msg.GetQueue().GetCounts().GetPending(), "a refused enqueue enqueued nothing (the queue was cleared)")
	})
}

// second2 is the error of a call's two results.
func second2[T any](_ T, err error) error { return err }

// grpc-go, the reference gRPC implementation, calls the same port without
// generated stubs: its status codes and error details are Connect's.
func TestGRPCGoClientAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ownerKey := readKey(t, filepath.Join(d.dir, "owner.key"))
	conn, err := grpc.NewClient(strings.TrimPrefix(d.grpc, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+ownerKey)

	var enq jobbiev1.EnqueueResponse
	require.NoError(t, conn.Invoke(ctx, jobbiev1connect.JobServiceEnqueueProcedure, &jobbiev1.EnqueueRequest{Queue: "emails"}, &enq))
	var got jobbiev1.GetJobResponse
	require.NoError(t, conn.Invoke(ctx, jobbiev1connect.JobServiceGetJobProcedure, &jobbiev1.GetJobRequest{Id: enq.GetJobId()}, &got))
	require.Equal(t, "emails", got.GetJob().GetQueue())

	err = conn.Invoke(ctx, jobbiev1connect.JobServiceGetJobProcedure, &jobbiev1.GetJobRequest{Id: "job_unknown"}, &got)
	require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
	err = conn.Invoke(ctx, jobbiev1connect.JobServiceEnqueueProcedure, &jobbiev1.EnqueueRequest{}, &enq)
	st := status.Convert(err)
	require.Equal(t, codes.InvalidArgument, st.Code(), "%v", err)
	var field string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			field = br.GetFieldViolations()[0].GetField()
		}
	}
	require.Equal(t, "queue", field)
	err = conn.Invoke(context.Background(), jobbiev1connect.JobServiceGetJobProcedure, &jobbiev1.GetJobRequest{Id: enq.GetJobId()}, &got)
	require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
}

// Search's held_reason and held_budget filters on jobbie dev, as the
// HTTP search's: the jobs each budget holds, and those of all budgets;
// a bad value is InvalidArgument naming the field.
func TestGRPCSearchHeldJobsAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	ownerKey := readKey(t, filepath.Join(d.dir, "owner.key"))
	owner := client.New(d.gateway, ownerKey)
	t.Cleanup(owner.CloseIdleConnections)
	jobs := dial(h2c(t), d.grpc, ownerKey, connect.WithGRPC()).jobs

	// Budgets a and b, each of its own queue, both spent: new jobs of
	// their queues are held.
	held := map[string][]string{}
	for _, b := range []string{"a", "b"} {
		queue := "llm." + b
		_, err := owner.CreateBudget(ctx, client.BudgetSpec{Name: b, Scope: wire.BudgetScopeQueue, Queue: queue, DailyTokens: 5, OnExceed: wire.BudgetHold})
		require.NoError(t, err)
		_, err = owner.Enqueue(ctx, client.EnqueueRequest{Queue: queue})
		require.NoError(t, err)
		j, err := owner.Fetch(ctx, client.FetchRequest{Queues: []string{queue}, WorkerID: "w1", Timeout: 10 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, j)
		require.NoError(t, owner.Ack(ctx, j.ID, nil, client.Lease(j.LeaseToken), client.WithUsage(&client.AIUsage{InputTokens: 10})))
		for range 2 {
			e, err := owner.Enqueue(ctx, client.EnqueueRequest{Queue: queue})
			require.NoError(t, err)
			require.Equal(t, wire.StateHeld, e.Status)
			held[b] = append(held[b], e.JobID)
		}
	}

	search := func(req *jobbiev1.SearchRequest) []string {
		t.Helper()
		req.Order = wire.OrderAsc
		res, err := jobs.Search(ctx, connect.NewRequest(req))
		require.NoError(t, err)
		var ids []string
		for _, j := range res.Msg.GetJobs() {
			require.Equal(t, wire.StateHeld, j.GetState())
			require.Equal(t, wire.HeldReasonBudget, j.GetHeldReason())
			require.Equal(t, j.GetQueue(), "llm."+j.GetHeldBudget())
			ids = append(ids, j.GetId())
		}
		return ids
	}
	require.Equal(t, held["a"], search(&jobbiev1.SearchRequest{HeldBudget: "a"}))
	require.Equal(t, held["b"], search(&jobbiev1.SearchRequest{HeldBudget: "b", State: []string{wire.StateHeld}}))
	require.Equal(t, append(held["a"], held["b"]...), search(&jobbiev1.SearchRequest{HeldReason: wire.HeldReasonBudget}))
	require.Empty(t, search(&jobbiev1.SearchRequest{HeldBudget: "a", Queue: "llm.b"}))
	require.Empty(t, search(&jobbiev1.SearchRequest{HeldBudget: "none"}))
	all, err := jobs.Search(ctx, connect.NewRequest(&jobbiev1.SearchRequest{}))
	require.NoError(t, err)
	require.Len(t, all.Msg.GetJobs(), 6, "without the filters: the budgets' jobs done too")

	ce := requireCode(t, second2(jobs.Search(ctx, connect.NewRequest(&jobbiev1.SearchRequest{HeldReason: "weather"}))), connect.CodeInvalidArgument)
	require.Equal(t, "held_reason", badField(t, ce))
}
