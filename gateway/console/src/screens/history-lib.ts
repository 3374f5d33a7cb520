// A queue's history (GET /api/v1/queues/{name}/stats) as chart series:
// the ranges the charts offer, the request for one, buckets turned into
// one value per step (a step the answer lacks reads as zeros, as the API
// itself reads a quiet step), the value axis's scale, and the units.

export interface StatsBucket {
  start: string;
  enqueued: number;
  completed: number;
  failed: number;
  dead: number;
  pending: number;
  oldest_pending_age: number;
  processing_time?: { count: number; p50_ms: number; p95_ms: number; p99_ms: number } | null;
}

export interface StatsAnswer {
  queue: string;
  step: "1m" | "1h";
  from: string;
  to: string;
  buckets: StatsBucket[] | null;
}

export interface HistoryRange {
  id: string;
  label: string;
  step: "1m" | "1h";
  /** span is the range's length in milliseconds */
  span: number;
}

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** RANGES are the chart's ranges: minute steps while the API keeps them (48 hours), hour steps beyond. */
export const RANGES: HistoryRange[] = [
  { id: "1h", label: "1 h", step: "1m", span: HOUR },
  { id: "6h", label: "6 h", step: "1m", span: 6 * HOUR },
  { id: "48h", label: "48 h", step: "1m", span: 48 * HOUR },
  { id: "7d", label: "7 d", step: "1h", span: 7 * DAY },
  { id: "30d", label: "30 d", step: "1h", span: 30 * DAY },
];

export const stepMs = (step: string) => (step === "1h" ? HOUR : MIN);

/** statsPath is the request for queue's history over range, ending with the step now is in: whole steps, so an hour is 60 minutes, not 61 partial ones. */
export function statsPath(queue: string, range: HistoryRange, now: number): string {
  const step = stepMs(range.step);
  const end = Math.ceil(now / step) * step;
  const from = new Date(end - range.span).toISOString();
  const to = new Date(end).toISOString();
  return `/api/v1/queues/${encodeURIComponent(queue)}/stats?step=${range.step}&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
}

export const SERIES = ["enqueued", "completed", "failed", "dead", "pending", "oldest", "p50", "p95", "p99"] as const;
export type SeriesName = (typeof SERIES)[number];

export interface History {
  /** times are each step's start (ms since the epoch), oldest first */
  times: number[];
  step: number;
  values: Record<SeriesName, number[]>;
}

/** toHistory lays the answer's buckets on every step of [from, to): a step with no bucket, or a bucket without attempts, reads 0. */
export function toHistory(a: StatsAnswer): History {
  const step = stepMs(a.step);
  const from = Date.parse(a.from);
  const to = Date.parse(a.to);
  const byStart = new Map<number, StatsBucket>();
  for (const b of a.buckets ?? []) byStart.set(Date.parse(b.start), b);
  const values = Object.fromEntries(SERIES.map((s) => [s, [] as number[]])) as Record<SeriesName, number[]>;
  const times: number[] = [];
  for (let t = from; t < to; t += step) {
    times.push(t);
    const b = byStart.get(t);
    const pt = b?.processing_time && b.processing_time.count > 0 ? b.processing_time : null;
    values.enqueued.push(b?.enqueued ?? 0);
    values.completed.push(b?.completed ?? 0);
    values.failed.push(b?.failed ?? 0);
    values.dead.push(b?.dead ?? 0);
    values.pending.push(b?.pending ?? 0);
    values.oldest.push(b?.oldest_pending_age ?? 0);
    values.p50.push(pt?.p50_ms ?? 0);
    values.p95.push(pt?.p95_ms ?? 0);
    values.p99.push(pt?.p99_ms ?? 0);
  }
  return { times, step, values };
}

/** isEmpty is true when nothing happened in the whole range: no chart has a point above zero. */
export function isEmpty(h: History): boolean {
  return SERIES.every((s) => h.values[s].every((v) => v === 0));
}

/** niceScale is the value axis for data up to max: a top at a round number (1, 2 or 5 × 10ⁿ per tick) and its ticks from 0. */
export function niceScale(max: number, ticks = 4, integer = false): { top: number; ticks: number[] } {
  if (!(max > 0)) return { top: 1, ticks: [0, 1] };
  const raw = max / ticks;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / mag;
  let step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
  if (integer) step = Math.max(1, Math.round(step));
  const n = Math.ceil(max / step - 1e-9);
  const out: number[] = [];
  for (let i = 0; i <= n; i++) out.push(round(i * step));
  return { top: round(n * step), ticks: out };
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;

/** plot maps one series onto a w×h box (y grows downward) with top at the box's top: one point per step, at the step's middle. */
export function plot(values: number[], top: number, w: number, h: number): [number, number][] {
  const n = values.length;
  return values.map((v, i) => [r2(((i + 0.5) / n) * w), r2(h - (Math.max(0, v) / top) * h)]);
}

const r2 = (n: number) => Math.round(n * 100) / 100;

/** formatCount is an axis label for a count: 950, 1.2k, 3.4M. */
export function formatCount(n: number): string {
  if (n >= 1e6) return trim(n / 1e6) + "M";
  if (n >= 1e3) return trim(n / 1e3) + "k";
  return trim(n);
}

/** formatMs is a processing time: 0.8 ms, 250 ms, 1.5 s, 2 min. */
export function formatMs(ms: number): string {
  if (ms === 0) return "0";
  if (ms < 1000) return trim(ms) + " ms";
  return formatSeconds(ms / 1000);
}

/** formatSeconds is an age: 45 s, 3 min, 2 h, 1.5 d. */
export function formatSeconds(s: number): string {
  if (s === 0) return "0";
  if (s < 60) return trim(s) + " s";
  if (s < 3600) return trim(s / 60) + " min";
  if (s < 86400) return trim(s / 3600) + " h";
  return trim(s / 86400) + " d";
}

function trim(n: number): string {
  const d = n >= 100 ? 0 : n >= 10 ? 1 : 2;
  return String(Number(n.toFixed(d)));
}

/** timeLabel is a step's start in UTC: the hour and minute, with the day for ranges over a day. */
export function timeLabel(t: number, span: number): string {
  const iso = new Date(t).toISOString();
  return span > DAY ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
}

/** sparkPath is the dashboard's request: one queue's completions per minute over the last hour. */
export const sparkPath = (queue: string, now: number) => statsPath(queue, RANGES[0], now);
