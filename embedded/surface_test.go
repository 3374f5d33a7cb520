package embedded

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// The data plane a shard serves is all there in process: batches,
// search, queue controls, the event stream. What control serves
// (namespaces, keys, usage …) is a 404, as the docs say.
func TestTheShardsAPIIsServed(t *testing.T) {
	t.Parallel()
	e := open(t, t.TempDir())
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := e.Client()

	events, err := c.Events(ctx, "")
	require.NoError(t, err)
	_, err = c.EnqueueBatch(ctx, client.BatchRequest{Jobs: []client.EnqueueRequest{
		{Queue: "reports", Payload: map[string]int{"amount": 50}},
		{Queue: "reports", Payload: map[string]int{"amount": 150}},
	}})
	require.NoError(t, err)
	page, err := c.Search(ctx, client.SearchRequest{SearchFilter: wire.SearchFilter{Queue: "reports", PayloadJQ: ".amount > 100"}})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	q, err := c.PauseQueue(ctx, "reports")
	require.NoError(t, err)
	require.True(t, q.Paused)
	select {
	case ev, ok := <-events:
		require.True(t, ok, "the event stream ended")
		require.Equal(t, "reports", ev.Queue)
	case <-ctx.Done():
		t.Fatal("no event came")
	}
	cancel() // ends the stream before the node closes

	_, err = e.Client().ListKeys(context.Background())
	require.True(t, client.IsNotFound(err), "keys are control's: %v", err)
	_, err = e.Client().ListNamespaces(context.Background())
	require.True(t, client.IsNotFound(err), "namespaces are control's: %v", err)
}
