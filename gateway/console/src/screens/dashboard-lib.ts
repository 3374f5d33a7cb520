// The data side of the dashboard, workers and live events screens: the
// API's shapes (wire/queues.go, wire/live.go, wire/cluster.go,
// wire/search.go) and the pure logic over them, kept apart so it is unit
// tested without a browser.
import type { JobEvent } from "../hooks";
import { contains } from "../lib/match";
import { filterQueues, type Queue as QueueDetail, type QueueCounts } from "./queue-lib";

/** Queue is what the dashboard reads of a queue (the queues list's shape, queue-lib's Queue). */
export type Queue = Pick<QueueDetail, "name" | "description" | "counts" | "throughput" | "paused" | "draining" | "drained" | "throughput_per_minute">;

export interface Worker {
  id: string;
  hostname: string;
  queues: string[] | null;
  active_jobs: number;
  active_job_ids: string[] | null;
  last_seen: string;
  status: string; // "active" | "gone"
}

export interface ClusterHealth {
  shard_id: string;
  leader_id: string;
  healthy: boolean;
  nodes: { id: string; role: string; status: string }[];
}

export interface FailedJob {
  id: string;
  queue: string;
  state: string;
  attempt: number;
  max_retries: number;
  failed_at?: string | null;
  died_at?: string | null;
  updated_at?: string | null;
  errors?: { attempt: number; error: string; at: string }[] | null;
  last_error?: string;
}

/** DEFAULT_QUEUE_ROWS is how many queues the dashboard lists before "show all". */
export const DEFAULT_QUEUE_ROWS = 50;

/** byName sorts queues (or anything named) by name, as code points so the order is the same everywhere. */
export function byName<T extends { name: string }>(xs: T[]): T[] {
  return [...xs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** visibleQueues picks the rows to render: those whose name contains filter, sorted, the first limit unless showAll. */
export function visibleQueues(all: Queue[], filter: string, showAll: boolean, limit = DEFAULT_QUEUE_ROWS) {
  const matched = byName(filterQueues(all, filter));
  const rows = showAll ? matched : matched.slice(0, limit);
  return { rows, matched: matched.length, hidden: matched.length - rows.length };
}

export type Totals = Omit<QueueCounts, "cancelled" | "held"> & { queues: number; rate: number };

/** totals adds every queue's counts and completion rate. */
export function totals(qs: Queue[]): Totals {
  const t: Totals = { queues: qs.length, pending: 0, scheduled: 0, active: 0, retrying: 0, completed: 0, dead: 0, rate: 0 };
  for (const q of qs) {
    const c = q.counts;
    t.pending += c.pending;
    t.scheduled += c.scheduled;
    t.active += c.active;
    t.retrying += c.retrying;
    t.completed += c.completed;
    t.dead += c.dead;
    t.rate += q.throughput || 0;
  }
  return t;
}

/** queueState names what a queue is doing: drained and draining say more than paused, which says more than running. */
export function queueState(q: Pick<Queue, "paused" | "draining" | "drained">): "drained" | "draining" | "paused" | "running" {
  if (q.drained) return "drained";
  if (q.draining) return "draining";
  if (q.paused) return "paused";
  return "running";
}

/** perMinute writes a rate as "124/min" (one decimal below 10, so a trickle does not read as zero). */
export function perMinute(n: number | undefined | null): string {
  if (n === undefined || n === null || Number.isNaN(n)) return "—";
  if (n === 0) return "0/min";
  if (n < 10) return (Math.round(n * 10) / 10).toString() + "/min";
  if (n < 10000) return Math.round(n).toLocaleString("en-US") + "/min";
  return (n / 1000).toFixed(1).replace(/\.0$/, "") + "k/min";
}

/** failureTime is when a failed job last failed: its last error, else when it died or failed, else its last change. */
export function failureTime(j: FailedJob): string | null {
  const errs = j.errors ?? [];
  const last = errs.length ? errs[errs.length - 1].at : null;
  return last ?? j.died_at ?? j.failed_at ?? j.updated_at ?? null;
}

/** RECENT_FAILURES asks the search for the last failures: dead or retrying jobs with errors, newest change first. */
export const RECENT_FAILURES = {
  state: ["dead", "retrying"],
  has_errors: true,
  sort: "updated_at",
  order: "desc",
  limit: 10,
};

/** matchWorker tells whether a worker's id, host or one of its queues contains q, and its status is status ("" any). */
export function matchWorker(w: Worker, q: string, status = ""): boolean {
  if (status && w.status !== status) return false;
  return contains(q, w.id, w.hostname, ...(w.queues ?? []));
}

/** sortWorkers lists active workers first, then by id. */
export function sortWorkers(ws: Worker[]): Worker[] {
  return [...ws].sort((a, b) => {
    if (a.status !== b.status) return a.status === "active" ? -1 : b.status === "active" ? 1 : a.status < b.status ? -1 : 1;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
}

/** changesActiveJobs is true for the events that start or end an attempt, which change a worker's active jobs. */
export function changesActiveJobs(e: JobEvent): boolean {
  return e.type === "started" || e.from === "active" || e.state === "active";
}

/** isFailure is true for an event that may add a row to the recent failures, or take one away (a retrying job due again, a dead one retried). */
export function isFailure(e: JobEvent): boolean {
  return e.type === "failed" || e.type === "dead" || [e.state, e.from].some((s) => s === "dead" || s === "retrying");
}

/** EVENT_TYPES are the stream's event types (wire/live.go), for the type filter. */
export const EVENT_TYPES = ["enqueued", "started", "completed", "failed", "dead", "cancelled", "pending", "retried"];

export interface EventFilter {
  queue: string;
  type: string;
}

/** eventMatches applies the live events screen's filters: the queue's name contains queue, the type is type ("" any). */
export function eventMatches(e: JobEvent, f: EventFilter): boolean {
  if (f.type && e.type !== f.type) return false;
  return contains(f.queue, e.queue);
}

/** EVENT_ROWS caps the events the live screen keeps in memory. */
export const EVENT_ROWS = 500;

/**
 * EventLog holds the newest events first, at most cap, and while paused
 * holds arrivals aside (also at most cap) so the table stands still;
 * resume puts them on top.
 */
export class EventLog {
  rows: JobEvent[] = [];
  private held: JobEvent[] = [];
  paused = false;

  constructor(readonly cap = EVENT_ROWS) {}

  push(e: JobEvent) {
    if (this.paused) {
      this.held.unshift(e);
      if (this.held.length > this.cap) this.held.length = this.cap;
      return;
    }
    this.rows.unshift(e);
    if (this.rows.length > this.cap) this.rows.length = this.cap;
  }

  /** heldMatching counts the events held aside that pass filter (what "N new" shows). */
  heldMatching(filter: (e: JobEvent) => boolean): number {
    let n = 0;
    for (const e of this.held) if (filter(e)) n++;
    return n;
  }

  pause() {
    this.paused = true;
  }

  resume() {
    this.paused = false;
    this.rows = this.held.concat(this.rows).slice(0, this.cap);
    this.held = [];
  }

  clear() {
    this.rows = [];
    this.held = [];
  }
}

/** clock writes an instant as the local time of day to the millisecond, "14:03:07.123": a live stream's events are seconds apart. */
export function clock(at: string): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return "—";
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}
