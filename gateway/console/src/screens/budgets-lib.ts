// The namespace's AI budgets (GET /api/v1/ai/budgets) as the Costs
// screen shows them: the scope in words, today's spend against each
// limit (computed exactly in nano-dollars), and the create form's body.
import { ApiError } from "../api";
import { parseCost, usd } from "../lib/cost";
import { exact } from "../lib/format";

/** Budget is a budget as the API shows it (wire.Budget). */
export interface Budget {
  name: string;
  scope: "namespace" | "queue" | "tag";
  queue?: string;
  tag?: string;
  daily_cost_usd?: string;
  daily_tokens?: number;
  on_exceed: "hold" | "reject" | "alert";
  spent_today_usd: string;
  spent_today_tokens: number;
  exceeded: boolean;
}

/** scopeText names what a budget covers. */
export function scopeText(b: Pick<Budget, "scope" | "queue" | "tag">): string {
  if (b.scope === "queue") return "queue " + (b.queue ?? "");
  if (b.scope === "tag") return "tag " + (b.tag ?? "");
  return "the namespace";
}

export const ON_EXCEED: Record<string, string> = {
  hold: "hold new jobs for approval",
  reject: "refuse enqueues",
  alert: "send a budget.exceeded event",
};

export interface Spend {
  text: string;
  /** 0..100: how much of the limit today used */
  pct: number;
}

/** percent is used/limit as a percentage to one place, capped at 100 (exact for BigInt nano-dollars). */
function percent(used: bigint, limit: bigint): number {
  if (limit <= 0n) return 0;
  const tenths = (used * 1000n) / limit;
  return Math.min(100, Number(tenths) / 10);
}

/** spends are today's spend against each limit the budget has: cost, then tokens. */
export function spends(b: Budget): Spend[] {
  const out: Spend[] = [];
  if (b.daily_cost_usd) {
    const used = parseCost(b.spent_today_usd);
    const limit = parseCost(b.daily_cost_usd);
    out.push({ text: `${usd(used)} of ${usd(limit)}`, pct: percent(used, limit) });
  }
  if (b.daily_tokens) {
    out.push({ text: `${exact(b.spent_today_tokens)} of ${exact(b.daily_tokens)} tokens`, pct: percent(BigInt(b.spent_today_tokens), BigInt(b.daily_tokens)) });
  }
  return out;
}

/** BudgetForm is what the create dialog holds, as typed. */
export interface BudgetForm {
  name: string;
  scope: string;
  queue: string;
  tag: string;
  cost: string;
  tokens: string;
  on_exceed: string;
}

export const emptyBudgetForm = (): BudgetForm => ({ name: "", scope: "namespace", queue: "", tag: "", cost: "", tokens: "", on_exceed: "hold" });

/** budgetBody is the POST body of a form; a token count that is not a whole number is a 400-like error naming daily_tokens (the API checks the rest). */
export function budgetBody(f: BudgetForm): Record<string, unknown> | ApiError {
  const body: Record<string, unknown> = { name: f.name.trim(), scope: f.scope, on_exceed: f.on_exceed };
  if (f.scope === "queue") body.queue = f.queue.trim();
  if (f.scope === "tag") body.tag = f.tag.trim();
  if (f.cost.trim()) body.daily_cost_usd = f.cost.trim();
  const t = f.tokens.trim().replace(/[,_ ]/g, "");
  if (t) {
    if (!/^\d{1,15}$/.test(t)) return new ApiError(400, "invalid_argument", "daily_tokens must be a whole number of tokens", "daily_tokens");
    body.daily_tokens = Number(t);
  }
  return body;
}
