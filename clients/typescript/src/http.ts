// The transport: one place for authentication, the namespace header,
// idempotency keys, timeouts, and retries of 429, 502-504 and network
// errors with jittered backoff that honours Retry-After. As the server
// keeps the first answer of an Idempotency-Key, a creating POST that takes
// one (IDEMPOTENT_ROUTES) is retried under its key; a GET is retried; any
// other call only when its caller says a repeat is harmless, or after a
// 429, which is a refusal.

import { ErrorCodes, JobbieError, errorFromResponse } from "./errors.js";

/** How a Client reaches the API. */
export interface ClientOptions {
  /** The gateway's address, e.g. "https://api.jobbie.dev" or "http://127.0.0.1:8080". */
  url: string;
  /** An API key (the bearer token). */
  apiKey: string;
  /** A namespace other than the key's default (X-Jobbie-Namespace). */
  namespace?: string;
  /** Retries of a refused (429, 502-504) or unanswered call. Default 4. */
  retries?: number;
  /** First backoff delay in ms (doubling, jittered, at most maxBackoffMs). Default 100. */
  minBackoffMs?: number;
  /** Longest backoff delay in ms. Default 5000. */
  maxBackoffMs?: number;
  /** The most of a Retry-After honoured, in ms. Default 30000. */
  maxRetryAfterMs?: number;
  /** Bound of one ordinary call in ms. Default 60000. */
  timeoutMs?: number;
  /** The fetch to use; default globalThis.fetch. */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/** One call's options. */
export interface CallOptions {
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
  /** Overrides the client's retries for this call. */
  retries?: number;
  /** Overrides the client's timeout for this call, in ms. */
  timeoutMs?: number;
  /**
   * The Idempotency-Key of a create that takes one (IDEMPOTENT_ROUTES),
   * instead of a random one: a repeat within 24 hours gets the first
   * answer back. Refused on any other call, as the server refuses it.
   */
  idempotencyKey?: string;
}

export interface Request {
  method: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined | null>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Retry this call although it is neither a GET nor keyed (a repeat is harmless). */
  retry?: boolean;
  /** Keep the response body unread (a stream); no timeout applies after the headers. */
  stream?: boolean;
}

export interface Answer<T> {
  status: number;
  headers: Headers;
  data: T;
  response: Response;
}

/**
 * The POST routes that take an Idempotency-Key (wire.IdempotentRoutes;
 * the OpenAPI document's header parameter, which a test compares): the
 * shard's four and the four control serves. The server refuses the
 * header on every other route.
 */
export const IDEMPOTENT_ROUTES: ReadonlySet<string> = new Set([
  "/api/v1/enqueue", "/api/v1/enqueue/batch", "/api/v1/schedules", "/api/v1/webhooks",
  "/api/v1/namespaces", "/api/v1/keys", "/api/v1/roles", "/api/v1/backups",
]);

/** The header saying an answer was given back from an earlier request with the same key. */
export const REPLAYED_HEADER = "Idempotency-Replayed";

/** The answer's body, marked replayed when the server gave back an earlier send's answer. */
export function marked<T extends object>(a: Answer<T>): T & { replayed?: boolean } {
  return a.headers.get(REPLAYED_HEADER) === "true" ? { ...a.data, replayed: true } : a.data;
}

/** A random id (UUID v4) from WebCrypto. */
export function randomId(): string {
  return globalThis.crypto.randomUUID();
}

/** Jittered exponential backoff; a Retry-After takes precedence. */
export class Backoff {
  private n = 0;
  constructor(private readonly minMs = 100, private readonly maxMs = 5000, private readonly maxRetryAfterMs = 30000) {}
  next(err?: unknown): number {
    this.n++;
    if (err instanceof JobbieError && err.retryAfterMs !== undefined && err.retryAfterMs > 0) {
      return Math.min(err.retryAfterMs, this.maxRetryAfterMs);
    }
    const d = Math.min(this.minMs * 2 ** Math.min(this.n - 1, 16), this.maxMs);
    return d / 2 + Math.random() * (d / 2);
  }
  reset(): void {
    this.n = 0;
  }
}

/** Waits ms, or until signal aborts; resolves true if the time elapsed. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export class Transport {
  readonly base: string;
  private readonly opts: Required<Omit<ClientOptions, "namespace" | "fetch" | "headers">> & ClientOptions;

  constructor(opts: ClientOptions) {
    if (!opts.url) throw new TypeError("jobbie: client: no url");
    if (!opts.apiKey) throw new TypeError("jobbie: client: no apiKey");
    this.base = opts.url.replace(/\/+$/, "");
    this.opts = { retries: 4, minBackoffMs: 100, maxBackoffMs: 5000, maxRetryAfterMs: 30000, timeoutMs: 60000, ...opts };
  }

  get namespace(): string | undefined {
    return this.opts.namespace;
  }

  /** A transport like this one in another namespace. */
  withNamespace(namespace: string): Transport {
    return new Transport({ ...this.opts, namespace });
  }

  backoff(): Backoff {
    return new Backoff(this.opts.minBackoffMs, this.opts.maxBackoffMs, this.opts.maxRetryAfterMs);
  }

  url(path: string, query?: Request["query"]): string {
    const u = new URL(this.base + path);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined && v !== null && v !== "") u.searchParams.set(k, String(v));
    }
    return u.toString();
  }

  /** Sends req, retrying what may be retried, and decodes the JSON answer. */
  async call<T>(req: Request, co: CallOptions = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.opts.apiKey}`,
      Accept: req.stream ? "text/event-stream" : "application/json",
      ...this.opts.headers,
      ...req.headers,
    };
    if (this.opts.namespace) headers["X-Jobbie-Namespace"] = this.opts.namespace;
    const keyed = req.method === "POST" && IDEMPOTENT_ROUTES.has(req.path);
    if (co.idempotencyKey !== undefined && !keyed) {
      throw new TypeError(`jobbie: ${req.method} ${req.path} takes no idempotencyKey`);
    }
    if (keyed) headers["Idempotency-Key"] = co.idempotencyKey ?? randomId();
    let body: string | undefined;
    if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers["Content-Type"] = "application/json";
    }
    const url = this.url(req.path, req.query);
    // A 429 is a refusal, applied nowhere: any call may be sent again after one.
    const safe = keyed || req.method === "GET" || req.retry === true;
    const retries = co.retries ?? this.opts.retries;
    const bo = this.backoff();
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once<T>(req, url, headers, body, co);
      } catch (err) {
        if (co.signal?.aborted) throw co.signal.reason ?? err;
        if (!(err instanceof JobbieError) || !err.retryable || attempt >= retries) throw err;
        if (!safe && err.status !== 429) throw err;
        if ((err.retryAfterMs ?? 0) > this.opts.maxRetryAfterMs) throw err; // longer than this client waits
        if (!(await sleep(bo.next(err), co.signal))) throw co.signal?.reason ?? err;
      }
    }
  }

  private async once<T>(req: Request, url: string, headers: Record<string, string>, body: string | undefined,
    co: CallOptions): Promise<Answer<T>> {
    const timeoutMs = co.timeoutMs ?? this.opts.timeoutMs;
    const ctl = new AbortController();
    const onAbort = () => ctl.abort(co.signal?.reason);
    co.signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => ctl.abort(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    const doFetch = this.opts.fetch ?? globalThis.fetch;
    let res: Response;
    let streaming = false;
    try {
      res = await doFetch(url, { method: req.method, headers, body, signal: ctl.signal });
      if (!res.ok) throw await errorFromResponse(res);
      if (req.stream) {
        clearTimeout(timer);
        streaming = true; // the caller's signal goes on aborting the body
        return { status: res.status, headers: res.headers, data: undefined as T, response: res };
      }
      const text = await res.text();
      const data = (text && (res.headers.get("content-type") ?? "").includes("json") ? JSON.parse(text) : text || undefined) as T;
      return { status: res.status, headers: res.headers, data, response: res };
    } catch (err) {
      if (err instanceof JobbieError) throw err;
      if (co.signal?.aborted) throw co.signal.reason ?? err;
      throw new JobbieError({
        status: 0, code: ErrorCodes.network, message: `${req.method} ${req.path}: ${(err as Error)?.message ?? err}`,
        cause: err,
      });
    } finally {
      clearTimeout(timer);
      if (!streaming) co.signal?.removeEventListener("abort", onAbort);
    }
  }
}
