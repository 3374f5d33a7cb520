package client_test

import (
	"context"
	"log"
	"os"

	"github.com/jobbie/jobbie/client"
)

// Enqueue inside a trace: every job enqueued with ctx that names no
// trace context of its own joins the trace ctx carries; a handler's ctx
// carries its job's, so its follow-ups continue that trace.
func ExampleWithTraceParent() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	ctx = client.WithTraceParent(ctx, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "")
	if _, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: "orders.place", Payload: map[string]int{"id": 7}}); err != nil {
		log.Fatal(err)
	}

	w := client.NewWorker(c, client.WorkerConfig{Queues: []string{"orders.place"}},
		func(ctx context.Context, j *client.JobContext) (any, error) {
			// ctx carries j.TraceParent: the receipt job is in the order's trace
			_, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: "orders.receipt", Payload: j.Payload})
			return nil, err
		})
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
