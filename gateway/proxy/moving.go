package proxy

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/wire"
)

// Live namespace moves. While control cuts a namespace over to another
// shard, the source refuses its requests with 503 namespace_moving and
// wire.MovingHeader ("fenced"), and once the namespace lives elsewhere it
// keeps refusing them the same way ("moved"). Either way the shard changed
// nothing, so the gateway asks control where the namespace is now and
// sends the same request again: a client sees a pause, not an error.
// Every request the gateway sends to a namespace's shard goes through
// toShard, the one place this happens.

var (
	movingResent = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "jobbie_gateway_moving_resent_total", Help: "Requests sent again because their namespace was moving to another shard.",
	})
	movingGaveUp = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "jobbie_gateway_moving_gave_up_total",
		Help: "Requests whose namespace was still moving when their retry budget ran out (the client got the shard's 503 and Retry-After).",
	})
)

func init() { obs.Registry.MustRegister(movingResent, movingGaveUp) }

const (
	movingFirstBackoff = 25 * time.Millisecond
	movingMaxBackoff   = 400 * time.Millisecond
	// MovingBudget is how long a request is retried while its namespace
	// moves before the shard's 503 (with Retry-After) is the client's
	// answer. A cut-over holds writes well under it.
	MovingBudget = 8 * time.Second
)

// isMoving reports a shard's refusal of a request because its namespace
// is moving. Any other answer costs one comparison.
func isMoving(resp *fasthttp.Response) bool {
	return resp.StatusCode() == fasthttp.StatusServiceUnavailable && len(resp.Header.Peek(wire.MovingHeader)) > 0
}

// isMovingStream is isMoving for a stream's answer.
func isMovingStream(resp *http.Response) bool {
	return resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(wire.MovingHeader) != ""
}

// shardSend sends one attempt of a request to the shard of placement p
// and reports whether the shard refused it because the namespace is
// moving (the answer is then held by the caller, to pass on if no other
// attempt follows).
type shardSend func(p *placement) (moving bool, err error)

// toShard resolves the placement of namespace ns of r's tenant and sends
// the request with send, and again, re-placed, while the shard answers that
// the namespace is moving: for MovingBudget from the first such answer, or
// until waitEnd if later (when a long-poll fetch would have ended; zero
// for other requests). It returns the placement of the last attempt, and a
// lookup's error or send's. Out of budget the last attempt's answer
// stands: the shard's 503 with its Retry-After.
//
// The request must be safe to send again, and is: the shard refused it
// before changing anything.
func (px *Proxy) toShard(r *admitted.Request, ns string, waitEnd time.Time, send shardSend) (*placement, error) {
	p, err := px.placements.lookup(r.Key.TenantID, ns, r.RequestID)
	if err != nil {
		return nil, err
	}
	moving, err := send(p)
	if !moving || err != nil {
		return p, err
	}
	until := time.Now().Add(MovingBudget)
	if waitEnd.After(until) {
		until = waitEnd
	}
	backoff := movingFirstBackoff
	for {
		left := time.Until(until)
		if left <= 0 || !px.pause(min(backoff, left)) {
			movingGaveUp.Inc()
			return p, nil
		}
		backoff = min(2*backoff, movingMaxBackoff)
		next, err := px.placements.relocate(r.Key.TenantID, ns, r.RequestID, p)
		if err != nil {
			// Control cannot say where the namespace is right now (or
			// says it is gone): ask again after the next pause; the
			// shard's refusal stands if the budget runs out first.
			px.log.Debug("gateway: cannot relocate a moving namespace", "namespace", ns, "request_id", r.RequestID, "err", err)
			continue
		}
		p = next
		movingResent.Inc()
		if moving, err = send(p); !moving || err != nil {
			return p, err
		}
	}
}

// pause waits d, or returns false at once when the gateway stops.
func (px *Proxy) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-px.ctx.Done():
		return false
	}
}
