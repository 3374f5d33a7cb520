package proxy

import (
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/wire"
)

// setPlanHeaders sets what r's plan tells shards on a request to one
// (limits' shardheaders.go says what and why): the weight always,
// max_pending_jobs when jobs is set and the plan has it,
// max_payload_bytes whenever the plan has it, the event log retention
// once the plan is known, the executions left when the quota check
// set them, and the audit context of an audited request. Beside them
// goes the gateway's own span of the request, when traced, so the
// shard's span of it is its child.
func setPlanHeaders(req *fasthttp.RequestHeader, r *admitted.Request, jobs bool) {
	if r.SystemTrace != "" {
		req.Set(wire.SystemTraceParentHeader, r.SystemTrace)
	}
	h := r.ShardHeaders()
	req.SetBytesV(wire.FairWeightHeader, h.Weight)
	if jobs && h.MaxPending != nil {
		req.SetBytesV(wire.MaxPendingJobsHeader, h.MaxPending)
	}
	if h.MaxPayload != nil {
		req.SetBytesV(wire.MaxPayloadBytesHeader, h.MaxPayload)
	}
	if h.EventRetention != nil {
		req.SetBytesV(wire.EventRetentionHeader, h.EventRetention)
	}
	if r.Audit != nil {
		req.SetBytesV(wire.AuditHeader, r.Audit)
	}
	if r.ExecutionsLeft > 0 {
		req.SetBytesV(wire.ExecutionsLeftHeader, strconv.AppendInt(nil, r.ExecutionsLeft, 10))
	}
}
