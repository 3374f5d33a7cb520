// The data side of the queues list and the queue detail: the API's shapes
// (wire/queues.go) and the pure logic over them (sorting, filtering,
// paging, formatting, request bodies), kept apart so it is unit tested
// without a browser.
import { ApiError } from "../api";
import { contains } from "../lib/match";
import { queuePath } from "../lib/paths";

export interface QueueCounts {
  pending: number;
  scheduled: number;
  active: number;
  retrying: number;
  completed: number;
  dead: number;
  cancelled: number;
  held: number;
}

export interface KeyConcurrency {
  max: number;
}

export interface Throttle {
  rate: number;
  /** a duration in its canonical form, "1m" */
  period: string;
}

/** A queue's defaults: null fields have no queue default; durations read as "1m30s". */
export interface QueueDefaults {
  max_retries: number | null;
  retry_backoff: string | null;
  retry_base_delay: string | null;
  retry_max_delay: string | null;
  lease_duration: string | null;
  expire_after: string | null;
  retention: string | null;
}

export interface Queue {
  name: string;
  description: string;
  counts: QueueCounts;
  /** completed per minute over the last 5 minutes */
  throughput: number;
  /** seconds the oldest pending job has waited (0: none pending) */
  oldest_pending_age: number;
  paused: boolean;
  draining: boolean;
  drained: boolean;
  concurrency: number | null;
  /** at most max active jobs of one concurrency_key at a time (null or absent: no cap) */
  key_concurrency?: KeyConcurrency | null;
  throttle: Throttle | null;
  defaults: QueueDefaults | null;
  /** completions per one-minute bucket of the last 5, oldest first (absent on older servers) */
  throughput_per_minute?: number[] | null;
  /** null (or absent on older servers): a pull queue */
  push?: QueuePush | null;
}

/** A push queue's settings as read (wire.QueuePush): disabled is set once a handler answered 410 Gone, until the next PUT. */
export interface QueuePush {
  url: string;
  mode: string;
  /** a duration in its canonical form, "30s" */
  timeout: string;
  max_in_flight: number;
  headers: Record<string, string>;
  disabled?: { reason: string; at: string } | null;
}

/** A spec's push (wire.QueuePushRequest): numbers as typed, so the server's check names a bad one. */
export interface QueuePushRequest {
  url: string;
  mode: string;
  timeout: number | string | null;
  max_in_flight: number | string | null;
  headers: Record<string, string>;
}

export interface QueueList {
  queues: Queue[];
}

/** The job states in the order the screens show them. */
export const STATES: (keyof QueueCounts)[] = ["pending", "scheduled", "active", "retrying", "held", "completed", "dead", "cancelled"];

export type SortKey = "name" | "pending" | "active" | "completed" | "dead" | "rate" | "age";
export type SortDir = "asc" | "desc";
export const SORT_KEYS: SortKey[] = ["name", "pending", "active", "completed", "dead", "rate", "age"];
export const PAGE_SIZE = 50;

function sortValue(q: Queue, key: SortKey): number | string {
  switch (key) {
    case "name":
      return q.name;
    case "rate":
      return q.throughput;
    case "age":
      return q.oldest_pending_age;
    default:
      return q.counts[key];
  }
}

/** firstDir is the direction a first click on a column sorts: names A→Z, numbers biggest first. */
export function firstDir(key: SortKey): SortDir {
  return key === "name" ? "asc" : "desc";
}

/** sortQueues sorts a copy by key; ties go by name, so the order is stable across reloads. */
export function sortQueues(qs: Queue[], key: SortKey, dir: SortDir): Queue[] {
  const sign = dir === "asc" ? 1 : -1;
  return [...qs].sort((a, b) => {
    const x = sortValue(a, key);
    const y = sortValue(b, key);
    let c = typeof x === "string" ? x.localeCompare(y as string) : x - (y as number);
    if (c === 0 && key !== "name") c = a.name.localeCompare(b.name) * sign;
    return c * sign;
  });
}

/** filterQueues keeps the queues whose name contains text (any case). */
export function filterQueues<Q extends Pick<Queue, "name">>(qs: Q[], text: string): Q[] {
  return text.trim() ? qs.filter((q) => contains(text, q.name)) : qs;
}

/** paginate answers page (1-based, clamped into range) of items and how many pages there are. */
export function paginate<T>(items: T[], page: number, size = PAGE_SIZE): { items: T[]; page: number; pages: number } {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const p = Math.min(Math.max(1, Math.floor(page) || 1), pages);
  return { items: items.slice((p - 1) * size, p * size), page: p, pages };
}

export interface ListQuery {
  q: string;
  sort: SortKey;
  dir: SortDir;
  page: number;
}

/** readListQuery reads the list's filter, sort and page from the URL (bad values fall back to the defaults). */
export function readListQuery(u: URLSearchParams): ListQuery {
  const s = u.get("sort") as SortKey | null;
  const sort = s && SORT_KEYS.includes(s) ? s : "name";
  const d = u.get("dir");
  const dir = d === "asc" || d === "desc" ? d : firstDir(sort);
  const page = parseInt(u.get("page") ?? "1", 10);
  return { q: u.get("q") ?? "", sort, dir, page: page > 0 ? page : 1 };
}

/** writeListQuery is the URL query of a list state, leaving out the defaults. */
export function writeListQuery(l: ListQuery): URLSearchParams {
  const u = new URLSearchParams();
  if (l.q) u.set("q", l.q);
  if (l.sort !== "name") u.set("sort", l.sort);
  if (l.dir !== firstDir(l.sort)) u.set("dir", l.dir);
  if (l.page > 1) u.set("page", String(l.page));
  return u;
}

/** nextSort is the sort after a click on key's header: the same column flips, another starts at its first direction. */
export function nextSort(cur: { sort: SortKey; dir: SortDir }, key: SortKey): { sort: SortKey; dir: SortDir } {
  if (cur.sort === key) return { sort: key, dir: cur.dir === "asc" ? "desc" : "asc" };
  return { sort: key, dir: firstDir(key) };
}

export type QueueStatus = "active" | "paused" | "draining" | "drained";

/** statusOf is what a queue is doing: drained (draining, nothing active), draining, paused or active. */
export function statusOf(q: Pick<Queue, "paused" | "draining" | "drained">): QueueStatus {
  if (q.draining) return q.drained ? "drained" : "draining";
  return q.paused ? "paused" : "active";
}

/** formatAge writes seconds as "45s", "3m 20s", "2h 5m", "3d 4h"; nothing waiting is "—". */
export function formatAge(sec: number | null | undefined): string {
  if (!sec || sec < 0 || !Number.isFinite(sec)) return "—";
  const s = Math.floor(sec);
  if (s < 1) return "<1s";
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + (s % 60 ? " " + (s % 60) + "s" : "");
  if (s < 86400) return Math.floor(s / 3600) + "h" + (Math.floor(s / 60) % 60 ? " " + (Math.floor(s / 60) % 60) + "m" : "");
  return Math.floor(s / 86400) + "d" + (Math.floor(s / 3600) % 24 ? " " + (Math.floor(s / 3600) % 24) + "h" : "");
}

/** formatRate writes a per-minute rate: "124/min", "0.4/min". */
export function formatRate(perMin: number): string {
  const r = perMin >= 10 ? Math.round(perMin) : Math.round(perMin * 10) / 10;
  return r.toLocaleString("en-US") + "/min";
}

/** formatThrottle writes a throttle as "100 per 1m". */
export function formatThrottle(t: Throttle | null | undefined): string {
  return t ? `${t.rate.toLocaleString("en-US")} per ${t.period}` : "none";
}

/** clearable is how many jobs a clear removes: pending, scheduled and retrying (active ones stay). */
export function clearable(c: QueueCounts): number {
  return c.pending + c.scheduled + c.retrying;
}

/** totalJobs is every job of the queue, whatever its state. */
export function totalJobs(c: QueueCounts): number {
  return STATES.reduce((n, s) => n + c[s], 0);
}

/** typed is what an input holds as JSON: "" is null, an integer or decimal a number, anything else the trimmed text
 * (sent as typed so the server's check, which names the field, decides). */
export function typed(v: string): number | string | null {
  const t = v.trim();
  if (t === "") return null;
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  return t;
}

/** concurrencyBody is POST .../concurrency's body for the input: a max, or null (no limit). */
export function concurrencyBody(max: string): { max: number | string | null } {
  return { max: typed(max) };
}

/** keyConcurrencyChange is the spec change for the key concurrency input: {max} as typed (the server names a bad one), or null (no cap). */
export function keyConcurrencyChange(max: string): Pick<QueueSpec, "key_concurrency"> {
  const v = typed(max);
  return { key_concurrency: v === null ? null : { max: v } };
}

/** formatKeyConcurrency writes a queue's per-key cap: "2 per key", or "no limit". */
export function formatKeyConcurrency(k: KeyConcurrency | null | undefined): string {
  return k ? `${k.max.toLocaleString("en-US")} per key` : "no limit";
}

/** throttleBody is POST .../throttle's body: period "1m" or a number of seconds. */
export function throttleBody(rate: string, period: string): { rate: number | string | null; period: number | string | null } {
  return { rate: typed(rate), period: typed(period) };
}

export type DefaultsForm = Record<keyof QueueDefaults, string>;
export const DEFAULT_FIELDS: (keyof QueueDefaults)[] = [
  "max_retries",
  "retry_backoff",
  "retry_base_delay",
  "retry_max_delay",
  "lease_duration",
  "expire_after",
  "retention",
];

/** defaultsForm is the form's text for a queue's defaults (empty: no queue default). */
export function defaultsForm(d: QueueDefaults | null | undefined): DefaultsForm {
  const out = {} as DefaultsForm;
  for (const k of DEFAULT_FIELDS) {
    const v = d?.[k];
    out[k] = v === null || v === undefined ? "" : String(v);
  }
  return out;
}

/** defaultsBody is POST .../defaults's body (which replaces every default): empty fields are null. */
export function defaultsBody(f: DefaultsForm): Record<keyof QueueDefaults, number | string | null> {
  const out = {} as Record<keyof QueueDefaults, number | string | null>;
  for (const k of DEFAULT_FIELDS) {
    const v = typed(f[k]);
    // retry_backoff is a name: never turn it into a number.
    out[k] = k === "retry_backoff" && v !== null ? f[k].trim() : v;
  }
  return out;
}

export interface QueueSpec {
  description: string;
  paused: boolean;
  concurrency: number | null;
  /** left out (null) resets the cap, so a change of another field must carry it */
  key_concurrency: { max: number | string } | null;
  throttle: Throttle | null;
  defaults: QueueDefaults | null;
  /** left out (null) makes a pull queue, so a change of another field must carry it */
  push: QueuePushRequest | null;
}

/** specOf is the queue's whole configuration for PUT /api/v1/queues/{name}, which replaces every setting: a change
 * of one field (the description) sends the others as they are, so they stay. */
export function specOf(q: Queue, change: Partial<QueueSpec> = {}): QueueSpec {
  return {
    description: q.description,
    paused: q.paused,
    concurrency: q.concurrency,
    key_concurrency: q.key_concurrency ? { max: q.key_concurrency.max } : null,
    throttle: q.throttle ? { rate: q.throttle.rate, period: q.throttle.period } : null,
    defaults: q.defaults,
    push: q.push ? pushRequestOf(q.push) : null,
    ...change,
  };
}

/** pushRequestOf is the spec's push that keeps a queue's push settings as they are (and enables push again). */
export function pushRequestOf(p: QueuePush): QueuePushRequest {
  return { url: p.url, mode: p.mode, timeout: p.timeout, max_in_flight: p.max_in_flight, headers: { ...p.headers } };
}

export const PUSH_MODES = ["always", "when_no_workers"] as const;

/** PushForm is the push dialog's text: headers one "Name: value" a line. */
export interface PushForm {
  url: string;
  mode: string;
  timeout: string;
  max_in_flight: string;
  headers: string;
}

/** pushForm is the dialog's text for a queue's push settings (a pull queue: empty, with the server's defaults shown). */
export function pushForm(p: QueuePush | null | undefined): PushForm {
  if (!p) return { url: "", mode: "always", timeout: "30s", max_in_flight: "10", headers: "" };
  const headers = Object.keys(p.headers)
    .sort()
    .map((k) => `${k}: ${p.headers[k]}`)
    .join("\n");
  return { url: p.url, mode: p.mode, timeout: p.timeout, max_in_flight: String(p.max_in_flight), headers };
}

/** pushChange is the spec change the push dialog sends. A header line that is not "Name: value" throws, naming the line,
 * before anything is sent; everything else goes as typed, for the server to judge. */
export function pushChange(f: PushForm): Pick<QueueSpec, "push"> {
  const headers: Record<string, string> = {};
  f.headers.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const at = line.indexOf(":");
    const name = at < 0 ? "" : line.slice(0, at).trim();
    if (!name) throw new Error(`push.headers: line ${i + 1} (“${line.trim()}”) is not “Name: value”`);
    headers[name] = line.slice(at + 1).trim();
  });
  return { push: { url: f.url.trim(), mode: f.mode, timeout: typed(f.timeout), max_in_flight: typed(f.max_in_flight), headers } };
}

/** formatPushMode says how a push queue's jobs are delivered. */
export function formatPushMode(mode: string): string {
  return mode === "when_no_workers" ? "pushed while no worker fetches (spill-over)" : "every job pushed";
}

/** errorText is an API error's message, naming the field it is about when the message does not. */
export function errorText(e: Error | string | null | undefined): string {
  if (!e) return "";
  if (typeof e === "string") return e;
  if (e instanceof ApiError && e.field && !e.message.includes(e.field)) return `${e.field}: ${e.message}`;
  return e.message;
}

/** queueHref is the console path of a queue's detail, with an optional state filter for its search panel. */
export function queueHref(name: string, state?: string): string {
  return queuePath(name) + (state ? "?state=" + encodeURIComponent(state) : "");
}
