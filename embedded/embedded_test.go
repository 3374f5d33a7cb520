package embedded

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func open(t *testing.T, dir string) *Embedded {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := Open(ctx, Options{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return e
}

// work runs a worker on queue q until want jobs were handled, and returns
// their payloads' "n".
func work(t *testing.T, c *client.Client, q string, want int) []int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got []int
	done := make(chan struct{})
	w := client.NewWorker(c, client.WorkerConfig{Queues: []string{q}, Concurrency: 2, Transport: client.TransportHTTP,
		FetchTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)},
		func(_ context.Context, j *client.JobContext) (any, error) {
			var p struct{ N int }
			if err := j.Decode(&p); err != nil {
				return nil, err
			}
			mu.Lock()
			defer mu.Unlock()
			if got = append(got, p.N); len(got) == want {
				close(done)
			}
			return nil, nil
		})
	ran := make(chan error, 1)
	wctx, stop := context.WithCancel(ctx)
	go func() { ran <- w.Run(wctx) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("only %d of %d jobs were worked", len(got), want)
	}
	stop()
	require.NoError(t, <-ran)
	return got
}

// Jobs enqueued before Close are in the data directory at the next Open,
// and its worker works them, each once; a job worked and acknowledged
// stays completed across the restart.
func TestJobsOutliveARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()

	e := open(t, dir)
	c := e.Client()
	first, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: "q", Payload: map[string]int{"n": 0}})
	require.NoError(t, err)
	require.Equal(t, []int{0}, work(t, c, "q", 1))
	for n := 1; n <= 3; n++ {
		_, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: "q", Payload: map[string]int{"n": n}})
		require.NoError(t, err)
	}
	require.NoError(t, e.Close())
	require.NoError(t, e.Close(), "a second Close is a no-op")

	e = open(t, dir)
	defer e.Close()
	c = e.Client()
	require.ElementsMatch(t, []int{1, 2, 3}, work(t, c, "q", 3))
	j, err := c.GetJob(ctx, first.JobID)
	require.NoError(t, err)
	require.Equal(t, string(wire.StateCompleted), j.State)
}

// A client picks its namespace as it would on the hosted service; one
// namespace's jobs are not found from another.
func TestNamespacesAreApart(t *testing.T) {
	t.Parallel()
	e := open(t, t.TempDir())
	defer e.Close()
	ctx := context.Background()

	res, err := e.Client(client.WithNamespace("billing")).Enqueue(ctx, client.EnqueueRequest{Queue: "q", Payload: 1})
	require.NoError(t, err)
	_, err = e.Client().GetJob(ctx, res.JobID)
	require.True(t, client.IsNotFound(err), "the default namespace does not see billing's job: %v", err)
	j, err := e.Client().WithNamespace("billing").GetJob(ctx, res.JobID)
	require.NoError(t, err)
	require.Equal(t, "q", j.Queue)
}

// The node takes its namespace key and limits from the transport alone,
// as a shard takes them from its gateway: a client's own X-Jobbie-*
// headers do not reach it, and a malformed namespace is a 400 naming the
// header, with nothing stored.
func TestClientHeadersDoNotReachTheNode(t *testing.T) {
	t.Parallel()
	e := open(t, t.TempDir())
	defer e.Close()
	ctx := context.Background()

	other := tenancy.ShardNamespace("t_00000000000000000000000000", "default")
	sneaky := e.Client(client.WithHeader(wire.ShardNamespaceHeader, other), client.WithHeader(wire.QueueScopeHeader, "nothing"))
	res, err := sneaky.Enqueue(ctx, client.EnqueueRequest{Queue: "q", Payload: 1})
	require.NoError(t, err, "a queue scope of the client's own does not apply")
	j, err := e.Client().GetJob(ctx, res.JobID)
	require.NoError(t, err, "the job went to the embedded node's default namespace")
	require.Equal(t, "q", j.Queue)

	_, err = e.Client(client.WithNamespace("Not_A_Name")).Enqueue(ctx, client.EnqueueRequest{Queue: "q2", Payload: 1})
	var ae *client.Error
	require.True(t, errors.As(err, &ae), "%v", err)
	require.Equal(t, http.StatusBadRequest, ae.Status)
	require.Equal(t, wire.NamespaceHeader, ae.Field)
	qs, err := e.Client().ListQueues(ctx)
	require.NoError(t, err)
	for _, q := range qs {
		require.NotEqual(t, "q2", q.Name)
	}
}

// Open refuses options it cannot run with, naming them.
func TestOpenRefusesBadOptions(t *testing.T) {
	t.Parallel()
	_, err := Open(context.Background(), Options{})
	require.ErrorContains(t, err, "Options.Dir")
	_, err = Open(context.Background(), Options{Dir: t.TempDir(), Namespace: "No Spaces"})
	require.ErrorContains(t, err, "Options.Namespace")
	_, err = Open(context.Background(), Options{Dir: t.TempDir(), Namespaces: []string{"ok", "Not_OK"}})
	require.ErrorContains(t, err, "Options.Namespaces")
	// A listener that cannot be had stops the node it started (the
	// package's leak check sees to it) and frees the directory.
	dir := t.TempDir()
	_, err = Open(context.Background(), Options{Dir: dir, Listen: "127.0.0.1:99999", Logger: slog.New(slog.DiscardHandler)})
	require.ErrorContains(t, err, "Options.Listen")
	open(t, dir).Close()
}

// A data directory holds one node at a time: a second Open, in this
// process or another, is refused before it touches anything, and the
// first node goes on serving (its socket is still there).
func TestASecondOpenOfADirectoryIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := open(t, dir)
	defer e.Close()
	_, err := Open(context.Background(), Options{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	require.ErrorContains(t, err, "in use")
	e.transport.http.CloseIdleConnections() // the next call dials the socket again
	_, err = e.Client().Enqueue(context.Background(), client.EnqueueRequest{Queue: "q", Payload: 1})
	require.NoError(t, err)
}
