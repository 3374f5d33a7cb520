package console

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// TestConsoleScale fills a namespace with 1,000 queues and
// JOBBIE_CONSOLE_SCALE jobs (make console-scale: 1,000,000), some dead
// with errors, a schedule and a batch, then loads every screen afresh and
// holds each to under a second from navigation to its data on screen: the
// API does the work, the browser never loads everything. It is skipped
// unless the variable is set (it takes minutes).
func TestConsoleScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("JOBBIE_CONSOLE_SCALE"))
	if n <= 0 {
		t.Skip("set JOBBIE_CONSOLE_SCALE to a number of jobs (make console-scale uses 1000000)")
	}
	const queues, dead = 1000, 200
	tn := newTenant(t)
	start := time.Now()
	seedScale(t, tn, n, queues)
	t.Logf("enqueued %d jobs into %d queues in %s", n, queues, time.Since(start).Round(time.Millisecond))

	// Dead jobs with errors in q0000, a schedule and a batch.
	zero := 0
	reqs := make([]client.EnqueueRequest, dead)
	for i := range reqs {
		reqs[i] = client.EnqueueRequest{Queue: "dead-letters", Payload: map[string]int{"i": i}, MaxRetries: &zero}
	}
	_, err := tn.owner.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: reqs})
	require.NoError(t, err)
	w := tn.owner.ForWorker("scale-worker")
	var deadID string
	for failed := 0; failed < dead; {
		jobs, err := w.FetchBatch(ctx(t), client.FetchBatchRequest{Queues: []string{"dead-letters"}, Max: 100, Timeout: 5 * time.Second})
		require.NoError(t, err)
		require.NotEmpty(t, jobs)
		for _, j := range jobs {
			_, err := w.Fail(ctx(t), j.ID, "SMTP timeout talking to mx"+strconv.Itoa(failed%7), "")
			require.NoError(t, err)
			deadID = j.ID
			failed++
		}
	}
	batch, err := tn.owner.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: reqs[:10], Batch: &client.BatchOptions{CallbackQueue: "batch-done"}})
	require.NoError(t, err)
	_, err = tn.owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "nightly", Queue: "q0001", Cron: "0 3 * * *", Timezone: "Europe/Paris"})
	require.NoError(t, err)

	p := signedIn(t, tn.ownerKey, "/console/", "dashboard")
	screens := []struct{ path, name string }{
		{"/console/", "dashboard"},
		{"/console/queues", "queues"},
		{"/console/queues/q0500", "queue"},
		{"/console/queues/q0500?state=pending", "queue"},
		{"/console/dead", "dead"},
		{"/console/jobs/" + deadID, "job"},
		{"/console/schedules", "schedules"},
		{"/console/batches", "batches"},
		{"/console/batches/" + batch.BatchID, "batch"},
		{"/console/workers", "workers"},
		{"/console/events", "events"},
		{"/console/namespaces", "namespaces"},
		{"/console/keys", "keys"},
	}
	for _, s := range screens {
		p.goTo(s.path)
		p.waitScreen(s.name)
		ms := p.readyAt(s.name)
		t.Logf("%-45s ready in %4.0f ms", s.path, ms)
		require.Less(t, ms, 1000.0, "%s took %.0f ms with %d jobs", s.path, ms, n)
		p.shot("scale-" + s.name)
	}
}

// seedScale enqueues n small jobs round-robin over queues q0000…, in
// batches of 1,000 from 8 producers.
func seedScale(t *testing.T, tn *tenant, n, queues int) {
	t.Helper()
	const batch, producers = 1000, 8
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	next := make(chan int, producers)
	go func() {
		for off := 0; off < n; off += batch {
			next <- off
		}
		close(next)
	}()
	for range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for off := range next {
				reqs := make([]client.EnqueueRequest, 0, batch)
				for i := off; i < min(off+batch, n); i++ {
					reqs = append(reqs, client.EnqueueRequest{Queue: fmt.Sprintf("q%04d", i%queues),
						Payload: map[string]any{"user": fmt.Sprintf("user%d@example.com", i), "n": i}})
				}
				if _, err := tn.owner.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: reqs}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
