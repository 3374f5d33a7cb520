// Command poisonworker is a worker that never finishes a job: it prints
// "started <job id> <attempt>" and waits to be killed, as a worker that a
// poison job crashes would. The e2e tests build and run it.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jobbie/jobbie/client"
)

func main() {
	c := client.New(os.Getenv("JOBBIE_URL"), os.Getenv("JOBBIE_KEY"))
	w := client.NewWorker(c, client.WorkerConfig{Queues: []string{os.Getenv("JOBBIE_QUEUE")}, Concurrency: 1,
		WorkerID: os.Getenv("JOBBIE_WORKER_ID"), LeaseDuration: time.Second},
		func(ctx context.Context, j *client.JobContext) (any, error) {
			fmt.Printf("started %s %d\n", j.ID, j.Attempt)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	if err := w.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "poisonworker:", err)
		os.Exit(1)
	}
}
