// The Schedules screen's pure logic: the API's shapes, the dialog's form
// and the request it sends, run times in a schedule's own time zone, and
// the list's filter.
import { contains } from "../lib/match";

/** Schedule is wire.Schedule. */
export interface Schedule {
  id: string;
  name: string;
  queue: string;
  cron: string;
  timezone: string;
  payload: unknown;
  priority: string;
  unique_key: string | null;
  max_retries: number;
  /** max_retries_default: the schedule left max_retries out, and its jobs take their queue's default (max_retries shows it as it is now). */
  max_retries_default?: boolean;
  enabled: boolean;
  next_run: string | null;
  last_run: string | null;
  last_job_id: string | null;
  created_at: string | null;
  updated_at: string | null;
}

export interface ScheduleList {
  schedules: Schedule[];
}

/** SchedulePreview is the answer to POST /api/v1/schedules/preview. */
export interface SchedulePreview {
  cron: string;
  timezone: string;
  next_runs: string[];
}

export const PRIORITIES = ["normal", "high", "critical"] as const;
export const DEFAULT_MAX_RETRIES = 3;
export const MAX_MAX_RETRIES = 1000; // wire.MaxMaxRetries
export const MAX_NAME_BYTES = 128; // wire.MaxScheduleName
export const ID_PREFIX = "sch_"; // wire.ScheduleIDPrefix: names may not start with it

/** ScheduleForm is the dialog's fields, as typed. */
export interface ScheduleForm {
  name: string;
  queue: string;
  cron: string;
  timezone: string;
  payload: string;
  priority: string;
  unique_key: string;
  max_retries: string;
  enabled: boolean;
}

export function emptyForm(): ScheduleForm {
  return {
    name: "",
    queue: "",
    cron: "",
    timezone: "UTC",
    payload: "",
    priority: "normal",
    unique_key: "",
    max_retries: "", // the queue's default, as the API takes a schedule without one
    enabled: true,
  };
}

/**
 * formOf fills the form from a stored schedule. rawPayload, when given, is
 * the payload's JSON text as the server sent it: it is shown as is when
 * parsing it would change it (integers past 2^53 lose digits in a JS
 * number), so an edit does not quietly alter the payload.
 */
export function formOf(s: Schedule, rawPayload?: string): ScheduleForm {
  let payload = "";
  if (s.payload !== null && s.payload !== undefined) {
    payload = JSON.stringify(s.payload, null, 2);
    if (rawPayload !== undefined && rawPayload !== "null" && JSON.stringify(JSON.parse(rawPayload)) !== rawPayload) payload = rawPayload;
  }
  return {
    name: s.name,
    queue: s.queue,
    cron: s.cron,
    timezone: s.timezone || "UTC",
    payload,
    priority: s.priority || "normal",
    unique_key: s.unique_key ?? "",
    // A schedule that takes its queue's default keeps doing so when edited.
    max_retries: s.max_retries_default ? "" : String(s.max_retries),
    enabled: s.enabled,
  };
}

/** FieldError is a refusal naming the form field at fault. */
export interface FieldError {
  field: keyof ScheduleForm;
  message: string;
}

/**
 * requestBody checks the form as far as the browser can (the server checks
 * everything again) and answers the JSON text of a wire.ScheduleRequest
 * with every field set, since PUT replaces the whole schedule, but
 * max_retries when it is blank: the queue's default, then and later. The
 * payload goes in as typed, not re-serialised, so its numbers keep their
 * digits.
 */
export function requestBody(f: ScheduleForm): { body: string } | { error: FieldError } {
  // The name goes as typed: trimming it on an edit would rename the schedule.
  const name = f.name;
  if (!name.trim()) return { error: { field: "name", message: "Name is required." } };
  if (new TextEncoder().encode(name).length > MAX_NAME_BYTES)
    return { error: { field: "name", message: `Name must be at most ${MAX_NAME_BYTES} bytes.` } };
  if (name.startsWith(ID_PREFIX)) return { error: { field: "name", message: `Name must not start with "${ID_PREFIX}", which marks schedule ids.` } };
  const queue = f.queue.trim();
  if (!queue) return { error: { field: "queue", message: "Queue is required." } };
  const cron = f.cron.trim();
  if (!cron) return { error: { field: "cron", message: "Cron is required." } };
  const payload = f.payload.trim();
  if (payload) {
    const err = jsonError(payload);
    if (err) return { error: { field: "payload", message: "Payload is not valid JSON: " + err } };
  }
  const mr = f.max_retries.trim();
  if (mr !== "" && (!/^\d+$/.test(mr) || Number(mr) > MAX_MAX_RETRIES))
    return { error: { field: "max_retries", message: `Max retries must be a whole number from 0 to ${MAX_MAX_RETRIES}, or blank for the queue's default.` } };
  const rest = {
    name,
    queue,
    cron,
    timezone: f.timezone.trim() || "UTC",
    priority: f.priority || "normal",
    unique_key: f.unique_key,
    ...(mr === "" ? {} : { max_retries: Number(mr) }),
    enabled: f.enabled,
  };
  const text = JSON.stringify(rest);
  return { body: payload ? text.slice(0, -1) + ',"payload":' + payload + "}" : text };
}

/** jsonError is why text is not JSON, or "" when it is. */
export function jsonError(text: string): string {
  try {
    JSON.parse(text);
    return "";
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * rawMember is the JSON text of member key of the top-level object in
 * text, or undefined: how the payload reads before JSON.parse turns its
 * numbers into doubles.
 */
export function rawMember(text: string, key: string): string | undefined {
  let depth = 0;
  let i = 0;
  const n = text.length;
  const str = () => {
    // i is at a quote: skip the string, answer its decoded value
    const start = i++;
    while (i < n && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      const s = str();
      if (depth !== 1) continue;
      let j = i;
      while (j < n && /\s/.test(text[j])) j++;
      if (text[j] !== ":") continue; // a value, not a member name
      if (s !== key) continue;
      i = j + 1;
      while (i < n && /\s/.test(text[i])) i++;
      const from = i;
      let d = 0;
      while (i < n) {
        const v = text[i];
        if (v === '"') {
          str();
          if (d === 0) break;
          continue;
        }
        if (v === "{" || v === "[") d++;
        else if (v === "}" || v === "]") {
          if (d === 0) break;
          d--;
          if (d === 0) {
            i++;
            break;
          }
        } else if (v === "," && d === 0) break;
        i++;
      }
      return text.slice(from, i).trim();
    }
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    i++;
  }
  return undefined;
}

/**
 * formatRun writes an instant as the wall time in time zone tz:
 * "Mon 2026-03-02 09:00 GMT+1" (seconds only when not zero). An unknown
 * zone falls back to UTC.
 */
export function formatRun(at: string | number | Date, tz: string): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return "—";
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = runFormat(tz || "UTC").formatToParts(d);
  } catch {
    parts = runFormat("UTC").formatToParts(d);
  }
  const p: Record<string, string> = {};
  for (const x of parts) p[x.type] = x.value;
  const sec = p.second && p.second !== "00" ? ":" + p.second : "";
  return `${p.weekday} ${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}${sec} ${p.timeZoneName}`;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function runFormat(tz: string): Intl.DateTimeFormat {
  let f = formats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      weekday: "short",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
      timeZoneName: "short",
    });
    formats.set(tz, f);
  }
  return f;
}

/** timeZones is every IANA zone the browser knows, UTC first. */
export function timeZones(): string[] {
  let all: string[] = [];
  try {
    all = Intl.supportedValuesOf("timeZone");
  } catch {
    // an older browser: the field still takes any name, which the server checks
  }
  return ["UTC", ...all.filter((z) => z !== "UTC")];
}

/** matches reports whether s passes the list's filter text (name, queue, cron or time zone, any case). */
export function matches(s: Schedule, filter: string): boolean {
  return contains(filter, s.name, s.queue, s.cron, s.timezone);
}
