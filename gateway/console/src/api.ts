// The console's one way to the gateway: /api/v1 like any client, with the
// session cookie (sent by the browser, never readable by this code), the
// CSRF header on mutations and the namespace header.

export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
    public field?: string,
  ) {
    super(message);
  }
}

/** errorField is the request field an API error names (a 400's), if any. */
export function errorField(e: unknown): string | undefined {
  return e instanceof ApiError ? e.field : undefined;
}

/** isNotFound is true for a 404; with malformedToo for a 400 as well (an id that cannot name anything). */
export function isNotFound(e: unknown, malformedToo = false): boolean {
  return e instanceof ApiError && (e.status === 404 || (malformedToo && e.status === 400));
}

export const CSRF_HEADER = "X-Jobbie-CSRF";
export const NAMESPACE_HEADER = "X-Jobbie-Namespace";

let currentNamespace = "";
let onUnauthenticated: () => void = () => {};

/** setNamespace makes every later request work in ns. */
export function setNamespace(ns: string) {
  currentNamespace = ns;
}
export function namespace(): string {
  return currentNamespace;
}

/** onSignedOut is called when the gateway answers 401: the session ended. */
export function onSignedOut(fn: () => void) {
  onUnauthenticated = fn;
}

export function headers(method: string, extra?: Record<string, string>): Record<string, string> {
  const h: Record<string, string> = { Accept: "application/json" };
  if (method !== "GET" && method !== "HEAD") h[CSRF_HEADER] = "1";
  if (currentNamespace) h[NAMESPACE_HEADER] = currentNamespace;
  return { ...h, ...extra };
}

/** errorOf reads the gateway's error body, or makes one from the status. */
export async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = await res.json();
    const e = body?.error;
    if (e && typeof e.message === "string") return new ApiError(res.status, e.code ?? "", e.message, e.field);
  } catch {
    // not JSON: fall through
  }
  return new ApiError(res.status, "http_" + res.status, `${res.status} ${res.statusText}`);
}

export interface RequestOptions {
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/** apiText sends one request with a body of JSON text as written (a payload may hold integers a JS number cannot carry) and answers the response's text. */
export async function apiText(method: string, path: string, bodyText?: string, opts: RequestOptions = {}): Promise<string> {
  const h = headers(method, opts.headers);
  if (bodyText !== undefined) h["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers: h, body: bodyText, credentials: "same-origin", signal: opts.signal });
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401 && !path.startsWith("/console/api/session")) onUnauthenticated();
    throw err;
  }
  return res.status === 204 ? "" : res.text();
}

/** api sends one request and answers its JSON (undefined for 204). */
export async function api<T = unknown>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
  const text = await apiText(method, path, body === undefined ? undefined : JSON.stringify(body), opts);
  return (text ? JSON.parse(text) : undefined) as T;
}

export const get = <T>(path: string, opts?: RequestOptions) => api<T>("GET", path, undefined, opts);
export const post = <T>(path: string, body?: unknown, opts?: RequestOptions) => api<T>("POST", path, body ?? {}, opts);
export const put = <T>(path: string, body: unknown) => api<T>("PUT", path, body);
export const patch = <T>(path: string, body: unknown) => api<T>("PATCH", path, body);
export const del = <T>(path: string) => api<T>("DELETE", path);

/** qs builds a query string from the defined, non-empty values. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") continue;
    u.set(k, String(v));
  }
  const s = u.toString();
  return s ? "?" + s : "";
}

/** enc escapes one path segment. */
export const enc = encodeURIComponent;
