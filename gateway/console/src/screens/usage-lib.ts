// The usage and invoice screens' logic: the meters and how they are
// written, range presets to a query, bar heights, money.
import { exact } from "../lib/format";

export interface UsageMeters {
  jobs_enqueued: number;
  executions: number;
  jobs_completed: number;
  jobs_failed: number;
  jobs_dead: number;
  active_job_seconds: number;
  storage_byte_hours: number;
  api_requests: number;
  push_deliveries: number;
  webhook_deliveries: number;
}
export type MeterName = keyof UsageMeters;
export interface UsageBucket {
  start: string;
  meters: UsageMeters;
  incomplete: boolean;
}
export interface NamespaceMeters {
  namespace: string;
  buckets: UsageBucket[];
  totals: UsageMeters;
}
export interface Usage {
  from: string;
  to: string;
  granularity: string;
  namespaces: NamespaceMeters[];
  tenant: UsageBucket[];
  totals: UsageMeters;
}

/** METERS are the meters in the order the API lists them, with their labels. */
export const METERS: { name: MeterName; label: string }[] = [
  { name: "jobs_enqueued", label: "Jobs enqueued" },
  { name: "executions", label: "Executions" },
  { name: "jobs_completed", label: "Jobs completed" },
  { name: "jobs_failed", label: "Failed attempts" },
  { name: "jobs_dead", label: "Jobs dead" },
  { name: "active_job_seconds", label: "Active job seconds" },
  { name: "storage_byte_hours", label: "Storage byte-hours" },
  { name: "api_requests", label: "API requests" },
  { name: "push_deliveries", label: "Push deliveries" },
  { name: "webhook_deliveries", label: "Webhook deliveries" },
];

export const meterLabel = (m: string): string => METERS.find((x) => x.name === m)?.label ?? m;

/** meterValue writes a meter's amount: counts with every digit, the fractional meters to two places. */
export function meterValue(m: string, v: number | undefined): string {
  if (v === undefined || v === null) return "—";
  if (m === "active_job_seconds" || m === "storage_byte_hours") return v.toLocaleString("en-US", { maximumFractionDigits: 2 });
  return exact(v);
}

export const PRESETS = [
  { value: "24h", label: "Last 24 hours", ms: 24 * 3600_000 },
  { value: "7d", label: "Last 7 days", ms: 7 * 86400_000 },
  { value: "30d", label: "Last 30 days", ms: 30 * 86400_000 },
] as const;
export type Preset = (typeof PRESETS)[number]["value"];
export type Granularity = "hour" | "day";

export const presetOf = (v: string | null): Preset => (PRESETS.some((p) => p.value === v) ? (v as Preset) : "24h");
export const granularityOf = (v: string | null): Granularity => (v === "day" ? "day" : "hour");

/** rangeFor is a preset's [from, to) at now as RFC 3339 (the server widens both to whole buckets). */
export function rangeFor(preset: Preset, now: number): { from: string; to: string } {
  const p = PRESETS.find((x) => x.value === preset) ?? PRESETS[0];
  return { from: new Date(now - p.ms).toISOString(), to: new Date(now).toISOString() };
}

/** barHeights scales values to heights in [0, max]: the largest is max, any non-zero value at least 1 (so it shows). */
export function barHeights(values: number[], max: number): number[] {
  const top = Math.max(0, ...values);
  if (top <= 0) return values.map(() => 0);
  return values.map((v) => (v <= 0 ? 0 : Math.max(1, (v / top) * max)));
}

/** money writes minor units of currency ("USD": cents) as the currency: 12345 → "$123.45". */
export function money(minor: number, currency: string): string {
  const cur = currency || "USD";
  let fmt: Intl.NumberFormat;
  try {
    fmt = new Intl.NumberFormat("en-US", { style: "currency", currency: cur });
  } catch {
    return exact(minor) + " " + cur; // an unknown code: the minor units as they are
  }
  const digits = fmt.resolvedOptions().maximumFractionDigits ?? 2;
  return fmt.format(minor / 10 ** digits);
}

/** bucketLabel names a bucket by its start: "Nov 24 14:00" (hour) or "Nov 24" (day), UTC. */
export function bucketLabel(start: string, g: string): string {
  const d = new Date(start);
  const opts: Intl.DateTimeFormatOptions =
    g === "day" ? { month: "short", day: "numeric", timeZone: "UTC" } : { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "UTC" };
  return d.toLocaleString("en-US", opts);
}

/** chartSummary is a chart's accessible name: its total, peak and incomplete buckets. */
export function chartSummary(label: string, m: MeterName, buckets: UsageBucket[], g: string): string {
  if (!buckets.length) return `${label}: no data`;
  let total = 0;
  let peak = buckets[0];
  let open = 0;
  for (const b of buckets) {
    total += b.meters[m];
    if (b.meters[m] > peak.meters[m]) peak = b;
    if (b.incomplete) open++;
  }
  const unit = g === "day" ? "day" : "hour";
  let s = `${label} per ${unit}, ${buckets.length} ${unit}s: total ${meterValue(m, total)}, peak ${meterValue(m, peak.meters[m])} at ${bucketLabel(peak.start, g)} UTC`;
  if (open) s += `; ${open} incomplete`;
  return s;
}

/** periodLabel names an invoice's month: "November 2026". */
export const periodLabel = (start: string): string => new Date(start).toLocaleString("en-US", { month: "long", year: "numeric", timeZone: "UTC" });
