package gateway

import "github.com/jobbie/jobbie/wire"

// The AI routes' operations (docs/api/ai.md), kept apart from the rest.
func init() {
	operations["GET /api/v1/ai/usage"] = op{id: "getAIUsage", tag: tAI, summary: "Model usage and cost reported by workers, per queue, model, tag or the namespace, over whole UTC hours",
		ok: okAns(wire.AIUsageResponse{}),
		query: []obj{qp("from", "string", "Start, RFC 3339 (default: 24 hours before to); moved back to its hour's start."),
			qp("to", "string", "End, RFC 3339 (default now); moved forward to its hour's end. At most 31 days after from."),
			qp("group_by", "string", "What the totals are per (default namespace); a key limited to some queues may group by queue only.",
				"enum", []string{wire.AIGroupQueue, wire.AIGroupModel, wire.AIGroupTag, wire.AIGroupNamespace})}}
}
