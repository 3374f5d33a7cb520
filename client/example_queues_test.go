package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jobbie/jobbie/client"
)

// Declare a queue's whole configuration (PutQueue creates it or replaces
// what it had), pause it while a downstream is down, and read its
// counts.
func ExampleClient_PutQueue() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	one := int64(1)
	retries := 5
	_, err := c.PutQueue(ctx, "payments.capture", client.QueueSpec{
		Description: "card captures, one at a time",
		Concurrency: &one,
		Throttle:    &client.QueueThrottleSpec{Rate: 100, Period: time.Minute},
		Defaults: client.QueueDefaultsSpec{MaxRetries: &retries, RetryBackoff: client.BackoffExponential,
			RetryBaseDelay: 10 * time.Second, LeaseDuration: 2 * time.Minute},
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.PauseQueue(ctx, "payments.capture"); err != nil { // enqueues go on; fetches get nothing
		log.Fatal(err)
	}
	q, err := c.ResumeQueue(ctx, "payments.capture")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(q.Paused, q.Counts.Pending, q.Counts.Dead)
}

// Enqueue a job on a cron: weekdays at 09:00 in Paris.
func ExampleClient_CreateSchedule() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	s, err := c.CreateSchedule(ctx, client.ScheduleRequest{
		Name:     "daily-digest",
		Queue:    "emails.digest",
		Cron:     "0 9 * * 1-5",
		Timezone: "Europe/Paris",
		Payload:  map[string]string{"list": "subscribers"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.ID, s.NextRun)

	run, err := c.RunSchedule(ctx, s.ID) // one run now, by hand
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.JobID)
}

// Read the last hour of a queue's history, minute by minute, and what an
// autoscaler would size its workers by now.
func ExampleClient_QueueStats() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	now := time.Now()
	st, err := c.QueueStats(ctx, "emails.send", client.StatsQuery{From: now.Add(-time.Hour), To: now, Step: client.StatsStepMinute})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range st.Buckets {
		fmt.Println(b.Start.Format(time.RFC3339), b.Enqueued, b.Completed, b.Failed, b.Dead, b.Pending, b.ProcessingTime.P95)
	}

	sc, err := c.QueueScale(ctx, "emails.send")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sc.Backlog, sc.InFlight, sc.Demand, sc.OldestPendingAge)
}
