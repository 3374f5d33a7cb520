// AI workloads (docs/api/ai.md): checking and summing the usage a handler
// reports, and the AI resource family: usage totals, budgets, and the
// approval or rejection of the jobs a budget holds.

import { type CallOptions, Transport } from "./http.js";
import type * as api from "./api.gen.js";

/** One report of what a job's model calls used; token counts whole, cost_usd a decimal string of dollars. */
export type AIUsage = api.AIUsage;
export type AIUsageResponse = api.AIUsageResponse;
export type AIUsageBucket = api.AIUsageBucket;
export type Budget = api.Budget;
export type BudgetSpec = api.BudgetSpec;
export type ApproveResponse = api.ApproveResponse;

const MAX_TOKENS = 1_000_000_000_000; // of one kind in one report
const COST_SCALE = 1_000_000_000n; // nano-dollars
const MAX_COST_NANOS = 1_000_000n * COST_SCALE; // in one report
const MAX_NAME_BYTES = 128;
const TOKEN_FIELDS = ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"] as const;

/** A usage report checked and in exact form: cost in nano-dollars. */
export interface UsageCounts {
  tokens: Record<(typeof TOKEN_FIELDS)[number], number>;
  costNanos: bigint;
  model: string;
  provider: string;
}

/** Parses a non-negative decimal of dollars ("0.0042") into nano-dollars, exactly; null when it is not one. */
export function parseCostUSD(s: string): bigint | null {
  const m = /^([0-9]{1,10})(?:\.([0-9]{1,9}))?$/.exec(s);
  if (!m) return null;
  return BigInt(m[1]!) * COST_SCALE + BigInt((m[2] ?? "").padEnd(9, "0"));
}

/** Writes nano-dollars as a decimal string without trailing zeros ("0.0042", "12"). */
export function formatCostUSD(n: bigint): string {
  const whole = (n / COST_SCALE).toString();
  const frac = (n % COST_SCALE).toString().padStart(9, "0").replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole;
}

/**
 * Checks one report as the server does; throws a TypeError naming the
 * field ("usage.cost_usd") otherwise.
 */
export function checkUsage(u: AIUsage, field = "usage"): UsageCounts {
  const tokens = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };
  for (const k of TOKEN_FIELDS) {
    const v = u[k] ?? 0;
    if (!Number.isSafeInteger(v) || v < 0 || v > MAX_TOKENS) {
      throw new TypeError(`jobbie: ${field}.${k} must be a whole number from 0 to ${MAX_TOKENS}; got ${v}`);
    }
    tokens[k] = v;
  }
  let costNanos = 0n;
  if (u.cost_usd !== undefined && u.cost_usd !== "") {
    const n = typeof u.cost_usd === "string" ? parseCostUSD(u.cost_usd) : null;
    if (n === null) {
      throw new TypeError(`jobbie: ${field}.cost_usd must be a decimal string such as "0.0042", at most 9 places after the point; got ${JSON.stringify(u.cost_usd)}`);
    }
    if (n > MAX_COST_NANOS) throw new TypeError(`jobbie: ${field}.cost_usd must be at most 1000000 in one report; got ${u.cost_usd}`);
    costNanos = n;
  }
  const names = { model: u.model ?? "", provider: u.provider ?? "" };
  for (const k of ["model", "provider"] as const) {
    const v = names[k];
    if (new TextEncoder().encode(v).length > MAX_NAME_BYTES) throw new TypeError(`jobbie: ${field}.${k} must be at most ${MAX_NAME_BYTES} bytes`);
    if (/[\u0000-\u001f\u007f]/.test(v)) throw new TypeError(`jobbie: ${field}.${k} must hold no control characters`);
  }
  return { tokens, costNanos, ...names };
}

/** Usage reported and not yet sent, summed exactly. */
export class PendingUsage {
  private c: UsageCounts | null = null;

  /** Adds a checked report; throws when the sum would pass what one report may carry. */
  add(c: UsageCounts): void {
    const s: UsageCounts = this.c
      ? { tokens: { ...this.c.tokens }, costNanos: this.c.costNanos, model: this.c.model, provider: this.c.provider }
      : { tokens: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 }, costNanos: 0n, model: "", provider: "" };
    for (const k of TOKEN_FIELDS) s.tokens[k] += c.tokens[k];
    s.costNanos += c.costNanos;
    if (TOKEN_FIELDS.some((k) => s.tokens[k] > MAX_TOKENS) || s.costNanos > MAX_COST_NANOS) {
      throw new RangeError("jobbie: the usage not yet sent would pass what one report may carry: let a heartbeat send it first");
    }
    if (c.model) s.model = c.model;
    if (c.provider) s.provider = c.provider;
    this.c = s;
  }

  /** The sum as one report, and forgets it; undefined when nothing is pending. */
  take(): AIUsage | undefined {
    const c = this.c;
    if (!c) return undefined;
    this.c = null;
    const u: AIUsage = { ...c.tokens, cost_usd: formatCostUSD(c.costNanos) };
    if (c.model) u.model = c.model;
    if (c.provider) u.provider = c.provider;
    return u;
  }

  /** Adds back a report a heartbeat failed to send (it was checked when reported). */
  restore(u: AIUsage | undefined): void {
    if (u) this.add(checkUsage(u));
  }
}

/** GET /api/v1/ai/usage's query; left out, the server's defaults (the last 24 hours, the namespace's total, no buckets). */
export interface AIUsageQuery {
  from?: Date | string;
  to?: Date | string;
  groupBy?: "queue" | "model" | "tag" | "namespace";
  /** Whole hours or days ("1h", "6h", "1d"): the answer's buckets hold the same sums per step from `from`. */
  step?: string;
}

const enc = encodeURIComponent;
const iso = (t: Date | string | undefined) => (t instanceof Date ? t.toISOString() : t);

/** The namespace's AI budgets (docs/api/ai.md#budgets). */
export class Budgets {
  constructor(private readonly t: Transport) {}
  async list(co?: CallOptions): Promise<Budget[]> {
    return (await this.t.call<api.BudgetList>({ method: "GET", path: "/api/v1/ai/budgets" }, co)).data.budgets ?? [];
  }
  async get(name: string, co?: CallOptions): Promise<Budget> {
    return (await this.t.call<Budget>({ method: "GET", path: `/api/v1/ai/budgets/${enc(name)}` }, co)).data;
  }
  /** Creates a budget (spec.name names it); 409 when the name is taken. */
  async create(spec: BudgetSpec, co?: CallOptions): Promise<Budget> {
    return (await this.t.call<Budget>({ method: "POST", path: "/api/v1/ai/budgets", body: spec }, co)).data;
  }
  /** Replaces a budget's settings. */
  async update(name: string, spec: BudgetSpec, co?: CallOptions): Promise<Budget> {
    return (await this.t.call<Budget>({ method: "PUT", path: `/api/v1/ai/budgets/${enc(name)}`, body: spec, retry: true }, co)).data;
  }
  /** Deletes a budget; the jobs it holds stay held. */
  async delete(name: string, co?: CallOptions): Promise<void> {
    await this.t.call({ method: "DELETE", path: `/api/v1/ai/budgets/${enc(name)}` }, co);
  }
}

/** AI workloads: usage totals, budgets, and the jobs budgets hold. */
export class AI {
  readonly budgets: Budgets;
  constructor(private readonly t: Transport) {
    this.budgets = new Budgets(t);
  }

  /** The namespace's usage over whole UTC hours, per group, and per step in `buckets` when `step` is set. */
  async usage(q: AIUsageQuery = {}, co?: CallOptions): Promise<AIUsageResponse> {
    const query = { from: iso(q.from), to: iso(q.to), group_by: q.groupBy, step: q.step };
    return (await this.t.call<AIUsageResponse>({ method: "GET", path: "/api/v1/ai/usage", query }, co)).data;
  }

  /** Runs a job a budget holds, outside the budget; 409 when no budget holds it. */
  async approve(id: string, co?: CallOptions): Promise<ApproveResponse> {
    return (await this.t.call<ApproveResponse>({ method: "POST", path: `/api/v1/jobs/${enc(id)}/approve` }, co)).data;
  }

  /** Cancels a job a budget holds (cancel_reason "budget_rejected"); 409 when no budget holds it. */
  async reject(id: string, co?: CallOptions): Promise<ApproveResponse> {
    return (await this.t.call<ApproveResponse>({ method: "POST", path: `/api/v1/jobs/${enc(id)}/reject` }, co)).data;
  }
}
