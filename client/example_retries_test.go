package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jobbie/jobbie/client"
)

// Creating calls are safe to send again: each carries an Idempotency-Key,
// and a repeat within 24 h gets the first answer. The client retries
// them itself; a key of the caller's own (an order id) also covers a
// retry by another process, after a crash.
func ExampleWithIdempotencyKey() {
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	ctx := client.WithIdempotencyKey(context.Background(), "order-o_1-confirmation")
	first, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: "emails.send", Payload: "o_1"})
	if err != nil {
		log.Fatal(err)
	}
	again, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: "emails.send", Payload: "o_1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first.JobID == again.JobID) // true: one job
}

// How the client retries a 429, a 502/503/504 or a network error: the
// default policy, and a tighter one for a latency-sensitive caller.
func ExampleRetryPolicy() {
	p := client.DefaultRetryPolicy()
	fmt.Println(p.MaxAttempts, p.MaxElapsed, p.MinBackoff, p.MaxBackoff, p.MaxRetryAfter)

	p.MaxAttempts, p.MaxElapsed = 3, 2*time.Second
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"), client.WithRetryPolicy(p))
	_ = c
	// Output:
	// 5 30s 100ms 5s 30s
}
