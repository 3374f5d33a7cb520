// The job detail's data (wire.JobDetail) and the pure readings of it the
// screen shows: which actions a state allows, the attempts table (the API
// keeps a timeline and the failed attempts' errors, not a list of
// attempts, so the rows are rebuilt from both), times and durations, and
// a timeline entry's text.

export interface JobError {
  attempt: number;
  error: string;
  backtrace?: string;
  at: string;
}

export interface TimelineEvent {
  at: string;
  event: string;
  detail?: string;
}

export interface Job {
  id: string;
  queue: string;
  payload: unknown;
  state: string;
  priority: string;
  attempt: number;
  max_retries: number;
  retry_backoff: string;
  retry_base_delay: string;
  retry_max_delay: string;
  created_at: string | null;
  scheduled_at: string | null;
  started_at: string | null;
  completed_at: string | null;
  failed_at: string | null;
  next_attempt_at: string | null;
  lease_expires_at: string | null;
  expire_after: string | null;
  expires_at: string | null;
  lease_duration?: string;
  unique_key: string | null;
  unique_period: number | null;
  /** keyed fairness: capped per concurrency_key by the queue's key_concurrency; fetched in turn by fairness_key (absent: none) */
  concurrency_key?: string;
  fairness_key?: string;
  batch_id: string | null;
  chain_id: string | null;
  chain_step: number | null;
  depends_on?: string[];
  cancel_reason?: string;
  tags: Record<string, string> | null;
  progress: unknown;
  checkpoint: unknown;
  result: unknown;
  errors: JobError[];
  worker: { id: string; hostname: string } | null;
  dead_reason?: string;
  updated_at: string | null;
  cancelling?: boolean;
  cancelled_at?: string;
  died_at?: string;
  timeline?: TimelineEvent[];
  /** model usage its workers reported, summed (absent: none reported) */
  usage?: JobUsage;
  /** "budget": held by an AI budget (held_budget) until approved or rejected */
  held_reason?: string;
  held_budget?: string;
  /** a search's answer: the last attempt's error */
  last_error?: string;
}

/** JobUsage is a job's summed model usage (wire.AIUsage): zero counts are left out, cost_usd is a decimal string of dollars. */
export interface JobUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  cost_usd?: string;
  model?: string;
  provider?: string;
}

export interface JobActions {
  retry: boolean;
  cancel: boolean;
  move: boolean;
  del: boolean;
}

/** actionsFor is what the API allows from a state (shard/job's Decide* rules). */
export function actionsFor(state: string, cancelling = false): JobActions {
  const finished = state === "completed" || state === "dead" || state === "cancelled";
  const waiting = state === "scheduled" || state === "pending" || state === "retrying" || state === "held";
  return {
    retry: finished,
    cancel: waiting || (state === "active" && !cancelling),
    move: state !== "active",
    del: state !== "active",
  };
}

/** attemptLabel: "attempt 2 of 5" (max_retries counts retries, so a job runs at most max_retries + 1 times). */
export function attemptLabel(attempt: number, maxRetries: number): string {
  return `attempt ${attempt} of ${maxRetries + 1}`;
}

/** attemptOf writes "attempt/attempts allowed", as 3/5 for the third attempt of a job retried at most 4 times. */
export function attemptOf(j: Pick<Job, "attempt" | "max_retries">): string {
  return `${j.attempt}/${j.max_retries + 1}`;
}

export interface AttemptRow {
  n: number;
  start?: string;
  end?: string;
  worker?: string;
  outcome: "running" | "completed" | "failed" | "lease expired" | "cancelled" | "released" | "unknown";
  error?: string;
  backtrace?: string;
}

const startedRe = /^(?:worker (.+) )?attempt (\d+)$/;

/** parseStarted reads a "started" entry's detail: "worker w-1 attempt 2". */
export function parseStarted(detail: string | undefined): { worker?: string; attempt?: number } {
  const m = startedRe.exec(detail ?? "");
  if (!m) return {};
  return { worker: m[1], attempt: Number(m[2]) };
}

function sameTime(a: string, b: string): boolean {
  return a === b || Date.parse(a) === Date.parse(b);
}

/** attemptsOf rebuilds the attempts from the timeline and the errors, oldest first. */
export function attemptsOf(job: Pick<Job, "state" | "attempt" | "errors" | "timeline">): AttemptRow[] {
  const rows: AttemptRow[] = [];
  const used = new Set<number>();
  let cur: AttemptRow | undefined;
  const close = (at: string, outcome: AttemptRow["outcome"]) => {
    if (!cur) return;
    cur.end = at;
    cur.outcome = outcome;
    cur = undefined;
  };
  const errorAt = (at: string) => {
    const i = (job.errors ?? []).findIndex((e, i) => !used.has(i) && sameTime(e.at, at));
    if (i < 0) return undefined;
    used.add(i);
    return job.errors[i];
  };
  for (const ev of job.timeline ?? []) {
    switch (ev.event) {
      case "started": {
        close(ev.at, "unknown");
        const s = parseStarted(ev.detail);
        cur = { n: s.attempt ?? rows.length + 1, start: ev.at, worker: s.worker, outcome: "running" };
        rows.push(cur);
        break;
      }
      case "failed":
      case "lease_expired": {
        const e = errorAt(ev.at);
        const row = cur;
        close(ev.at, ev.event === "failed" ? "failed" : "lease expired");
        if (row) {
          row.error = e?.error ?? (ev.event === "failed" ? ev.detail : "lease_expired");
          row.backtrace = e?.backtrace;
        }
        break;
      }
      case "completed":
        close(ev.at, "completed");
        break;
      case "cancelled":
        close(ev.at, "cancelled");
        break;
      case "lease_released":
        close(ev.at, "released");
        break;
    }
  }
  if (cur && job.state !== "active") cur.outcome = "unknown";
  // Errors whose attempt fell off the bounded timeline still get a row.
  (job.errors ?? []).forEach((e, i) => {
    if (!used.has(i)) rows.push({ n: e.attempt, end: e.at, outcome: "failed", error: e.error, backtrace: e.backtrace });
  });
  return rows.sort((a, b) => Date.parse(a.start ?? a.end ?? "") - Date.parse(b.start ?? b.end ?? ""));
}

export interface ProgressView {
  current: number;
  total: number;
  message?: string;
  /** 0..100, or undefined when total is not positive */
  pct?: number;
}

/** progressOf reads progress of the console's shape ({current, total, message}); other JSON answers null. */
export function progressOf(p: unknown): ProgressView | null {
  if (!p || typeof p !== "object" || Array.isArray(p)) return null;
  const o = p as Record<string, unknown>;
  if (typeof o.current !== "number" || typeof o.total !== "number") return null;
  const v: ProgressView = { current: o.current, total: o.total };
  if (typeof o.message === "string" && o.message) v.message = o.message;
  if (o.total > 0) v.pct = Math.max(0, Math.min(100, (o.current / o.total) * 100));
  return v;
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** utc writes a time as "2026-02-11 10:00:00 UTC". */
export function utc(at: string | null | undefined): string {
  if (!at) return "—";
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return "—";
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} UTC`;
}

/** clock writes a time of day with milliseconds, UTC: "10:00:04.301". */
export function clock(at: string | null | undefined): string {
  if (!at) return "—";
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return "—";
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

/** dur writes milliseconds as "850ms", "4.2s", "3m 5s", "2h 10m", "3d 4h". */
export function dur(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  if (ms < 0) ms = 0;
  if (ms < 1000) return Math.round(ms) + "ms";
  const s = ms / 1000;
  if (s < 60) return (s < 10 ? s.toFixed(1).replace(/\.0$/, "") : String(Math.floor(s))) + "s";
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${Math.floor(s % 60)}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** between is the duration from a to b (b missing: until now), or "" when a is missing. */
export function between(a: string | null | undefined, b: string | null | undefined, now = Date.now()): string {
  if (!a) return "";
  const t0 = Date.parse(a);
  const t1 = b ? Date.parse(b) : now;
  if (Number.isNaN(t0) || Number.isNaN(t1)) return "";
  return dur(t1 - t0);
}

/** timelineText is one timeline entry as a sentence. */
export function timelineText(ev: TimelineEvent): string {
  const d = ev.detail ?? "";
  switch (ev.event) {
    case "enqueued":
      return d.startsWith("scheduled for ") ? "enqueued, scheduled for " + utc(d.slice(14)) : "enqueued";
    case "started": {
      const s = parseStarted(d);
      if (s.attempt === undefined) return d ? "started: " + d : "started";
      return (s.worker ? "started by " + s.worker : "started") + ` (attempt ${s.attempt})`;
    }
    case "progress": {
      let p: unknown;
      try {
        p = JSON.parse(d);
      } catch {
        return "progress: " + d;
      }
      const v = progressOf(p);
      if (!v) return "progress: " + d;
      return `progress: ${v.current}/${v.total}` + (v.message ? ` "${v.message}"` : "");
    }
    case "failed":
      return "failed: " + d;
    case "retry_scheduled":
      return d && !sameTime(d, ev.at) ? "retry scheduled for " + utc(d) + ` (in ${between(ev.at, d)})` : "back to pending for another attempt";
    case "lease_expired":
      return "lease expired" + (d ? ` (${d})` : "");
    case "completed":
      return "completed";
    case "cancelled":
      return "cancelled" + (d ? ": " + d : "");
    case "cancel_requested":
      return "cancel requested" + (d ? ` (${d})` : "");
    case "moved":
      return "moved " + d;
    case "retried":
      return "retried by hand";
    case "expired":
      return "expired before it started";
    case "dead":
      return "dead" + (d ? ": " + d : "");
    case "released":
      return "released: " + (d || "dependencies done");
    case "lease_released":
      return "lease released, the attempt not counted" + (d ? ` (${d})` : "");
  }
  return ev.event + (d ? ": " + d : "");
}
