// The Alerts screen's model: a rule and its state as the API answers them
// (docs/api/alerts.md, wire.AlertRule), the rule form and the request it
// sends, and how a rule's condition and state read.
import { ApiError } from "../api";

export interface AlertQueue {
  queue: string;
  since: string;
  value: number;
}

export interface AlertValue {
  queue: string;
  value: number;
}

export interface AlertRule {
  name: string;
  kind: string;
  queue: string;
  threshold: number;
  for: string;
  min_count?: number;
  enabled: boolean;
  state: "ok" | "firing";
  since?: string;
  firing: AlertQueue[] | null;
  values: AlertValue[] | null;
  evaluated_at?: string;
  created_at: string;
  updated_at: string;
}

export interface AlertRuleList {
  alerts: AlertRule[];
}

/** AlertKind is one kind of rule (wire.AlertKinds): whether it takes a threshold, and what its measure is in. */
export interface AlertKind {
  name: string;
  label: string;
  /** the threshold's label; absent: the kind takes none (it is measured in time, by `for`) */
  threshold?: string;
  unit: "jobs" | "seconds" | "%";
}

export const ALERT_KINDS: readonly AlertKind[] = [
  { name: "queue_depth_above", label: "Queue depth above", threshold: "Pending jobs above", unit: "jobs" },
  { name: "oldest_pending_above", label: "Oldest pending job older than “for”", unit: "seconds" },
  { name: "dead_increase", label: "Dead jobs increased", threshold: "Jobs dead within “for”, at least", unit: "jobs" },
  { name: "failure_rate_above", label: "Failure rate above", threshold: "Percentage of finished jobs that died, above", unit: "%" },
  { name: "no_worker", label: "No worker fetched for “for”", unit: "seconds" },
];

export const DEFAULT_MIN_COUNT = 10;

export function alertKind(name: string): AlertKind | undefined {
  return ALERT_KINDS.find((k) => k.name === name);
}

/** alertPath is a rule's API path. */
export const alertPath = (name: string): string => "/api/v1/alerts/" + encodeURIComponent(name);

/** AlertForm is the rule form's state: numbers as typed, so a bad one is told rather than lost. */
export interface AlertForm {
  name: string;
  kind: string;
  queue: string;
  threshold: string;
  for: string;
  min_count: string;
  enabled: boolean;
}

/** alertForm starts a form from rule (null: a new rule). */
export function alertForm(rule: AlertRule | null): AlertForm {
  if (!rule) return { name: "", kind: "queue_depth_above", queue: "", threshold: "", for: "5m", min_count: "", enabled: true };
  return {
    name: rule.name,
    kind: rule.kind,
    queue: rule.queue,
    threshold: alertKind(rule.kind)?.threshold ? String(rule.threshold) : "",
    for: rule.for,
    min_count: rule.kind === "failure_rate_above" && rule.min_count ? String(rule.min_count) : "",
    enabled: rule.enabled,
  };
}

/** AlertBody is the request of a create (with name) or a replace (without: a rule is not renamed). */
export interface AlertBody {
  name?: string;
  kind: string;
  queue?: string;
  threshold?: number;
  for: string;
  min_count?: number;
  enabled: boolean;
}

/**
 * alertBody is the request form f sends, or an ApiError naming the field
 * when a number field holds no number (the server could only say the
 * body is not JSON of its type). Every other check is the server's: its
 * 400 names the field, and the form shows it there.
 */
export function alertBody(f: AlertForm, create: boolean): AlertBody | ApiError {
  const kind = alertKind(f.kind);
  const b: AlertBody = { kind: f.kind, for: f.for.trim(), enabled: f.enabled };
  if (create) b.name = f.name.trim();
  if (f.queue.trim()) b.queue = f.queue.trim();
  if (kind?.threshold) {
    const t = numberOf(f.threshold);
    if (t === undefined) return new ApiError(400, "bad_request", "must be a number", "threshold");
    b.threshold = t;
  }
  if (f.kind === "failure_rate_above" && f.min_count.trim()) {
    const m = numberOf(f.min_count);
    if (m === undefined || !Number.isInteger(m)) return new ApiError(400, "bad_request", "must be a whole number", "min_count");
    b.min_count = m;
  }
  return b;
}

function numberOf(s: string): number | undefined {
  const t = s.trim();
  if (t === "") return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

/** toggled is the replace request that turns rule on or off and keeps every other setting. */
export function toggled(rule: AlertRule): AlertBody {
  const b = alertBody(alertForm(rule), false) as AlertBody; // a rule read back always makes a body
  return { ...b, enabled: !rule.enabled };
}

/** valueText is a measure of a rule of kind, with its unit. */
export function valueText(kind: string, v: number): string {
  const unit = alertKind(kind)?.unit ?? "";
  const n = Number.isInteger(v) ? v.toLocaleString("en-US") : v.toLocaleString("en-US", { maximumFractionDigits: 2 });
  if (unit === "%") return n + " %";
  if (unit === "seconds") return n + " s";
  return n + (v === 1 ? " job" : " jobs");
}

/** conditionText says when rule fires, in a line. */
export function conditionText(rule: Pick<AlertRule, "kind" | "threshold" | "for" | "min_count">): string {
  switch (rule.kind) {
    case "queue_depth_above":
      return `more than ${rule.threshold.toLocaleString("en-US")} pending for ${rule.for}`;
    case "oldest_pending_above":
      return `oldest pending older than ${rule.for}`;
    case "dead_increase":
      return `${rule.threshold.toLocaleString("en-US")} or more died within ${rule.for}`;
    case "failure_rate_above":
      return `more than ${rule.threshold} % died over ${rule.for} (of at least ${rule.min_count || DEFAULT_MIN_COUNT})`;
    case "no_worker":
      return `no fetch for ${rule.for} while jobs pend`;
    default:
      return `${rule.kind} ${rule.threshold} for ${rule.for}`;
  }
}

/** lastValue is the rule's latest measure: the one of the queue it fires on, else the highest of its last evaluation. */
export function lastValue(rule: AlertRule): AlertValue | undefined {
  const values = rule.values ?? [];
  const firing = rule.firing ?? [];
  for (const f of firing) {
    const v = values.find((x) => x.queue === f.queue);
    if (v) return v;
  }
  if (firing.length > 0) return { queue: firing[0].queue, value: firing[0].value };
  let top: AlertValue | undefined;
  for (const v of values) if (!top || v.value > top.value) top = v;
  return top;
}

/** firingRules are the rules firing now, the longest firing first. */
export function firingRules(rules: AlertRule[]): AlertRule[] {
  return rules.filter((r) => r.state === "firing").sort((a, b) => (a.since ?? "").localeCompare(b.since ?? "") || a.name.localeCompare(b.name));
}

/** stateOf is how a rule's state reads: off while disabled, else ok or firing (on how many queues). */
export function stateOf(rule: AlertRule): { label: string; cls: string; glyph: string } {
  if (!rule.enabled) return { label: "off", cls: "off", glyph: "○" };
  if (rule.state === "firing") {
    const n = rule.firing?.length ?? 0;
    return { label: n > 1 ? `firing on ${n} queues` : "firing", cls: "firing", glyph: "▲" };
  }
  return { label: "ok", cls: "ok", glyph: "●" };
}
