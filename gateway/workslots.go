package gateway

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/fairshare"
)

// Work slots. A gateway's cores are shared among tenants by a pool of
// slots, one per core, in a weighted fair queue per tenant with its
// plan's fair weight (internal/fairshare). A request takes one once
// admission knows its tenant and its rate limits let it through, for the
// gateway's own CPU-bound part (the api_requests meter and the route's
// checks, which parse an enqueue's body for the plan's payload limit),
// and gives it back before the shard serves it: waiting for the shard
// is not the gateway's work, and the shard shares its own cores the same
// way (shard/api/sched.go). A tenant that floods requests without a
// plan's rate limit thus waits behind its own share of the cores, not
// another tenant's; a request that waits longer than workWait is refused
// (fairshare.Refusal: 429 when its tenant's own requests held the slots,
// 503 when others' did, with Retry-After).
//
// What comes before the tenant is known (TLS, reading the request, the
// key's verification, cached after the first) is shared as the
// connections come.
const workWait = 2 * time.Second

func newWorkSlots(wait time.Duration) *fairshare.Scheduler {
	if wait <= 0 {
		wait = workWait
	}
	return fairshare.New(fairshare.Config{Name: "gateway work", MaxWait: wait})
}

// workSlot takes a slot of r's tenant's share.
func (s *Server) workSlot(c *fiber.Ctx, r *admitted.Request) (*fairshare.Slot, error) {
	sl, err := s.work.Acquire(c.Context(), r.Key.TenantID, planWeight(r))
	if err != nil {
		return nil, fairshare.Refusal(err, "this tenant", "requests")
	}
	return sl, nil
}

// planWeight is the fair weight of r's tenant's plan, as its shards get
// it (wire.FairWeightHeader, limits/shardheaders.go: 1..1000).
func planWeight(r *admitted.Request) int {
	w := 0
	for _, d := range r.ShardHeaders().Weight {
		if d < '0' || d > '9' {
			return 1
		}
		w = w*10 + int(d-'0')
	}
	return max(w, 1)
}
