package limits

import (
	"bytes"
	"strconv"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/wire"
)

// What a tenant's plan tells its shards, on the gateway's requests to
// them:
//
//   - wire.FairWeightHeader, on every request: the plan's weight in the
//     shard's fair admission, 1 when the plan sets none (or the gateway
//     does not know the plan yet), clamped to 1..maxFairWeight;
//   - wire.MaxPendingJobsHeader, on the requests that can create jobs
//     (a route that creates jobs), when the plan sets max_pending_jobs: the
//     shard refuses what would take the namespace over it;
//   - wire.MaxPayloadBytesHeader, on every request, when the plan sets
//     max_payload_bytes: the shard refuses any value it would store over
//     it (payloads of every kind, tags, chains, results, progress,
//     checkpoints), one place for every field (service.Limits);
//   - wire.EventRetentionHeader, on every request, once the plan is
//     known: its event log retention ("<hours>,<events>", defaults filled
//     in), which the shard's leader keeps the namespace's log to. Never
//     while the plan is unknown, so a gateway that has not read it yet
//     cannot cut a namespace's log to the defaults;
//   - wire.ExecutionsLeftHeader, on fetches, when the plan has a hard
//     monthly executions cap: what the month still allows, as this
//     gateway's quota answer has it (quota.go), so a fetch/batch leases
//     no more.
//
// The gateway builds every request to a shard from scratch (package
// proxy), copying only the method, path, query, content type and body of
// the client's: no header a client sends, X-Jobbie-* or other, reaches a
// shard, so these are the plan's and nothing else.
//
// The values are derived once per plan change (Plans.applyLimits), not
// per request.

// maxFairWeight is the largest weight a shard takes.
const maxFairWeight = 1000

// headersOf is what plan p sets; nil p is no plan.
func headersOf(p *wire.Plan) *admitted.ShardHeaders {
	if p == nil {
		return admitted.DefaultShardHeaders
	}
	w := fairWeight(p.Weight)
	hours, events := p.Limits.EventRetention()
	h := &admitted.ShardHeaders{Weight: strconv.AppendInt(nil, w, 10), EventRetention: retentionHeader(hours, events),
		AuditRetentionDays: p.Limits.AuditRetention()}
	if m := p.Limits.MaxPendingJobs; m != nil {
		h.MaxPending = strconv.AppendInt(nil, max(*m, 0), 10)
	}
	if m := p.Limits.MaxPayloadBytes; m != nil {
		h.MaxPayload = strconv.AppendInt(nil, max(*m, 1), 10) // a shard takes positive limits only
	}
	return h
}

// retentionHeader is wire.EventRetentionHeader's value.
func retentionHeader(hours, events int64) []byte {
	return strconv.AppendInt(append(strconv.AppendInt(nil, hours, 10), ','), events, 10)
}

// fairWeight is a plan's weight as a shard takes it: 1 when unset,
// within 1..maxFairWeight.
func fairWeight(w int64) int64 { return min(max(w, 1), maxFairWeight) }

func headersEqual(h, o *admitted.ShardHeaders) bool {
	return bytes.Equal(h.Weight, o.Weight) && bytes.Equal(h.MaxPending, o.MaxPending) &&
		(h.MaxPending == nil) == (o.MaxPending == nil) &&
		bytes.Equal(h.MaxPayload, o.MaxPayload) && (h.MaxPayload == nil) == (o.MaxPayload == nil) &&
		bytes.Equal(h.EventRetention, o.EventRetention) && (h.EventRetention == nil) == (o.EventRetention == nil) &&
		h.AuditRetentionDays == o.AuditRetentionDays
}
