// The job search's filters in their three shapes: the URL query (so a
// reload or a shared link keeps them; times in UTC, so a link means the
// same in every time zone), the form (times in the viewer's local time) and
// the body of POST /api/v1/jobs/search and of a bulk request's filter.
// Pure functions: no DOM, no requests.

export const STATES = ["pending", "scheduled", "active", "retrying", "completed", "dead", "cancelled", "held"] as const;
export const PRIORITIES = ["critical", "high", "normal"] as const;
export const SORTS = ["created_at", "updated_at", "scheduled_at", "started_at", "completed_at", "priority", "attempt"] as const;
export const DEFAULT_SORT = "created_at";
export const DEFAULT_ORDER = "desc";
export const DEFAULT_LIMIT = 50;
export const LIMITS = [25, 50, 100, 200] as const;
/** the server's bound of attempt_min and attempt_max */
export const MAX_ATTEMPT = 2 ** 30;

/** the time filters, each with _after and _before */
export const TIME_FIELDS = ["created", "scheduled", "started", "completed", "expire"] as const;
export type TimeField = (typeof TIME_FIELDS)[number];
export type TimeKey = `${TimeField}_${"after" | "before"}`;
export const TIME_KEYS: TimeKey[] = TIME_FIELDS.flatMap((f) => [`${f}_after`, `${f}_before`] as TimeKey[]);

/** the filter fields that are plain text */
export const TEXT_KEYS = [
  "queue",
  "payload_contains",
  "payload_jq",
  "worker_id",
  "error_contains",
  "batch_id",
  "unique_key",
  "job_id_prefix",
  "concurrency_key",
  "fairness_key",
] as const;
export type TextKey = (typeof TEXT_KEYS)[number];
// Names and ids: surrounding spaces are a typing slip. Substrings, jq and
// unique keys are sent as typed.
const TRIMMED: ReadonlySet<string> = new Set(["queue", "worker_id", "batch_id", "job_id_prefix"]);

/** SearchFilter is wire.SearchFilter: every field set must match. Times are RFC 3339 strings. */
export type SearchFilter = Partial<Record<TextKey | TimeKey, string>> & {
  state?: string[];
  priority?: string;
  tags?: Record<string, string>;
  has_errors?: boolean;
  attempt_min?: number;
  attempt_max?: number;
};
export type FilterKey = keyof SearchFilter;
export const FILTER_KEYS: FilterKey[] = [
  "queue",
  "state",
  "priority",
  "tags",
  "payload_contains",
  "payload_jq",
  ...TIME_KEYS,
  "worker_id",
  "has_errors",
  "error_contains",
  "batch_id",
  "unique_key",
  "attempt_min",
  "attempt_max",
  "job_id_prefix",
  "concurrency_key",
  "fairness_key",
];

/** Search is what the URL holds: the filter and the order of the results. */
export interface Search {
  filter: SearchFilter;
  sort: string;
  order: "asc" | "desc";
  limit: number;
}

/** FormValues is the filter form: every control's raw text (times as a datetime-local value in local time). */
export type FormValues = Record<TextKey | TimeKey, string> & {
  state: string[];
  priority: string;
  /** "key=value" pairs separated by commas or new lines */
  tags: string;
  /** "", "true" or "false" */
  has_errors: string;
  attempt_min: string;
  attempt_max: string;
};

/** Problems maps a field to what is wrong with its value. */
export type Problems = Partial<Record<FilterKey | "sort" | "order" | "limit", string>>;

export function emptyForm(): FormValues {
  const f: Record<string, unknown> = { state: [], priority: "", tags: "", has_errors: "", attempt_min: "", attempt_max: "" };
  for (const k of [...TEXT_KEYS, ...TIME_KEYS]) f[k] = "";
  return f as FormValues;
}

// ---- times

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** isoUTC writes a time as RFC 3339 in UTC, without milliseconds when there are none. */
export function isoUTC(d: Date): string {
  const s = d.toISOString();
  return s.endsWith(".000Z") ? s.slice(0, -5) + "Z" : s;
}

/** localInput writes an RFC 3339 time (or a date, midnight UTC) as a datetime-local value in local time; "" if it is not a time. */
export function localInput(iso: string): string {
  const d = parseTime(iso);
  if (!d) return "";
  const base = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (d.getMilliseconds()) return `${base}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  return d.getSeconds() ? `${base}:${pad(d.getSeconds())}` : base;
}

const LOCAL_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/;
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

// Date rolls 2026-02-31 over into March where the server refuses it: check
// the calendar ourselves.
function validParts(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): boolean {
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return mo >= 1 && mo <= 12 && d >= 1 && d <= days && h < 24 && mi < 60 && s < 60;
}

/** fromLocalInput reads a datetime-local value (local time) as a Date; null if it is not one. */
export function fromLocalInput(v: string): Date | null {
  const m = LOCAL_RE.exec(v.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map((x) => Number(x ?? 0));
  const ms = m[7] ? Number(m[7].padEnd(3, "0")) : 0;
  if (!validParts(y, mo, d, h, mi, s)) return null;
  return new Date(y, mo - 1, d, h, mi, s, ms);
}

/** parseTime reads an RFC 3339 time or a bare date (midnight UTC, as the server reads it); null otherwise. */
export function parseTime(s: string): Date | null {
  const v = s.trim();
  if (DATE_RE.test(v)) {
    const [y, mo, d] = v.split("-").map(Number);
    return validParts(y, mo, d) ? new Date(v + "T00:00:00Z") : null;
  }
  const m = RFC3339_RE.exec(v);
  if (!m) return null;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map((x) => Number(x ?? 0));
  if (!validParts(y, mo, d, h, mi, sec)) return null;
  const t = new Date(v.replace(" ", "T"));
  return Number.isNaN(t.getTime()) ? null : t;
}

// ---- parsing values (shared by the URL and the form)

function parseStates(names: string[], problems: Problems): string[] | undefined {
  const out: string[] = [];
  for (const raw of names) {
    for (const n of raw.split(",").map((x) => x.trim()).filter(Boolean)) {
      if (!(STATES as readonly string[]).includes(n)) problems.state = `unknown state "${n}"`;
      else if (!out.includes(n)) out.push(n);
    }
  }
  return out.length ? out : undefined;
}

/** parseTags reads "k=v, k2=v2" (commas or new lines) into tags. */
export function parseTags(text: string, problems: Problems): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  let n = 0;
  for (const part of text.split(/[,\n]/)) {
    const p = part.trim();
    if (!p) continue;
    const i = p.indexOf("=");
    if (i <= 0) {
      problems.tags = `write each tag as key=value; got "${p}"`;
      continue;
    }
    const k = p.slice(0, i).trim();
    if (k in out) {
      problems.tags = `tag "${k}" is given twice`;
      continue;
    }
    out[k] = p.slice(i + 1).trim();
    n++;
  }
  if (n > 32) problems.tags = `at most 32 tags; got ${n}`;
  return n ? out : undefined;
}

/** tagsText writes tags as the form shows them. */
export function tagsText(tags: Record<string, string> | undefined): string {
  return tags ? Object.entries(tags).map(([k, v]) => `${k}=${v}`).join(", ") : "";
}

function parseAttempt(key: "attempt_min" | "attempt_max", v: string, problems: Problems): number | undefined {
  const s = v.trim();
  if (!s) return undefined;
  if (!/^\d+$/.test(s) || Number(s) > MAX_ATTEMPT) {
    problems[key] = `${key === "attempt_min" ? "Attempts from" : "Attempts to"} must be a whole number from 0 to ${MAX_ATTEMPT}; got "${s}"`;
    return undefined;
  }
  return Number(s);
}

function parseBool(v: string, problems: Problems): boolean | undefined {
  if (v === "") return undefined;
  if (v === "true" || v === "false") return v === "true";
  problems.has_errors = `must be true or false; got "${v}"`;
  return undefined;
}

// parseRaw reads every field's text into a filter; readTime reads a time
// (local for the form, RFC 3339 for the URL). Bad values are left out and
// said in problems.
function parseRaw(raw: FormValues, problems: Problems, readTime: (v: string) => Date | null): SearchFilter {
  const f: SearchFilter = {};
  for (const k of TEXT_KEYS) {
    const v = TRIMMED.has(k) ? raw[k].trim() : raw[k];
    if (v.trim() !== "") f[k] = v;
  }
  const st = parseStates(raw.state, problems);
  if (st) f.state = st;
  const pr = raw.priority.trim();
  if (pr) {
    if ((PRIORITIES as readonly string[]).includes(pr)) f.priority = pr;
    else problems.priority = `unknown priority "${pr}"; use critical, high or normal`;
  }
  const tags = parseTags(raw.tags, problems);
  if (tags) f.tags = tags;
  for (const k of TIME_KEYS) {
    const v = raw[k].trim();
    if (!v) continue;
    const t = readTime(v);
    if (t) f[k] = DATE_RE.test(v) ? v : isoUTC(t);
    else problems[k] = `not a date and time: "${v}"`;
  }
  for (const field of TIME_FIELDS) {
    const a = f[`${field}_after`], b = f[`${field}_before`];
    if (a && b && parseTime(a)!.getTime() > parseTime(b)!.getTime()) problems[`${field}_after`] = `${label(`${field}_after`)} is later than ${label(`${field}_before`).toLowerCase()}`;
  }
  const hb = parseBool(raw.has_errors.trim(), problems);
  if (hb !== undefined) f.has_errors = hb;
  const amin = parseAttempt("attempt_min", raw.attempt_min, problems);
  const amax = parseAttempt("attempt_max", raw.attempt_max, problems);
  if (amin !== undefined) f.attempt_min = amin;
  if (amax !== undefined) f.attempt_max = amax;
  if (amin !== undefined && amax !== undefined && amin > amax) problems.attempt_min = `Attempts from (${amin}) is more than attempts to (${amax})`;
  return f;
}

// ---- the form

/** filterFromForm reads the form: the filter, and what is wrong (bad values are left out of the filter). */
export function filterFromForm(form: FormValues): { filter: SearchFilter; problems: Problems } {
  const problems: Problems = {};
    // The form's own control gives local time; a pasted RFC 3339 time or date is taken as written.
  const filter = parseRaw(form, problems, (v) => fromLocalInput(v) ?? parseTime(v));
  return { filter, problems };
}

/** formFromFilter fills the form from a filter (times shown in local time). */
export function formFromFilter(f: SearchFilter): FormValues {
  const form = emptyForm();
  for (const k of TEXT_KEYS) form[k] = f[k] ?? "";
  for (const k of TIME_KEYS) form[k] = f[k] ? localInput(f[k]!) : "";
  form.state = f.state ? [...f.state] : [];
  form.priority = f.priority ?? "";
  form.tags = tagsText(f.tags);
  form.has_errors = f.has_errors === undefined ? "" : String(f.has_errors);
  form.attempt_min = f.attempt_min === undefined ? "" : String(f.attempt_min);
  form.attempt_max = f.attempt_max === undefined ? "" : String(f.attempt_max);
  return form;
}

// ---- the URL

/** the query keys the search owns (others on the page are left alone) */
export const QUERY_KEYS: ReadonlySet<string> = new Set([...FILTER_KEYS.filter((k) => k !== "tags"), "tag", "sort", "order", "limit"]);

/** searchFromQuery reads the URL's query: states and tags may repeat (state=dead&tag=k=v); times are RFC 3339. */
export function searchFromQuery(q: URLSearchParams): { search: Search; problems: Problems } {
  const problems: Problems = {};
  const raw = emptyForm();
  for (const k of [...TEXT_KEYS, ...TIME_KEYS] as const) raw[k] = q.get(k) ?? "";
  raw.state = q.getAll("state");
  raw.priority = q.get("priority") ?? "";
  raw.tags = q.getAll("tag").join("\n");
  raw.has_errors = q.get("has_errors") ?? "";
  raw.attempt_min = q.get("attempt_min") ?? "";
  raw.attempt_max = q.get("attempt_max") ?? "";
  const filter = parseRaw(raw, problems, parseTime);
  let sort = q.get("sort") ?? DEFAULT_SORT;
  if (!(SORTS as readonly string[]).includes(sort)) {
    problems.sort = `unknown sort "${sort}"`;
    sort = DEFAULT_SORT;
  }
  let order = q.get("order") ?? DEFAULT_ORDER;
  if (order !== "asc" && order !== "desc") {
    problems.order = `order must be asc or desc; got "${order}"`;
    order = DEFAULT_ORDER;
  }
  let limit = DEFAULT_LIMIT;
  const l = q.get("limit");
  if (l !== null) {
    if (/^\d+$/.test(l) && Number(l) >= 1 && Number(l) <= 1000) limit = Number(l);
    else problems.limit = `limit must be a whole number from 1 to 1000; got "${l}"`;
  }
  return { search: { filter, sort, order: order as "asc" | "desc", limit }, problems };
}

/** queryFromSearch writes a search into base's query, replacing only the keys the search owns; defaults are left out. */
export function queryFromSearch(s: Search, base: URLSearchParams = new URLSearchParams()): URLSearchParams {
  const q = new URLSearchParams();
  for (const [k, v] of base) if (!QUERY_KEYS.has(k)) q.append(k, v);
  const f = cleanFilter(s.filter);
  for (const k of FILTER_KEYS) {
    const v = f[k];
    if (v === undefined) continue;
    if (k === "state") for (const st of v as string[]) q.append("state", st);
    else if (k === "tags") for (const [tk, tv] of Object.entries(v as Record<string, string>)) q.append("tag", `${tk}=${tv}`);
    else q.set(k, String(v));
  }
  if (s.sort !== DEFAULT_SORT) q.set("sort", s.sort);
  if (s.order !== DEFAULT_ORDER) q.set("order", s.order);
  if (s.limit !== DEFAULT_LIMIT) q.set("limit", String(s.limit));
  return q;
}

// ---- fixed fields and request bodies

/** withFixed applies the fields a screen fixes over the user's: a fixed field cannot be changed from the form or the URL. */
export function withFixed(f: SearchFilter, fixed: SearchFilter = {}): SearchFilter {
  const out: SearchFilter = { ...f };
  for (const [k, v] of Object.entries(fixed)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/** withoutFixed drops the fields a screen fixes (what the URL and the form hold). */
export function withoutFixed(f: SearchFilter, fixed: SearchFilter = {}): SearchFilter {
  const out: SearchFilter = { ...f };
  for (const k of Object.keys(fixed)) delete (out as Record<string, unknown>)[k];
  return out;
}

/** isEmpty reports whether the filter sets nothing (a bulk request needs at least one field). */
export function isEmpty(f: SearchFilter): boolean {
  return FILTER_KEYS.every((k) => f[k] === undefined);
}

/** cleanFilter is the filter as JSON wants it: only the fields set, in a stable order. */
export function cleanFilter(f: SearchFilter): SearchFilter {
  const out: Record<string, unknown> = {};
  for (const k of FILTER_KEYS) {
    const v = f[k];
    if (v === undefined || v === "" || (Array.isArray(v) && v.length === 0)) continue;
    if (k === "tags" && Object.keys(v as object).length === 0) continue;
    out[k] = v;
  }
  return out as SearchFilter;
}

/** searchBody is POST /api/v1/jobs/search's body. */
export function searchBody(filter: SearchFilter, page: { sort?: string; order?: string; cursor?: string; limit?: number }): Record<string, unknown> {
  const b: Record<string, unknown> = { ...cleanFilter(filter) };
  if (page.sort && page.sort !== DEFAULT_SORT) b.sort = page.sort;
  if (page.order && page.order !== DEFAULT_ORDER) b.order = page.order;
  if (page.cursor) b.cursor = page.cursor;
  if (page.limit) b.limit = page.limit;
  return b;
}

export type BulkAction = "retry" | "delete" | "cancel" | "move" | "change_priority";

/** bulkBody is POST /api/v1/jobs/bulk's body: by ids, or by filter (then it is not limited to one page). */
export function bulkBody(
  action: BulkAction,
  target: { ids: string[] } | { filter: SearchFilter },
  opts: { queue?: string; priority?: string } = {},
): Record<string, unknown> {
  const b: Record<string, unknown> = "ids" in target ? { job_ids: target.ids } : { filter: cleanFilter(target.filter) };
  b.action = action;
  if (action === "move") b.move_to_queue = opts.queue;
  if (action === "change_priority") b.priority = opts.priority;
  return b;
}

// ---- words

const LABELS: Record<string, string> = {
  queue: "Queue",
  state: "State",
  priority: "Priority",
  tags: "Tags",
  payload_contains: "Payload contains",
  payload_jq: "jq filter",
  worker_id: "Worker",
  has_errors: "Has errors",
  error_contains: "Error contains",
  batch_id: "Batch",
  unique_key: "Unique key",
  concurrency_key: "Concurrency key",
  fairness_key: "Fairness key",
  attempt_min: "Attempts from",
  attempt_max: "Attempts to",
  job_id_prefix: "Job id starts with",
  created_after: "Created after",
  created_before: "Created before",
  scheduled_after: "Scheduled after",
  scheduled_before: "Scheduled before",
  started_after: "Started after",
  started_before: "Started before",
  completed_after: "Completed after",
  completed_before: "Completed before",
  expire_after: "Expires after",
  expire_before: "Expires before",
  sort: "Sort",
  order: "Order",
  limit: "Per page",
};

/** label is a field's name as the form shows it. */
export function label(k: string): string {
  return LABELS[k] ?? k;
}

/** localTime writes a time for a sentence, in local time ("2026-02-10 09:30"). */
export function localTime(iso: string): string {
  return localInput(iso).replace("T", " ") || iso;
}

/** describeFilter says in words what a filter selects: `dead jobs in emails.send matching error contains "SMTP"`. */
export function describeFilter(f: SearchFilter, time: (iso: string) => string = localTime): string {
  const states = f.state?.length ? f.state.join(" or ") + " jobs" : "jobs";
  let s = states + (f.queue ? ` in ${f.queue}` : " in every queue");
  const conds: string[] = [];
  const q = (v: string) => JSON.stringify(v);
  if (f.priority) conds.push(`priority ${f.priority}`);
  for (const [k, v] of Object.entries(f.tags ?? {})) conds.push(`tag ${k}=${v}`);
  if (f.payload_contains) conds.push(`payload contains ${q(f.payload_contains)}`);
  if (f.payload_jq) conds.push(`jq ${f.payload_jq}`);
  if (f.error_contains) conds.push(`error contains ${q(f.error_contains)}`);
  if (f.has_errors !== undefined) conds.push(f.has_errors ? "with errors" : "without errors");
  for (const field of TIME_FIELDS) {
    const verb = field === "expire" ? "expiring" : field;
    const a = f[`${field}_after`], b = f[`${field}_before`];
    if (a && b) conds.push(`${verb} between ${time(a)} and ${time(b)}`);
    else if (a) conds.push(`${verb} from ${time(a)}`);
    else if (b) conds.push(`${verb} before ${time(b)}`);
  }
  if (f.worker_id) conds.push(`run by worker ${f.worker_id}`);
  if (f.batch_id) conds.push(`in batch ${f.batch_id}`);
  if (f.unique_key) conds.push(`unique key ${q(f.unique_key)}`);
  if (f.concurrency_key) conds.push(`concurrency key ${q(f.concurrency_key)}`);
  if (f.fairness_key) conds.push(`fairness key ${q(f.fairness_key)}`);
  if (f.attempt_min !== undefined && f.attempt_max !== undefined) conds.push(`${f.attempt_min}–${f.attempt_max} attempts`);
  else if (f.attempt_min !== undefined) conds.push(`at least ${f.attempt_min} attempts`);
  else if (f.attempt_max !== undefined) conds.push(`at most ${f.attempt_max} attempts`);
  if (f.job_id_prefix) conds.push(`id starting ${f.job_id_prefix}`);
  if (conds.length) s += " matching " + conds.join(" and ");
  return s;
}
