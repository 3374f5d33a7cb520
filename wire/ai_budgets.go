package wire

import "time"

// AI budgets (docs/api/ai.md): a daily limit on the model cost or tokens
// reported for a namespace, a queue or a tag, and what happens to a job
// enqueued once it is reached.

// Budget scopes and actions.
const (
	BudgetScopeNamespace = "namespace"
	BudgetScopeQueue     = "queue"
	BudgetScopeTag       = "tag"
	BudgetHold           = "hold"   // new jobs start held (held_reason "budget") until approved
	BudgetReject         = "reject" // enqueue is refused: 429 budget_exceeded
	BudgetAlert          = "alert"  // a budget.exceeded event, once per UTC day
	HeldReasonBudget     = "budget"
	// CodeBudgetExceeded refuses an enqueue a budget with on_exceed
	// reject forbids (429); the message names the budget.
	CodeBudgetExceeded ErrorCode = "budget_exceeded"
	MaxBudgets                   = 100 // per namespace
	MaxBudgetNameBytes           = 64
)

// BudgetSpec is what POST /api/v1/ai/budgets and PUT
// /api/v1/ai/budgets/{name} take (the PUT's name is the path's).
type BudgetSpec struct {
	Name         string `json:"name,omitempty"`
	Scope        string `json:"scope"`           // namespace, queue or tag
	Queue        string `json:"queue,omitempty"` // scope queue
	Tag          string `json:"tag,omitempty"`   // scope tag: "key=value"
	DailyCostUSD string `json:"daily_cost_usd,omitempty"`
	DailyTokens  int64  `json:"daily_tokens,omitempty"` // every kind of token
	// PerJobCostUSD and PerJobTokens limit what one job of the scope
	// reports over all its attempts.
	PerJobCostUSD string `json:"per_job_cost_usd,omitempty"`
	PerJobTokens  int64  `json:"per_job_tokens,omitempty"`
	OnExceed      string `json:"on_exceed"`
}

// Budget is a budget as the API shows it, with what its scope reported
// today (UTC) and whether that reached a limit.
type Budget struct {
	BudgetSpec
	SpentTodayUSD    string    `json:"spent_today_usd"`
	SpentTodayTokens int64     `json:"spent_today_tokens"`
	Exceeded         bool      `json:"exceeded"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// BudgetList is GET /api/v1/ai/budgets.
type BudgetList struct {
	Budgets []Budget `json:"budgets"`
}

// ApproveResponse is POST /api/v1/jobs/{id}/approve's and /reject's
// answer: the job's state after it.
type ApproveResponse struct {
	JobID  string `json:"job_id"`
	Status string `json:"status"`
}
