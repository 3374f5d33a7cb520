package gateway

import "github.com/jobbie/jobbie/wire"

// The AI routes' operations (docs/api/ai.md), kept apart from the rest.
func init() {
	operations["GET /api/v1/ai/usage"] = op{id: "getAIUsage", tag: tAI, summary: "Model usage and cost reported by workers, per queue, model, tag or the namespace, over whole UTC hours and optionally per step",
		ok: okAns(wire.AIUsageResponse{}),
		query: []obj{qp("from", "string", "Start, RFC 3339 (default: 24 hours before to); moved back to its hour's start."),
			qp("to", "string", "End, RFC 3339 (default now); moved forward to its hour's end. At most 31 days after from."),
			qp("group_by", "string", "What the totals are per (default namespace); a key limited to some queues may group by queue only.",
				"enum", []string{wire.AIGroupQueue, wire.AIGroupModel, wire.AIGroupTag, wire.AIGroupNamespace}),
			qp("step", "string", "Adds buckets: the same sums per step from from, a whole number of hours or days (1h, 6h, 1d; 1h to 31d), the last cut at to. Without it the answer has no step and no buckets.",
				"pattern", "^[1-9][0-9]{0,3}[hd]$")}}
}

func init() {
	budget := okAns(wire.Budget{})
	operations["GET /api/v1/ai/budgets"] = op{id: "listBudgets", tag: tAI, summary: "AI budgets, with what their scope reported today (UTC)", ok: okAns(wire.BudgetList{})}
	operations["POST /api/v1/ai/budgets"] = op{id: "createBudget", tag: tAI, summary: "Create an AI budget: a daily cost or token limit on the namespace, a queue or a tag",
		req: wire.BudgetSpec{}, ok: createdAns(wire.Budget{})}
	operations["GET /api/v1/ai/budgets/:name"] = op{id: "getBudget", tag: tAI, summary: "An AI budget and what its scope reported today", ok: budget}
	operations["PUT /api/v1/ai/budgets/:name"] = op{id: "putBudget", tag: tAI, summary: "Replace an AI budget's settings", req: wire.BudgetSpec{}, ok: budget}
	operations["DELETE /api/v1/ai/budgets/:name"] = op{id: "deleteBudget", tag: tAI, summary: "Delete an AI budget (the jobs it holds stay held)", ok: noContent()}
	operations["POST /api/v1/jobs/:id/approve"] = op{id: "approveJob", tag: tAI, summary: "Run a job an AI budget held, outside the budget", ok: okAns(wire.ApproveResponse{})}
	operations["POST /api/v1/jobs/:id/reject"] = op{id: "rejectJob", tag: tAI, summary: "Cancel a job an AI budget held", ok: okAns(wire.ApproveResponse{})}
}
