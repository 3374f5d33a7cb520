package gateway

import (
	"context"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/proto/gen/jobbie/v1/jobbiev1connect"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A shard's word that a worker is drained (its fetch answered with
// Jobbie-Worker-Drain) reaches the worker's stream through the route
// table as a Drain marked as the worker's own; a stream holding no job
// then ends FailedPrecondition.
func TestGRPCWorkerStreamGetsTheWorkersDrain(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.GRPCAddr = "127.0.0.1:0" })
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/fetch/batch" {
			writeJSON(w, http.StatusOK, map[string]any{})
			return
		}
		w.Header().Set(wire.WorkerDrainHeader, "true")
		writeJSON(w, http.StatusOK, wire.FetchBatchResponse{Jobs: []wire.FetchedJob{}})
	})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a frame that never comes fails the test
	defer cancel()
	bidi := jobbiev1connect.NewWorkerServiceClient(&http.Client{Transport: tr}, "http://"+b.gw.GRPCAddr(), connect.WithGRPC()).Work(ctx)
	defer func() { _ = bidi.CloseResponse() }()
	bidi.RequestHeader().Set("Authorization", "Bearer "+b.key(t, tenancy.RoleWorker, "default"))
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}}, Credit: &jobbiev1.Credit{N: 4}}))
	f, err := bidi.Receive()
	require.NoError(t, err)
	require.True(t, f.GetDrain().GetWorker(), "the worker's drain: %v", f)
	_, err = bidi.Receive()
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "%v", err)
	require.Equal(t, "/api/v1/fetch/batch", b.shard.last(t).URI, "one fetch, and no other")
}
