// Typed errors of the API: every non-2xx answer becomes a JobbieError
// carrying the server's stable code, the offending field and the request id.

/** Stable error codes the server answers with (JobbieError.code). */
export const ErrorCodes = {
  badRequest: "bad_request",
  invalidJSON: "invalid_json",
  unauthenticated: "unauthenticated",
  forbidden: "forbidden",
  notFound: "not_found",
  methodNotAllowed: "method_not_allowed",
  conflict: "conflict",
  leaseMismatch: "lease_mismatch",
  tooLarge: "payload_too_large",
  rateLimited: "rate_limited",
  noLeader: "no_leader",
  unavailable: "unavailable",
  internal: "internal",
  shardAnswerTooLarge: "shard_answer_too_large",
  selfHostedBudget: "self_hosted_budget",
  /** 422: an Idempotency-Key sent again with another request. */
  idempotencyKeyReused: "idempotency_key_reused",
  /** 409: sealed under a tenant key since revoked, or the namespace needs a new key to seal again. */
  encryptionKeyRevoked: "encryption_key_revoked",
  /** 409: the namespace's shard has no master key, or one that does not open its keys. */
  encryptionUnavailable: "encryption_unavailable",
  /** Not the server's: the request never got an answer (see cause). */
  network: "network_error",
} as const;

/** A non-2xx answer of the API, or a request that got no answer at all. */
export class JobbieError extends Error {
  /** HTTP status; 0 when the request got no answer (a network error). */
  readonly status: number;
  /** Stable error code (ErrorCodes). */
  readonly code: string;
  /** The offending input field of a 400, if any. */
  readonly field?: string;
  /** The request id, for support. */
  readonly requestId?: string;
  /** When to retry a 429 or 503, in milliseconds; undefined if not given. */
  readonly retryAfterMs?: number;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    field?: string;
    requestId?: string;
    retryAfterMs?: number;
    cause?: unknown;
  }) {
    let text = `jobbie: ${init.status ? init.status + " " : ""}${init.code}: ${init.message}`;
    if (init.field) text += ` (field ${init.field})`;
    if (init.requestId) text += ` [request ${init.requestId}]`;
    super(text, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "JobbieError";
    this.status = init.status;
    this.code = init.code;
    if (init.field) this.field = init.field;
    if (init.requestId) this.requestId = init.requestId;
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
  }

  /** The server's own message, without the status and code. */
  get detail(): string {
    return this.message.replace(/^jobbie: (\d+ )?[a-z_]+: /, "");
  }

  /**
   * Whether the same request may succeed later: rate limited, no leader
   * yet, a dependency unavailable, or no answer at all; never an answer
   * too large to pass on, which the same request gets again.
   */
  get retryable(): boolean {
    if (this.code === ErrorCodes.shardAnswerTooLarge) return false;
    return this.status === 0 || this.status === 429 || this.status === 502 || this.status === 503 || this.status === 504;
  }
}

function hasStatus(err: unknown, status: number): boolean {
  return err instanceof JobbieError && err.status === status;
}

/** err is a 400 (invalid input; field names it). */
export const isBadRequest = (err: unknown): err is JobbieError => hasStatus(err, 400);
/** err is a 401 (missing, invalid or revoked key). */
export const isUnauthenticated = (err: unknown): err is JobbieError => hasStatus(err, 401);
/** err is a 403 (the key may not do this). */
export const isForbidden = (err: unknown): err is JobbieError => hasStatus(err, 403);
/** err is a 404 (unknown, or another tenant's). */
export const isNotFound = (err: unknown): err is JobbieError => hasStatus(err, 404);
/** err is a 409, lease mismatches included. */
export const isConflict = (err: unknown): err is JobbieError => hasStatus(err, 409);
/** err says the job is no longer active under this lease. */
export const isLeaseMismatch = (err: unknown): err is JobbieError =>
  err instanceof JobbieError && err.code === ErrorCodes.leaseMismatch;
/** err is a 422: an Idempotency-Key sent again with another request (field "Idempotency-Key"). */
export const isIdempotencyKeyReused = (err: unknown): err is JobbieError =>
  err instanceof JobbieError && err.code === ErrorCodes.idempotencyKeyReused;
/** err is the 409 of a value sealed under a revoked tenant key (or of a write before a new key is given). */
export const isEncryptionKeyRevoked = (err: unknown): err is JobbieError =>
  err instanceof JobbieError && err.code === ErrorCodes.encryptionKeyRevoked;
/** err is a 413. */
export const isTooLarge = (err: unknown): err is JobbieError => hasStatus(err, 413);
/** err is a 429. */
export const isRateLimited = (err: unknown): err is JobbieError => hasStatus(err, 429);
/** err is a 503 (no leader yet, or a dependency down). */
export const isUnavailable = (err: unknown): err is JobbieError => hasStatus(err, 503);
/** err is a request that never got an answer. */
export const isNetworkError = (err: unknown): err is JobbieError => err instanceof JobbieError && err.status === 0;
/** err is worth retrying later (JobbieError.retryable). */
export const isRetryable = (err: unknown): err is JobbieError => err instanceof JobbieError && err.retryable;

function codeForStatus(status: number): string {
  switch (status) {
    case 400: return ErrorCodes.badRequest;
    case 401: return ErrorCodes.unauthenticated;
    case 403: return ErrorCodes.forbidden;
    case 404: return ErrorCodes.notFound;
    case 405: return ErrorCodes.methodNotAllowed;
    case 409: return ErrorCodes.conflict;
    case 413: return ErrorCodes.tooLarge;
    case 422: return ErrorCodes.idempotencyKeyReused;
    case 429: return ErrorCodes.rateLimited;
    case 502: case 503: case 504: return ErrorCodes.unavailable;
  }
  return ErrorCodes.internal;
}

/** Reads a Retry-After header: delay seconds or an HTTP date; ms, or undefined. */
export function parseRetryAfter(v: string | null, now = Date.now()): number | undefined {
  if (!v) return undefined;
  v = v.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  if (!Number.isNaN(t) && t > now) return t - now;
  return undefined;
}

/**
 * Turns a non-2xx response into a JobbieError. A body that is not the
 * API's error shape (a proxy's HTML page) still yields one, with a code
 * derived from the status.
 */
export async function errorFromResponse(res: Response): Promise<JobbieError> {
  const raw = await res.text().catch(() => "");
  const requestId = res.headers.get("x-request-id") ?? undefined;
  const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"));
  try {
    const body = JSON.parse(raw) as { error?: { code?: string; message?: string; field?: string; request_id?: string } };
    if (body?.error?.code) {
      return new JobbieError({
        status: res.status, code: body.error.code, message: body.error.message ?? "",
        field: body.error.field, requestId: body.error.request_id || requestId, retryAfterMs,
      });
    }
  } catch {
    // not the API's error shape
  }
  let message = raw.trim();
  if (message.length > 200) message = message.slice(0, 200) + "…";
  return new JobbieError({
    status: res.status, code: codeForStatus(res.status), message: message || res.statusText || `HTTP ${res.status}`,
    requestId, retryAfterMs,
  });
}

/**
 * Thrown by fetch and fetchBatch once the worker was drained
 * (client.drainWorker, `jobbie workers drain`): it gets no more jobs. A
 * Worker seeing it stops fetching, finishes what it holds and run()
 * resolves.
 */
export class WorkerDrainingError extends Error {
  constructor(readonly workerId?: string) {
    super(`jobbie: worker ${workerId ?? ""} is draining: no more jobs`.replace("  ", " "));
    this.name = "WorkerDrainingError";
  }
}

/** The header a drained worker's fetch answers with. */
export const WORKER_DRAIN_HEADER = "Jobbie-Worker-Drain";
