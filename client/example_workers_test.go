package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/jobbie/jobbie/client"
)

// errNoSuchAccount is an error no retry can fix.
var errNoSuchAccount = errors.New("no such account")

// A worker runtime: eight jobs at a time, over the gateway's worker
// stream when it serves one (else HTTP), until SIGTERM, when it finishes
// what it runs. A handler's error is retried by the job's policy; one
// wrapped in Permanent makes the job dead at once.
func ExampleNewWorker() {
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))
	w := client.NewWorker(c, client.WorkerConfig{Queues: []string{"emails.send"}, Concurrency: 8},
		func(ctx context.Context, job *client.JobContext) (any, error) {
			var msg struct{ To, Account string }
			if err := job.Decode(&msg); err != nil {
				return nil, client.Permanent(fmt.Errorf("payload: %w", err))
			}
			if msg.Account == "" {
				return nil, client.Permanent(errNoSuchAccount)
			}
			job.Progress(1, 2, "rendered")
			// … send it, watching ctx: it ends when the job is cancelled …
			return map[string]string{"sent_to": msg.To}, nil
		})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := w.Run(ctx); err != nil { // nil after a graceful shutdown
		log.Fatal(err)
	}
	fmt.Println("worked over", w.Transport())
}

// Permanent marks an error no retry can fix; it still wraps its cause.
func ExamplePermanent() {
	err := fmt.Errorf("charge order o_1: %w", client.Permanent(errNoSuchAccount))
	fmt.Println(err)
	fmt.Println(client.IsPermanent(err), errors.Is(err, errNoSuchAccount))
	fmt.Println(client.IsPermanent(errNoSuchAccount))
	// Output:
	// charge order o_1: no such account
	// true true
	// false
}

// List the namespace's workers and ask one to stop taking jobs.
func ExampleClient_DrainWorker() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	workers, err := c.ListWorkers(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range workers {
		fmt.Println(w.ID, w.Hostname, w.Queues)
	}
	if len(workers) > 0 {
		d, err := c.DrainWorker(ctx, workers[0].ID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(d.WorkerID, "draining:", d.Draining)
	}
}
