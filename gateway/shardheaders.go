package gateway

import (
	"bytes"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/wire"
)

// What a tenant's plan tells its shards, on the gateway's requests to
// them:
//
//   - wire.FairWeightHeader, on every request: the plan's weight in the
//     shard's fair admission, 1 when the plan sets none (or the gateway
//     does not know the plan yet), clamped to 1..maxFairWeight;
//   - wire.MaxPendingJobsHeader, on the requests that can create jobs
//     (endpoint.createsJobs), when the plan sets max_pending_jobs: the
//     shard refuses what would take the namespace over it.
//
// The gateway builds every request to a shard from scratch (proxy.go),
// copying only the method, path, query, content type and body of the
// client's: no header a client sends, X-Jobbie-* or other, reaches a
// shard, so these two are the plan's and nothing else.
//
// The values are derived once per plan change (planCache.applyLimits),
// not per request.

// maxFairWeight is the largest weight a shard takes.
const maxFairWeight = 1000

// shardHeaders are the header values a tenant's plan in effect sets on
// requests to its shards.
type shardHeaders struct {
	weight     []byte // wire.FairWeightHeader's value
	maxPending []byte // wire.MaxPendingJobsHeader's value; nil: no limit
}

// defaultShardHeaders are those of a tenant without a plan, or whose plan
// is not known yet.
var defaultShardHeaders = &shardHeaders{weight: []byte("1")}

// shardHeadersOf is what plan p sets; nil p is no plan.
func shardHeadersOf(p *wire.Plan) *shardHeaders {
	if p == nil {
		return defaultShardHeaders
	}
	w := fairWeight(p.Weight)
	if w == 1 && p.Limits.MaxPendingJobs == nil {
		return defaultShardHeaders
	}
	h := &shardHeaders{weight: strconv.AppendInt(nil, w, 10)}
	if m := p.Limits.MaxPendingJobs; m != nil {
		h.maxPending = strconv.AppendInt(nil, max(*m, 0), 10)
	}
	return h
}

// fairWeight is a plan's weight as a shard takes it: 1 when unset,
// within 1..maxFairWeight.
func fairWeight(w int64) int64 { return min(max(w, 1), maxFairWeight) }

func (h *shardHeaders) equal(o *shardHeaders) bool {
	return bytes.Equal(h.weight, o.weight) && bytes.Equal(h.maxPending, o.maxPending) &&
		(h.maxPending == nil) == (o.maxPending == nil)
}

// shardHeaders are the values the caller's plan sets.
func (r *call) shardHeaders() *shardHeaders {
	if r.plan == nil {
		return defaultShardHeaders
	}
	if h := r.plan.shard.Load(); h != nil {
		return h
	}
	return defaultShardHeaders
}

// setPlanHeaders sets the plan's headers on a request to a shard: the
// weight always, max_pending_jobs when jobs is set and the plan has it.
func (r *call) setPlanHeaders(req *fasthttp.RequestHeader, jobs bool) {
	h := r.shardHeaders()
	req.SetBytesV(wire.FairWeightHeader, h.weight)
	if jobs && h.maxPending != nil {
		req.SetBytesV(wire.MaxPendingJobsHeader, h.maxPending)
	}
}
