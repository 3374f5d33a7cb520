package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jobbie/jobbie/client"
)

// The example's queues and its schedule.
const (
	emailQueue    = "example.emails"
	reminderQueue = "example.reminders"
	tickQueue     = "example.ticks"
	tickSchedule  = "example-tick"
)

// App is the program's own code: it knows a *client.Client and nothing of
// where Jobbie runs.
type App struct {
	Client *client.Client
	Log    *slog.Logger
}

// Email is an email job's payload.
type Email struct {
	N  int    `json:"n"`
	To string `json:"to"`
}

// Produce enqueues n emails, a reminder due in a second, and a schedule
// that enqueues a tick every second (kept if it exists already).
func (a App) Produce(ctx context.Context, n int) error {
	for i := range n {
		req := client.EnqueueRequest{Queue: emailQueue, Payload: Email{N: i, To: fmt.Sprintf("user%d@example.com", i)}}
		if _, err := a.Client.Enqueue(ctx, req); err != nil {
			return fmt.Errorf("enqueue email %d: %w", i, err)
		}
	}
	reminder := client.EnqueueRequest{Queue: reminderQueue, Payload: map[string]string{"about": "invoice"},
		ScheduledAt: time.Now().Add(time.Second)}
	if _, err := a.Client.Enqueue(ctx, reminder); err != nil {
		return fmt.Errorf("enqueue the reminder: %w", err)
	}
	_, err := a.Client.CreateSchedule(ctx, client.ScheduleRequest{Name: tickSchedule, Queue: tickQueue, Cron: "@every 1s", Payload: map[string]any{}})
	if err != nil && !client.IsConflict(err) {
		return fmt.Errorf("create the schedule: %w", err)
	}
	return nil
}

// Unschedule deletes the tick schedule.
func (a App) Unschedule(ctx context.Context) error {
	return a.Client.DeleteSchedule(ctx, tickSchedule)
}

// Seen counts the jobs worked, by kind; Emails lists the emails' numbers.
type Seen struct {
	Emails, Reminders, Ticks int
	EmailNs                  []int
}

func (s Seen) covers(want Seen) bool {
	return s.Emails >= want.Emails && s.Reminders >= want.Reminders && s.Ticks >= want.Ticks
}

// Work runs a worker on the three queues until it has worked at least
// want of each kind (or ctx ends), then stops it and says what it worked.
func (a App) Work(ctx context.Context, want Seen) (Seen, error) {
	var mu sync.Mutex
	var seen Seen
	enough, once := make(chan struct{}), sync.Once{}
	handle := func(_ context.Context, j *client.JobContext) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		switch j.Queue {
		case emailQueue:
			var e Email
			if err := j.Decode(&e); err != nil {
				return nil, err
			}
			seen.Emails++
			seen.EmailNs = append(seen.EmailNs, e.N)
		case reminderQueue:
			seen.Reminders++
		case tickQueue:
			seen.Ticks++
		}
		if seen.covers(want) {
			once.Do(func() { close(enough) })
		}
		return map[string]bool{"sent": true}, nil
	}
	w := client.NewWorker(a.Client, client.WorkerConfig{Queues: []string{emailQueue, reminderQueue, tickQueue},
		Concurrency: 4, FetchTimeout: time.Second, Logger: a.Log}, handle)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- w.Run(wctx) }()
	var err error
	select {
	case <-enough:
	case err = <-ran:
		ran = nil
	case <-ctx.Done():
		err = ctx.Err()
	}
	stop()
	if ran != nil {
		if runErr := <-ran; err == nil {
			err = runErr
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return seen, err
}
