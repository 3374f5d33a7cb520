// The enqueue form's reading: the fields a person types turned into a
// wire.EnqueueRequest, with a clear message for each field that is wrong
// before anything is sent.

export interface EnqueueForm {
  queue: string;
  payload: string;
  priority: string; // "" for the queue's default
  maxRetries: string;
  when: "now" | "delay" | "at";
  delay: string; // "30s", "5m", "1h30m", "2d" or seconds
  at: string; // a datetime-local value, the browser's local time
  uniqueKey: string;
  uniquePeriod: string; // "1h" or seconds
  tags: string; // key=value lines
  backoff: string; // "" for the default
  expireAfter: string;
  concurrencyKey: string;
  fairnessKey: string;
}

export const emptyForm: EnqueueForm = {
  queue: "",
  payload: "{}",
  priority: "",
  maxRetries: "",
  when: "now",
  delay: "",
  at: "",
  uniqueKey: "",
  uniquePeriod: "",
  tags: "",
  backoff: "",
  expireAfter: "",
  concurrencyKey: "",
  fairnessKey: "",
};

export interface EnqueueRequest {
  queue: string;
  payload?: unknown;
  priority?: string;
  max_retries?: number;
  scheduled_at?: string;
  unique_key?: string;
  unique_period?: number;
  tags?: Record<string, string>;
  retry_backoff?: string;
  expire_after?: string;
  concurrency_key?: string;
  fairness_key?: string;
}

// Limits of wire/limits.go, checked here to say what is wrong before sending.
const MAX_TAGS = 32;
const MAX_TAG_KEY = 64;
const MAX_TAG_VALUE = 256;
const MAX_UNIQUE_KEY = 256;
const MAX_MAX_RETRIES = 1000;
const MAX_PAYLOAD = 1 << 20;
const MAX_FAIRNESS_KEY = 128; // a concurrency_key's or fairness_key's bytes

const bytes = (s: string) => new TextEncoder().encode(s).length;

/** parsePayload reads the payload text: empty is no payload; otherwise it must be JSON. */
export function parsePayload(text: string): { value?: unknown; error?: string } {
  if (text.trim() === "") return {};
  if (bytes(text) > MAX_PAYLOAD) return { error: "The payload is over 1 MiB." };
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { error: "The payload is not valid JSON: " + (e as Error).message };
  }
}

/** parseTags reads key=value lines (blank lines skipped). */
export function parseTags(text: string): { tags?: Record<string, string>; error?: string } {
  const tags: Record<string, string> = {};
  let n = 0;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) return { error: `Tag line ${i + 1} is not key=value: ${line}` };
    const k = line.slice(0, eq).trim();
    const v = line.slice(eq + 1).trim();
    if (!k) return { error: `Tag line ${i + 1} has no key.` };
    if (k in tags) return { error: `Tag ${k} is given twice.` };
    if (bytes(k) > MAX_TAG_KEY) return { error: `Tag key ${k} is over ${MAX_TAG_KEY} bytes.` };
    if (bytes(v) > MAX_TAG_VALUE) return { error: `The value of tag ${k} is over ${MAX_TAG_VALUE} bytes.` };
    tags[k] = v;
    if (++n > MAX_TAGS) return { error: `A job has at most ${MAX_TAGS} tags.` };
  }
  return n ? { tags } : {};
}

const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** parseSpan reads "90", "30s", "1h30m", "2d", "500ms" as milliseconds; undefined when it is not one. */
export function parseSpan(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000;
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(t)) return undefined;
  let ms = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) ms += Number(m[1]) * unitMs[m[2]];
  return ms;
}

/** goDuration writes milliseconds the way the API reads durations: "90s", "1.5s". */
export function goDuration(ms: number): string {
  return ms % 1000 === 0 ? ms / 1000 + "s" : ms + "ms";
}

/** buildRequest turns the form into a request, or answers the errors by field. */
export function buildRequest(f: EnqueueForm, now: Date = new Date()): { req?: EnqueueRequest; errors?: Record<string, string> } {
  const errors: Record<string, string> = {};
  const req: EnqueueRequest = { queue: f.queue.trim() };
  if (!req.queue) errors.queue = "Choose or type a queue.";
  const p = parsePayload(f.payload);
  if (p.error) errors.payload = p.error;
  else if (p.value !== undefined) req.payload = p.value;
  if (f.priority) req.priority = f.priority;
  if (f.maxRetries.trim() !== "") {
    const n = Number(f.maxRetries);
    if (!Number.isInteger(n) || n < 0 || n > MAX_MAX_RETRIES) errors.maxRetries = `Max retries is a whole number from 0 to ${MAX_MAX_RETRIES}.`;
    else req.max_retries = n;
  }
  if (f.when === "delay") {
    const ms = parseSpan(f.delay);
    if (ms === undefined || ms <= 0) errors.delay = 'Write the delay as 30s, 5m, 1h30m or 2d.';
    else req.scheduled_at = new Date(now.getTime() + ms).toISOString();
  } else if (f.when === "at") {
    const t = f.at ? new Date(f.at) : undefined; // datetime-local: the browser's time zone
    if (!t || Number.isNaN(t.getTime())) errors.at = "Choose the date and time to run the job.";
    else req.scheduled_at = t.toISOString();
  }
  const uk = f.uniqueKey.trim();
  if (uk) {
    if (bytes(uk) > MAX_UNIQUE_KEY) errors.uniqueKey = `The unique key is over ${MAX_UNIQUE_KEY} bytes.`;
    req.unique_key = uk;
  }
  if (f.uniquePeriod.trim()) {
    const ms = parseSpan(f.uniquePeriod);
    if (!uk) errors.uniquePeriod = "A unique period needs a unique key.";
    else if (ms === undefined || ms < 1000) errors.uniquePeriod = "Write the period as 1h, 30m or a number of seconds.";
    else req.unique_period = Math.ceil(ms / 1000);
  }
  const tg = parseTags(f.tags);
  if (tg.error) errors.tags = tg.error;
  else if (tg.tags) req.tags = tg.tags;
  if (f.backoff) req.retry_backoff = f.backoff;
  if (f.expireAfter.trim()) {
    const ms = parseSpan(f.expireAfter);
    if (ms === undefined || ms <= 0) errors.expireAfter = "Write the time to live as 10m, 1h or a number of seconds.";
    else req.expire_after = goDuration(ms);
  }
  // Keyed fairness: an empty key is none; the server judges the characters.
  for (const [field, key, name] of [
    ["concurrencyKey", "concurrency_key", "concurrency key"],
    ["fairnessKey", "fairness_key", "fairness key"],
  ] as const) {
    const v = f[field].trim();
    if (!v) continue;
    if (bytes(v) > MAX_FAIRNESS_KEY) errors[field] = `The ${name} is over ${MAX_FAIRNESS_KEY} bytes.`;
    else req[key] = v;
  }
  return Object.keys(errors).length ? { errors } : { req };
}
