package client

import (
	"sync"
	"time"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// The worker stream's outbox: what the worker has to tell the server
// (acks, fails, heartbeats, credit), gathered into one frame each time
// the stream can send, so a busy worker's reports go out many to a
// frame. An item waits for its Result by correlation id; one sent on a
// stream that broke before answering is sent again on the next, and an
// ack or fail refused for now (the shard between leaders: what the HTTP
// worker's report retries, 429 and 503) is sent again after a backoff,
// so a leader change inside the shard costs the job no second run.

// maxRetries bounds how often an ack or fail refused for now is sent
// again (the backoff grows to the policy's MaxBackoff between; the
// reporter's reportWait bounds the whole).
const maxRetries = 10

// outItem is one report and whoever waits for its Result.
type outItem struct {
	id   uint64
	ack  *jobbiev1.Ack
	fail *jobbiev1.Fail
	beat *jobbiev1.Heartbeat
	done chan *jobbiev1.Result // buffered: one Result

	// outbox.mu guards these.
	retries   int  // times refused for now and sent again
	forgotten bool // its waiter gave up: not sent again
}

type outbox struct {
	mu     sync.Mutex
	next   uint64
	queue  []*outItem
	sent   map[uint64]*outItem // sent on the current stream, not yet answered
	credit int32               // to grant with the next frame
	ready  chan struct{}       // something to send
	policy RetryPolicy         // the backoff of items refused for now
	later  int                 // items refused for now, waiting to be sent again
}

func newOutbox(policy RetryPolicy) *outbox {
	return &outbox{sent: map[uint64]*outItem{}, ready: make(chan struct{}, 1), policy: policy}
}

func (o *outbox) signal() {
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

// put queues it, with credit more jobs granted in the same frame.
func (o *outbox) put(it *outItem, credit int32) {
	o.mu.Lock()
	it.done = make(chan *jobbiev1.Result, 1)
	o.number(it)
	o.queue = append(o.queue, it)
	o.credit += credit
	o.mu.Unlock()
	o.signal()
}

// number gives it the next correlation id (o.mu held).
func (o *outbox) number(it *outItem) {
	o.next++
	it.id = o.next
	switch {
	case it.ack != nil:
		it.ack.CorrelationId = it.id
	case it.fail != nil:
		it.fail.CorrelationId = it.id
	case it.beat != nil:
		it.beat.CorrelationId = it.id
	}
}

// grant adds credit for the next frame.
func (o *outbox) grant(n int32) {
	if n <= 0 {
		return
	}
	o.mu.Lock()
	o.credit += n
	o.mu.Unlock()
	o.signal()
}

// resetCredit sets the credit a new stream starts with (a stream's
// unused credit ends with it).
func (o *outbox) resetCredit(n int32) {
	o.mu.Lock()
	o.credit = max(n, 0)
	o.mu.Unlock()
}

// take is the next frame, or nil when there is nothing to send; its
// items count as sent.
func (o *outbox) take(grantCredit bool) *jobbiev1.WorkRequest {
	o.mu.Lock()
	defer o.mu.Unlock()
	f := &jobbiev1.WorkRequest{}
	if grantCredit && o.credit > 0 {
		f.Credit = &jobbiev1.Credit{N: o.credit}
		o.credit = 0
	}
	for _, it := range o.queue {
		o.sent[it.id] = it
		switch {
		case it.ack != nil:
			f.Acks = append(f.Acks, it.ack)
		case it.fail != nil:
			f.Fails = append(f.Fails, it.fail)
		case it.beat != nil:
			f.Heartbeats = append(f.Heartbeats, it.beat)
		}
	}
	o.queue = o.queue[:0]
	if f.Credit == nil && len(f.Acks)+len(f.Fails)+len(f.Heartbeats) == 0 {
		return nil
	}
	return f
}

// answer hands r to the item it answers; an ack or fail refused for now
// is kept instead, and sent again after a backoff under a new
// correlation id (acks and fails carry their lease token, so one applied
// after all is refused, not applied twice). Decided here, under the
// lock that takes it off the sent list, so it never looks settled to the
// stream's closing check in between.
func (o *outbox) answer(r *jobbiev1.Result) {
	o.mu.Lock()
	it := o.sent[r.GetCorrelationId()]
	delete(o.sent, r.GetCorrelationId())
	if it != nil && it.beat == nil && forNow(r.GetErrorCode()) && it.retries < maxRetries && !it.forgotten {
		it.retries++
		b := backoff{p: o.policy, n: it.retries - 1}
		o.later++
		o.mu.Unlock()
		time.AfterFunc(b.next(nil), func() { o.again(it) })
		return
	}
	o.mu.Unlock()
	if it != nil {
		it.done <- r
	}
}

// again queues an item refused for now, unless its waiter gave up.
func (o *outbox) again(it *outItem) {
	o.mu.Lock()
	o.later--
	if !it.forgotten {
		o.number(it)
		o.queue = append(o.queue, it)
	}
	o.mu.Unlock()
	o.signal() // sends it, or lets a stopping stream see nothing is left
}

// forNow reports a refusal the same report may pass later: the codes
// the API answers 429 or 503 with while a leader, a dependency or a
// limit is briefly missing (not a quota or budget, which stay).
func forNow(code string) bool {
	switch wire.ErrorCode(code) {
	case wire.CodeRateLimited, wire.CodeNoLeader, wire.CodeUnavailable, wire.CodeNamespaceMoving,
		wire.CodeSelfHostedBudget, wire.CodeRevocationsStale, wire.CodeConnectionLimit:
		return true
	}
	return false
}

// forget drops an item whose waiter gave up.
func (o *outbox) forget(it *outItem) (unsent bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	it.forgotten = true
	delete(o.sent, it.id)
	for i, q := range o.queue {
		if q == it {
			o.queue = append(o.queue[:i], o.queue[i+1:]...)
			return true
		}
	}
	return false
}

// resend puts the items a broken stream left unanswered back in the
// queue, for the next stream; heartbeats are dropped (the next one is
// due anyway, and its waiter is told by a nil Result).
func (o *outbox) resend() {
	o.mu.Lock()
	var again []*outItem
	for id, it := range o.sent {
		delete(o.sent, id)
		if it.beat != nil {
			close(it.done)
			continue
		}
		again = append(again, it)
	}
	o.queue = append(again, o.queue...)
	o.mu.Unlock()
	if len(again) > 0 {
		o.signal()
	}
}

// inFlight reports whether anything is queued or awaits its answer.
func (o *outbox) inFlight() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.queue)+len(o.sent)+o.later > 0
}
