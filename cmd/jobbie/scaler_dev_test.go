package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/proto/gen/externalscaler"
	"github.com/jobbie/jobbie/proto/gen/externalscaler/externalscalerconnect"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// kedaClient calls the gateway's ExternalScaler as KEDA does: grpc-go,
// whose generated client is conn.Invoke and conn.NewStream on these
// paths and messages.
type kedaClient struct{ conn *grpc.ClientConn }

func dialKEDA(t *testing.T, grpcURL string) kedaClient {
	t.Helper()
	conn, err := grpc.NewClient(strings.TrimPrefix(grpcURL, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return kedaClient{conn}
}

// trigger is a ScaledObject's reference with its trigger's metadata, as
// KEDA sends it (scalerAddress included).
func trigger(md map[string]string) *externalscaler.ScaledObjectRef {
	all := map[string]string{"scalerAddress": "jobbie-gateway.jobbie:9090"}
	for k, v := range md {
		all[k] = v
	}
	return &externalscaler.ScaledObjectRef{Name: "email-workers", Namespace: "apps", ScalerMetadata: all}
}

func (k kedaClient) isActive(ctx context.Context, md map[string]string) (bool, error) {
	var out externalscaler.IsActiveResponse
	err := k.conn.Invoke(ctx, externalscalerconnect.ExternalScalerIsActiveProcedure, trigger(md), &out)
	return out.GetResult(), err
}

func (k kedaClient) spec(ctx context.Context, md map[string]string) (*externalscaler.GetMetricSpecResponse, error) {
	var out externalscaler.GetMetricSpecResponse
	err := k.conn.Invoke(ctx, externalscalerconnect.ExternalScalerGetMetricSpecProcedure, trigger(md), &out)
	return &out, err
}

// metric is GetMetrics's one value, asked as KEDA asks (the metric's
// name without KEDA's "s0-").
func (k kedaClient) metric(ctx context.Context, md map[string]string, name string) (int64, error) {
	var out externalscaler.GetMetricsResponse
	err := k.conn.Invoke(ctx, externalscalerconnect.ExternalScalerGetMetricsProcedure,
		&externalscaler.GetMetricsRequest{ScaledObjectRef: trigger(md), MetricName: name}, &out)
	if err != nil {
		return 0, err
	}
	if len(out.GetMetricValues()) != 1 || out.GetMetricValues()[0].GetMetricName() != name {
		return 0, errors.New("not one value of the metric asked for")
	}
	v := out.GetMetricValues()[0]
	if float64(v.GetMetricValue()) != v.GetMetricValueFloat() {
		return 0, errors.New("metricValue and metricValueFloat differ")
	}
	return v.GetMetricValue(), nil
}

// stream opens StreamIsActive; recv is its next message.
func (k kedaClient) stream(ctx context.Context, md map[string]string) (grpc.ClientStream, error) {
	desc := &grpc.StreamDesc{StreamName: "StreamIsActive", ServerStreams: true}
	s, err := k.conn.NewStream(ctx, desc, externalscalerconnect.ExternalScalerStreamIsActiveProcedure)
	if err != nil {
		return nil, err
	}
	if err := s.SendMsg(trigger(md)); err != nil {
		return nil, err
	}
	return s, s.CloseSend()
}

func recvActive(s grpc.ClientStream) (bool, error) {
	var m externalscaler.IsActiveResponse
	err := s.RecvMsg(&m)
	return m.GetResult(), err
}

// grpcField is the field an InvalidArgument's BadRequest detail names.
func grpcField(t *testing.T, err error) string {
	t.Helper()
	st := status.Convert(err)
	require.Equal(t, codes.InvalidArgument, st.Code(), "%v", err)
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			return br.GetFieldViolations()[0].GetField()
		}
	}
	t.Fatalf("no BadRequest detail in %v", err)
	return ""
}

// KEDA's external scaler on jobbie dev's gRPC port, called with grpc-go as
// KEDA calls it: the metric is the queue's demand through enqueue, fetch
// and ack; a job in flight keeps the queue active; StreamIsActive sends
// each flip; and every refusal is GET /api/v1/queues/{name}/scale's.
func TestKEDAScalerAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0", "--grpc-scaler-poll", "100ms")
	ctx := context.Background()
	owner := client.New(d.gateway, readKey(t, filepath.Join(d.dir, "owner.key")))
	t.Cleanup(owner.CloseIdleConnections)
	// The workers' own key, as KEDA reads it from their container's
	// environment (apiKeyFromEnv).
	wk, err := owner.CreateKey(ctx, client.CreateKeyRequest{Name: "email-workers", Role: tenancy.RoleWorker, Namespaces: []string{"default"}})
	require.NoError(t, err)
	worker := client.New(d.gateway, wk.Token)
	t.Cleanup(worker.CloseIdleConnections)
	keda := dialKEDA(t, d.grpc)
	md := map[string]string{"queue": "emails.send", "apiKeyFromEnv": wk.Token, "targetDemandPerReplica": "2"}

	for range 3 {
		_, err := owner.Enqueue(ctx, client.EnqueueRequest{Queue: "emails.send"})
		require.NoError(t, err)
	}
	spec, err := keda.spec(ctx, md)
	require.NoError(t, err)
	require.Len(t, spec.GetMetricSpecs(), 1)
	name := spec.GetMetricSpecs()[0].GetMetricName()
	require.Equal(t, "jobbie-emails-send", name)
	require.Equal(t, 2.0, spec.GetMetricSpecs()[0].GetTargetSizeFloat())
	require.Equal(t, int64(2), spec.GetMetricSpecs()[0].GetTargetSize())

	// demand is what the scale route reads: read both until they agree
	// with want (the node applies what it acknowledged before it answers,
	// so this is at once; the bound is for a loaded machine).
	demand := func(want int64, active bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got, err := keda.metric(ctx, md, name)
			require.NoError(t, err)
			on, err := keda.isActive(ctx, md)
			require.NoError(t, err)
			if got == want && on == active {
				return
			}
			require.False(t, time.Now().After(deadline), "demand %d active %v, want %d %v", got, on, want, active)
			time.Sleep(20 * time.Millisecond)
		}
	}
	demand(3, true)

	fetch := func() *client.Job {
		t.Helper()
		j, err := worker.Fetch(ctx, client.FetchRequest{Queues: []string{"emails.send"}, WorkerID: "w1", Timeout: 10 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, j)
		return j
	}
	a := fetch()
	demand(3, true) // two pending, one in flight
	require.NoError(t, worker.Ack(ctx, a.ID, nil, client.Lease(a.LeaseToken)))
	demand(2, true)
	b, c := fetch(), fetch()
	demand(2, true) // none pending, two in flight: never zero
	high := map[string]string{"queue": "emails.send", "apiKeyFromEnv": wk.Token, "activationDemand": "10"}
	on, err := keda.isActive(ctx, high)
	require.NoError(t, err)
	require.True(t, on, "in-flight jobs keep the queue active above any threshold")
	require.NoError(t, worker.Ack(ctx, b.ID, nil, client.Lease(b.LeaseToken)))
	require.NoError(t, worker.Ack(ctx, c.ID, nil, client.Lease(c.LeaseToken)))
	demand(0, false)

	t.Run("StreamIsActive", func(t *testing.T) {
		sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		s, err := keda.stream(sctx, md)
		require.NoError(t, err)
		on, err := recvActive(s)
		require.NoError(t, err)
		require.False(t, on, "the state when the stream opens")
		_, err = owner.Enqueue(ctx, client.EnqueueRequest{Queue: "emails.send"})
		require.NoError(t, err)
		on, err = recvActive(s)
		require.NoError(t, err)
		require.True(t, on, "a job enqueued flips it")
		j := fetch()
		require.NoError(t, worker.Ack(ctx, j.ID, nil, client.Lease(j.LeaseToken)))
		on, err = recvActive(s)
		require.NoError(t, err)
		require.False(t, on, "the job done flips it back")
	})

	t.Run("Refusals", func(t *testing.T) {
		// No key: Unauthenticated, as the route's 401.
		_, err := keda.isActive(ctx, map[string]string{"queue": "emails.send"})
		require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
		// The authorization header instead of the metadata.
		hctx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+wk.Token)
		_, err = keda.isActive(hctx, map[string]string{"queue": "emails.send"})
		require.NoError(t, err)

		// A role scoped to reports.*: reports.daily is read; emails.send
		// is the scale route's 403, PermissionDenied.
		_, err = owner.CreateRole(ctx, client.Role{Name: "reports-scaler", Permissions: []client.Permission{
			{Actions: []string{string(wire.ActQueueRead)}, Namespaces: []string{"*"}, Queues: []string{"reports.*"}}}})
		require.NoError(t, err)
		rk, err := owner.CreateKey(ctx, client.CreateKeyRequest{Name: "reports-scaler", Role: wire.RoleName("reports-scaler"), Namespaces: []string{"default"}})
		require.NoError(t, err)
		_, err = owner.Enqueue(ctx, client.EnqueueRequest{Queue: "reports.daily"})
		require.NoError(t, err)
		on, err := keda.isActive(ctx, map[string]string{"queue": "reports.daily", "apiKey": rk.Token})
		require.NoError(t, err)
		require.True(t, on)
		httpStatus := scaleStatus(t, d.gateway, rk.Token, "", "emails.send")
		require.Equal(t, http.StatusForbidden, httpStatus, "the scope keeps emails.send out")
		_, err = keda.isActive(ctx, map[string]string{"queue": "emails.send", "apiKey": rk.Token})
		require.Equal(t, grpcCode(httpStatus), status.Code(err), "%v", err)
		_, err = keda.spec(ctx, map[string]string{"queue": "emails.send", "apiKey": rk.Token})
		require.Equal(t, grpcCode(httpStatus), status.Code(err), "%v", err)

		// A key without queue.read (billing): PermissionDenied.
		bk, err := owner.CreateKey(ctx, client.CreateKeyRequest{Name: "billing", Role: tenancy.RoleBilling, Namespaces: []string{tenancy.AllNamespaces}})
		require.NoError(t, err)
		_, err = keda.isActive(ctx, map[string]string{"queue": "emails.send", "apiKey": bk.Token})
		require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)

		// Another tenant: our queue is NotFound in its namespace, and our
		// namespace is refused as over HTTP; the stream ends so too.
		_, err = owner.CreateNamespace(ctx, "prod")
		require.NoError(t, err)
		_, err = owner.WithNamespace("prod").Enqueue(ctx, client.EnqueueRequest{Queue: "emails.send"})
		require.NoError(t, err)
		on, err = keda.isActive(ctx, map[string]string{"queue": "emails.send", "namespace": "prod", "apiKey": readKey(t, filepath.Join(d.dir, "owner.key"))})
		require.NoError(t, err)
		require.True(t, on, "the namespace of the metadata is read")
		var ct wire.CreatedTenant
		require.NoError(t, json.Unmarshal([]byte(d.operator(t, "", "tenants", "create", "other", "-o", "json")), &ct))
		other := map[string]string{"queue": "emails.send", "apiKey": ct.OwnerKey}
		_, err = keda.isActive(ctx, other)
		require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
		_, err = keda.metric(ctx, other, "jobbie-emails-send")
		require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
		s, err := keda.stream(ctx, other)
		require.NoError(t, err)
		_, err = recvActive(s)
		require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
		theirs := map[string]string{"queue": "emails.send", "namespace": "prod", "apiKey": ct.OwnerKey}
		httpStatus = scaleStatus(t, d.gateway, ct.OwnerKey, "prod", "emails.send")
		require.Equal(t, http.StatusNotFound, httpStatus, "another tenant's namespace is not found over HTTP")
		_, err = keda.isActive(ctx, theirs)
		require.Equal(t, codes.NotFound, status.Code(err), "%v", err)

		// Bad metadata: InvalidArgument naming the key.
		for _, tc := range []struct {
			md    map[string]string
			field string
		}{
			{map[string]string{"apiKey": wk.Token}, "queue"},
			{map[string]string{"queue": "-emails", "apiKey": wk.Token}, "queue"}, // refused by the route, which names it so
			{map[string]string{"queue": "emails.send", "apiKey": wk.Token, "targetDemandPerReplica": "-2"}, "targetDemandPerReplica"},
			{map[string]string{"queue": "emails.send", "apiKey": wk.Token, "activationDemand": "many"}, "activationDemand"},
			{map[string]string{"queue": "emails.send", "apiKey": wk.Token, "targetPendingPerReplica": "2"}, "targetPendingPerReplica"},
		} {
			_, err := keda.isActive(ctx, tc.md)
			require.Equal(t, tc.field, grpcField(t, err), "%v", tc.md)
		}
		_, err = keda.metric(ctx, md, "jobbie-emails-other")
		require.Equal(t, "metricName", grpcField(t, err))

		// StreamMetricSpec, which a recent KEDA asks for, is not served:
		// Unimplemented, which KEDA takes for "not offered".
		s, err = keda.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/externalscaler.ExternalScaler/StreamMetricSpec")
		require.NoError(t, err)
		require.NoError(t, s.SendMsg(trigger(md)))
		require.NoError(t, s.CloseSend())
		err = s.RecvMsg(new(externalscaler.GetMetricSpecResponse))
		require.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)
	})
}

// A paused queue's pending jobs are no demand, on the scale route and so
// for KEDA: workers started for it would get nothing. Its jobs in flight
// still are, so the last worker is not scaled away mid-job; resuming
// brings the backlog back, and a draining queue (paused) drops it too.
func TestKEDAScalerPausedQueue(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0", "--grpc-scaler-poll", "100ms")
	ctx := context.Background()
	owner := client.New(d.gateway, readKey(t, filepath.Join(d.dir, "owner.key")))
	t.Cleanup(owner.CloseIdleConnections)
	keda := dialKEDA(t, d.grpc)
	const queue = "emails.send"
	md := map[string]string{"queue": queue, "apiKey": readKey(t, filepath.Join(d.dir, "owner.key"))}
	for range 3 {
		_, err := owner.Enqueue(ctx, client.EnqueueRequest{Queue: queue})
		require.NoError(t, err)
	}
	held, err := owner.Fetch(ctx, client.FetchRequest{Queues: []string{queue}, WorkerID: "w1", Timeout: 10 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, held)

	scale := func(backlog, inFlight, demand int64, paused, active bool) {
		t.Helper()
		want := wire.QueueScale{Queue: queue, Backlog: backlog, InFlight: inFlight, Demand: demand, Paused: paused}
		if paused && backlog > 0 {
			want.LimitedBy = wire.ScaleLimitedPaused
		}
		requireScale(t, owner, keda, md, want, active)
	}
	scale(2, 1, 3, false, true)

	_, err = owner.PauseQueue(ctx, queue)
	require.NoError(t, err)
	scale(2, 1, 1, true, true) // the job in flight alone
	high := map[string]string{"queue": queue, "apiKey": md["apiKey"], "activationDemand": "10"}
	on, err := keda.isActive(ctx, high)
	require.NoError(t, err)
	require.True(t, on, "a job in flight keeps a paused queue active above any threshold")

	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	s, err := keda.stream(sctx, md)
	require.NoError(t, err)
	on, err = recvActive(s)
	require.NoError(t, err)
	require.True(t, on, "the state when the stream opens: a job in flight")
	require.NoError(t, owner.Ack(ctx, held.ID, nil, client.Lease(held.LeaseToken)))
	on, err = recvActive(s)
	require.NoError(t, err)
	require.False(t, on, "the last job in flight done: two pending in a paused queue are no demand")
	scale(2, 0, 0, true, false)

	_, err = owner.ResumeQueue(ctx, queue)
	require.NoError(t, err)
	on, err = recvActive(s)
	require.NoError(t, err)
	require.True(t, on, "resumed, its backlog is demand again")
	scale(2, 0, 2, false, true)

	_, err = owner.DrainQueue(ctx, queue)
	require.NoError(t, err)
	scale(2, 0, 0, true, false)
}

// scaleStatus is the HTTP status of GET /api/v1/queues/{queue}/scale
// with key, in namespace ns ("" for the key's default).
func scaleStatus(t *testing.T, gateway, key, ns, queue string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, gateway+"/api/v1/queues/"+queue+"/scale", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	if ns != "" {
		req.Header.Set(wire.NamespaceHeader, ns)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.StatusCode
}

// grpcCode is the gRPC code docs/api/grpc.md gives an HTTP status.
func grpcCode(httpStatus int) codes.Code {
	switch httpStatus {
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	}
	return codes.Unknown
}
