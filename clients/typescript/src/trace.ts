// W3C Trace Context on enqueues (docs/api/jobs.md, "Trace context"): the
// checks the server makes, made before sending, so a bad value is refused
// naming its field without a round trip.

import { ErrorCodes, JobbieError } from "./errors.js";

/** A job's W3C trace context. */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

export const MAX_TRACESTATE_BYTES = 512;
export const MAX_TRACESTATE_MEMBERS = 32;

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const KEY = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/;
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

function bad(field: string, message: string): JobbieError {
  // The answer the server would give.
  return new JobbieError({ status: 400, code: ErrorCodes.badRequest, message, field });
}

/** Throws a 400 JobbieError naming field unless v is a traceparent of version 00, neither id all zeros. */
export function checkTraceparent(v: unknown, field = "traceparent"): void {
  const m = typeof v === "string" ? TRACEPARENT.exec(v) : null;
  if (!m) throw bad(field, `${field} must be 00-<32 lowercase hex trace id>-<16 hex parent id>-<2 hex flags>`);
  if (/^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) throw bad(field, `${field}'s trace id and parent id must not be all zeros`);
}

/** Throws a 400 JobbieError naming field unless v is a W3C tracestate within the server's limits. */
export function checkTracestate(v: unknown, field = "tracestate"): void {
  if (typeof v !== "string") throw bad(field, `${field} must be a string`);
  const bytes = new TextEncoder().encode(v).length;
  if (bytes > MAX_TRACESTATE_BYTES) throw bad(field, `${field} is ${bytes} bytes; the limit is ${MAX_TRACESTATE_BYTES}`);
  const seen = new Set<string>();
  for (const raw of v.split(",")) {
    const member = raw.replace(/^[ \t]+|[ \t]+$/g, "");
    if (!member) continue;
    const eq = member.indexOf("=");
    const key = eq < 0 ? "" : member.slice(0, eq);
    if (eq < 0 || !KEY.test(key) || !VALUE.test(member.slice(eq + 1))) {
      throw bad(field, `${field} member ${JSON.stringify(member)} must be key=value of W3C's form`);
    }
    if (seen.has(key)) throw bad(field, `${field} names ${JSON.stringify(key)} twice`);
    seen.add(key);
  }
  if (seen.size > MAX_TRACESTATE_MEMBERS) {
    throw bad(field, `${field} has ${seen.size} list members; the limit is ${MAX_TRACESTATE_MEMBERS}`);
  }
}

/** Checks one job's, chain step's or batch object's context; a tracestate only beside a traceparent. */
export function checkContext(o: { traceparent?: unknown; tracestate?: unknown } | undefined | null, prefix = ""): void {
  if (!o) return;
  if (o.traceparent !== undefined && o.traceparent !== null) checkTraceparent(o.traceparent, prefix + "traceparent");
  if (o.tracestate !== undefined && o.tracestate !== null) {
    if (o.traceparent === undefined || o.traceparent === null) {
      throw bad(prefix + "tracestate", `${prefix}tracestate needs a traceparent beside it`);
    }
    checkTracestate(o.tracestate, prefix + "tracestate");
  }
}

type Spec = { traceparent?: unknown; tracestate?: unknown; chain?: { steps?: Spec[] | null; on_failure?: Spec | null; on_exit?: Spec | null } | null };

/** Checks a job's context and its chain's, naming fields as the server does (chain.steps[1].traceparent). */
export function checkEnqueue(spec: Spec, prefix = ""): void {
  checkContext(spec, prefix);
  (spec.chain?.steps ?? []).forEach((s, i) => checkContext(s, `${prefix}chain.steps[${i}].`));
  if (spec.chain?.on_failure) checkContext(spec.chain.on_failure, `${prefix}chain.on_failure.`);
  if (spec.chain?.on_exit) checkContext(spec.chain.on_exit, `${prefix}chain.on_exit.`);
}

/** The traceparent and tracestate of tc (a Job, say), or undefined when it has no traceparent. */
export function ownTrace(tc: Partial<TraceContext> | undefined): TraceContext | undefined {
  if (!tc?.traceparent) return undefined;
  return tc.tracestate ? { traceparent: tc.traceparent, tracestate: tc.tracestate } : { traceparent: tc.traceparent };
}

/** The context as the headers of an enqueue: the server applies them to each job (and batch callback) naming none. */
export function traceHeaders(tc: Partial<TraceContext> | undefined): Record<string, string> {
  return { ...ownTrace(tc) };
}

// The job a Worker's handler runs, held where the platform has
// AsyncLocalStorage (Node, Deno and Bun through process.getBuiltinModule):
// an enqueue made anywhere within the handler continues its trace. Where
// it has not, job.client carries the trace explicitly.
interface Storage {
  getStore(): TraceContext | undefined;
  run<R>(store: TraceContext | undefined, fn: () => R): R;
}
let storage: Storage | null | undefined;

function traceStorage(): Storage | null {
  if (storage === undefined) {
    storage = null;
    try {
      const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
      const m = proc?.getBuiltinModule?.("node:async_hooks") as { AsyncLocalStorage?: new () => Storage } | undefined;
      if (m?.AsyncLocalStorage) storage = new m.AsyncLocalStorage();
    } catch {
      storage = null;
    }
  }
  return storage;
}

/**
 * Runs fn with tc as the trace that enqueues within it continue (when the
 * platform can carry it); a tc without a traceparent hides any outer one,
 * so a job enqueued without a trace passes none on.
 */
export function runInTrace<R>(tc: Partial<TraceContext> | undefined, fn: () => R): R {
  const s = traceStorage();
  return s ? s.run(ownTrace(tc), fn) : fn();
}

/** The trace of the handler running in this async context, if the platform carries one. */
export function currentTrace(): TraceContext | undefined {
  return traceStorage()?.getStore();
}
