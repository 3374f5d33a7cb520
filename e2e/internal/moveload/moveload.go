// Package moveload drives one namespace through the gateway the way a
// customer's producers and workers would (with the client package) while
// the namespace moves between shards, and keeps the books that show
// whether anything was lost, done twice, or refused without the client
// being told to retry.
package moveload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// Queues of the load.
const (
	WorkQueue     = "move.work"     // producers' jobs
	CallbackQueue = "move.callback" // batches' callbacks
	ScheduleQueue = "move.schedule" // the schedule's runs
	HoldQueue     = "move.hold"     // unique jobs no worker takes
)

// Config shapes the load.
type Config struct {
	Producers, Workers int
	// Lease is the workers' lease: long enough never to run out unless
	// something goes wrong, which is then counted.
	Lease time.Duration
	// FetchWait is each fetch's long-poll.
	FetchWait time.Duration
	// Every BatchEvery-th call of a producer enqueues a batch of
	// BatchSize jobs with a callback instead of one job.
	BatchEvery, BatchSize int
	// Backlog bounds the jobs enqueued and not yet completed: producers
	// wait above it, so workers keep up and the namespace stays small.
	Backlog int
}

// Load is a running load and its books.
type Load struct {
	cfg                   Config
	newClient             func(workerID string) *client.Client
	stopProduce, stopWork atomic.Bool
	prodWG, workWG        sync.WaitGroup

	mu         sync.Mutex
	enqueued   map[string]bool // job id → acknowledged by an enqueue's 2xx
	batches    map[string]int  // batch cid → callbacks delivered
	enqueues   []span          // every enqueue answered 2xx
	unanswered []string        // cids of enqueues answered otherwise: settled later by tag
	enqErrs    map[string]int  // what the unanswered got
	delivered  map[string]int  // job id → deliveries
	expired    map[string]bool // job id → delivered again with a higher attempt (a lease ran out)
	acked      map[string]int  // job id → acks answered 2xx
	ackErrs    map[string]int
	fetchErrs  map[string]int
}

type span struct {
	producer   int
	start, end time.Time
}

// Start starts cfg.Producers producers and cfg.Workers workers; newClient
// makes each one's client (workerID "" for producers).
func Start(cfg Config, newClient func(workerID string) *client.Client) *Load {
	l := &Load{cfg: cfg, newClient: newClient,
		enqueued: map[string]bool{}, batches: map[string]int{}, enqErrs: map[string]int{},
		delivered: map[string]int{}, expired: map[string]bool{}, acked: map[string]int{},
		ackErrs: map[string]int{}, fetchErrs: map[string]int{}}
	for p := range cfg.Producers {
		l.prodWG.Add(1)
		go l.produce(p, newClient(""))
	}
	for w := range cfg.Workers {
		l.workWG.Add(1)
		go l.work(newClient(fmt.Sprintf("move-worker-%d", w)))
	}
	return l
}

// errKind names an error for the books: the HTTP status and code, or the
// transport's failure.
func errKind(err error) string {
	var ae *client.Error
	if errors.As(err, &ae) {
		return fmt.Sprintf("%d %s", ae.Status, ae.Code)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "client timeout"
	}
	return "transport: " + err.Error()
}

func (l *Load) backlog() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.enqueued) - len(l.acked)
}

func (l *Load) produce(p int, cl *client.Client) {
	defer l.prodWG.Done()
	for call := 0; !l.stopProduce.Load(); call++ {
		for l.cfg.Backlog > 0 && l.backlog() > l.cfg.Backlog && !l.stopProduce.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		size := 1
		if l.cfg.BatchEvery > 0 && call%l.cfg.BatchEvery == l.cfg.BatchEvery-1 {
			size = l.cfg.BatchSize
		}
		cids := make([]string, size)
		jobs := make([]client.EnqueueRequest, size)
		bcid := fmt.Sprintf("b%d-%d", p, call)
		for i := range jobs {
			cids[i] = fmt.Sprintf("p%d-%d-%d", p, call, i)
			jobs[i] = client.EnqueueRequest{Queue: WorkQueue, Payload: map[string]string{"cid": cids[i]},
				Tags: map[string]string{"cid": cids[i]}}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		start := time.Now()
		var ids []string
		var err error
		if size == 1 {
			var r *client.EnqueueResult
			if r, err = cl.Enqueue(ctx, jobs[0]); err == nil {
				ids = []string{r.JobID}
			}
		} else {
			var r *client.BatchResult
			r, err = cl.EnqueueBatch(ctx, client.BatchRequest{Jobs: jobs,
				Batch: &client.BatchOptions{CallbackQueue: CallbackQueue, CallbackPayload: map[string]string{"batch": bcid}}})
			if err == nil {
				ids = r.JobIDs
			}
		}
		end := time.Now()
		cancel()
		l.mu.Lock()
		if err == nil {
			for _, id := range ids {
				l.enqueued[id] = true
			}
			if size > 1 {
				l.batches[bcid] += 0
			}
			l.enqueues = append(l.enqueues, span{producer: p, start: start, end: end})
		} else {
			l.unanswered = append(l.unanswered, cids...)
			l.enqErrs[errKind(err)]++
		}
		l.mu.Unlock()
		if err != nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func (l *Load) work(cl *client.Client) {
	defer l.workWG.Done()
	for !l.stopWork.Load() {
		j, err := cl.Fetch(context.Background(), client.FetchRequest{
			Queues: []string{WorkQueue, CallbackQueue, ScheduleQueue}, Timeout: l.cfg.FetchWait, LeaseDuration: l.cfg.Lease})
		if err != nil {
			l.count(l.fetchErrs, errKind(err))
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if j == nil {
			continue
		}
		l.mu.Lock()
		l.delivered[j.ID]++
		if j.Attempt > 1 {
			l.expired[j.ID] = true // workers never fail a job: only a lost lease starts another attempt
		}
		if j.Queue == CallbackQueue {
			var cb wire.BatchCallback
			var mine struct {
				Batch string `json:"batch"`
			}
			_ = json.Unmarshal(j.Payload, &cb)
			_ = json.Unmarshal(cb.CallbackPayload, &mine)
			l.batches[mine.Batch]++
		}
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = cl.Ack(ctx, j.ID, nil)
		cancel()
		if err != nil {
			l.count(l.ackErrs, errKind(err))
			continue
		}
		l.mu.Lock()
		l.acked[j.ID]++
		l.mu.Unlock()
	}
}

func (l *Load) count(m map[string]int, k string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m[k]++
}

// StopProducers stops enqueueing and waits for the producers' last calls.
func (l *Load) StopProducers() {
	l.stopProduce.Store(true)
	l.prodWG.Wait()
}

// Drain waits, up to within, until every acknowledged enqueue's job and
// every acknowledged batch's callback was acked, then stops the workers.
// It reports what is still missing when time ran out.
func (l *Load) Drain(within time.Duration) error {
	deadline := time.Now().Add(within)
	var missing int
	for {
		missing = l.missing()
		if missing == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	l.stopWork.Store(true)
	l.workWG.Wait()
	if missing > 0 {
		return fmt.Errorf("%d acknowledged jobs or batch callbacks not completed after %v", missing, within)
	}
	return nil
}

func (l *Load) missing() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for id := range l.enqueued {
		if l.acked[id] == 0 {
			n++
		}
	}
	for _, cbs := range l.batches {
		if cbs == 0 {
			n++
		}
	}
	return n
}

// Enqueued reports whether job id was acknowledged by an enqueue.
func (l *Load) Enqueued(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.enqueued[id]
}

// EnqueuedIDs are the jobs acknowledged by an enqueue.
func (l *Load) EnqueuedIDs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.enqueued))
	for id := range l.enqueued {
		out = append(out, id)
	}
	return out
}
