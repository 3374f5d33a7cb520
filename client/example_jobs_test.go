package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jobbie/jobbie/client"
)

// The examples that call a gateway are compiled with the tests but not
// run (they have no Output): they need a Jobbie to talk to, such as the
// one `jobbie dev` starts, with its owner key in JOBBIE_KEY.

// Enqueue a job, read it back, cancel it, and put it back to work.
func ExampleClient_Enqueue() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	res, err := c.Enqueue(ctx, client.EnqueueRequest{
		Queue:       "emails.send",
		Payload:     map[string]string{"to": "ada@example.com"},
		Priority:    client.PriorityHigh,
		ScheduledAt: time.Now().Add(time.Hour), // not before an hour from now
		Tags:        map[string]string{"customer": "c_42"},
	})
	if err != nil {
		log.Fatal(err)
	}
	job, err := c.GetJob(ctx, res.JobID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(job.State) // scheduled

	outcome, err := c.CancelJob(ctx, res.JobID) // client.CancelDone: it was waiting
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(outcome)

	again, err := c.RetryJob(ctx, res.JobID) // cancelled → pending, attempts reset
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(again.Status)
}

// Enqueue jobs as one batch: when all of them have finished, the server
// enqueues the callback job.
func ExampleClient_EnqueueBatch() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	res, err := c.EnqueueBatch(ctx, client.BatchRequest{
		Jobs: []client.EnqueueRequest{
			{Queue: "thumbnails", Payload: map[string]string{"image": "a.png"}},
			{Queue: "thumbnails", Payload: map[string]string{"image": "b.png"}},
		},
		Batch: &client.BatchOptions{CallbackQueue: "albums.ready", CallbackPayload: map[string]string{"album": "summer"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	b, err := c.GetBatch(ctx, res.BatchID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d of %d pending\n", b.Pending, b.Total)
}

// Run jobs one after another: each step is enqueued when the one before
// it completes, with that step's result as previous_result.
func ExampleClient_GetChain() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	first, err := c.Enqueue(ctx, client.EnqueueRequest{
		Queue:   "orders.charge",
		Payload: map[string]string{"order": "o_1"},
		Chain: &client.Chain{
			Steps: []client.ChainStep{
				{Queue: "orders.charge"}, // the enqueued job itself
				{Queue: "orders.ship", Payload: map[string]string{"carrier": "ups"}},
				{Queue: "orders.notify"},
			},
			OnFailure: &client.ChainStep{Queue: "orders.refund"},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	chain, err := c.GetChain(ctx, first.JobID)
	if err != nil {
		log.Fatal(err)
	}
	for i, step := range chain.Steps {
		fmt.Println(i, step.Queue)
	}
}

// Hold a job until others have completed; if one of them fails for
// good, the held job is cancelled (OnDependencyFailure "run" runs it
// anyway).
func ExampleClient_Enqueue_dependencies() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	a, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: "reports.extract", Payload: "eu"})
	if err != nil {
		log.Fatal(err)
	}
	b, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: "reports.extract", Payload: "us"})
	if err != nil {
		log.Fatal(err)
	}
	merged, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: "reports.merge", DependsOn: []string{a.JobID, b.JobID}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(merged.Status) // held until both have completed
}
