// The Costs screen's logic: the ranges it offers as whole UTC days, the
// chart's series (hours for today, days otherwise, asked in one request
// with step), the groupings, and totals summed exactly (lib/cost.ts).
import { qs } from "../api";
import { parseCost } from "../lib/cost";

/** AIUsageGroup is one group's totals (wire.AIUsageGroup). */
export interface AIUsageGroup {
  key: string;
  reports: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: string;
}

/** AIUsageBucket is one step's totals (wire.AIUsageBucket). */
export interface AIUsageBucket {
  start: string;
  groups: AIUsageGroup[];
}

/** AIUsage is GET /api/v1/ai/usage's answer (wire.AIUsageResponse); step and buckets when asked with step. */
export interface AIUsage {
  from: string;
  to: string;
  group_by: string;
  groups: AIUsageGroup[];
  step?: string;
  buckets?: AIUsageBucket[];
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export const COST_RANGES = [
  { value: "today", label: "Today", days: 1 },
  { value: "7d", label: "Last 7 days", days: 7 },
  { value: "30d", label: "Last 30 days", days: 30 },
] as const;
export type CostRange = (typeof COST_RANGES)[number]["value"];
export const costRangeOf = (v: string | null): CostRange => (COST_RANGES.some((r) => r.value === v) ? (v as CostRange) : "7d");

export const GROUPINGS = [
  { value: "queue", label: "Queue" },
  { value: "model", label: "Model" },
  { value: "tag", label: "Tag" },
  { value: "namespace", label: "Namespace" },
] as const;
export type Grouping = (typeof GROUPINGS)[number]["value"];
export const groupingOf = (v: string | null): Grouping => (GROUPINGS.some((g) => g.value === v) ? (v as Grouping) : "queue");

export interface Window {
  from: number;
  to: number;
}

/** costWindow is a range at now: whole UTC days, the last one today's, ending at midnight tonight. */
export function costWindow(range: CostRange, now: number): Window {
  const days = COST_RANGES.find((r) => r.value === range)?.days ?? 7;
  const to = Math.floor(now / DAY) * DAY + DAY;
  return { from: to - days * DAY, to };
}

/** CostSeries is the chart's range and step (ms). */
export interface CostSeries extends Window {
  step: number;
}

/** costSeries is the chart's series of w up to the step now is in: hours for a single day, else days. */
export function costSeries(w: Window, now: number): CostSeries {
  const step = w.to - w.from <= DAY ? HOUR : DAY;
  return { from: w.from, to: Math.min(w.to, Math.ceil((now + 1) / step) * step), step };
}

/** stepParam writes a step as the API reads it: "1d" for whole days, else hours ("1h"). */
export const stepParam = (ms: number): string => (ms % DAY === 0 ? `${ms / DAY}d` : `${ms / HOUR}h`);

/** usagePath is the request for w's usage grouped by g, per step (ms) when one is given. */
export const usagePath = (w: Window, g: Grouping, step?: number): string =>
  "/api/v1/ai/usage" +
  qs({ from: new Date(w.from).toISOString(), to: new Date(w.to).toISOString(), group_by: g, step: step ? stepParam(step) : undefined });

/** seriesPath is the chart's one request: s's usage per step, by queue (every report is in exactly one queue, so the queues add up to the whole). */
export const seriesPath = (s: CostSeries): string => usagePath(s, "queue", s.step);

/** CostPoint is one step of the chart. */
export interface CostPoint {
  start: number;
  /** nano-dollars */
  cost: bigint;
}

/** costPoints are the chart's points from its answer, each step's cost summed exactly; undefined when u answers another series than s (a range's answer is not shown for another). */
export function costPoints(u: AIUsage, s: CostSeries): CostPoint[] | undefined {
  if (Date.parse(u.from) !== s.from || Date.parse(u.to) !== s.to || u.step !== stepParam(s.step) || !u.buckets) return undefined;
  return u.buckets.map((b) => ({ start: Date.parse(b.start), cost: totalsOf(b.groups).cost }));
}

export interface Totals {
  reports: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** nano-dollars */
  cost: bigint;
}

/** totalsOf adds groups' figures, the cost exactly. */
export function totalsOf(groups: AIUsageGroup[]): Totals {
  const t: Totals = { reports: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0n };
  for (const g of groups) {
    t.reports += g.reports;
    t.input += g.input_tokens;
    t.output += g.output_tokens;
    t.cacheRead += g.cache_read_tokens;
    t.cacheWrite += g.cache_write_tokens;
    t.cost += parseCost(g.cost_usd);
  }
  return t;
}

/** groupLabel names a group's key: a report that named no model counts under "". */
export function groupLabel(g: Grouping, key: string): string {
  if (key === "" && g === "model") return "(no model)";
  return key === "" ? "—" : key;
}

/** byCost orders groups by cost, highest first, then by key. */
export function byCost(groups: AIUsageGroup[]): AIUsageGroup[] {
  return [...groups].sort((a, b) => {
    const d = parseCost(b.cost_usd) - parseCost(a.cost_usd);
    return d > 0n ? 1 : d < 0n ? -1 : a.key.localeCompare(b.key);
  });
}

/** stepLabel names a step by its start, UTC: "09:00" for an hour, "11-24" for a day. */
export function stepLabel(t: number, step: number): string {
  const iso = new Date(t).toISOString();
  return step < DAY ? iso.slice(11, 16) : iso.slice(5, 10);
}
