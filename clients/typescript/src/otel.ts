// The span a worker (or push handler) records around each run of its
// handler, by the OpenTelemetry messaging conventions: `process <queue>`,
// kind consumer, a child of the job's traceparent (the producer's
// context) and linked to it (the conventions require the link and allow
// the parent when one message is processed). It uses @opentelemetry/api,
// an optional peer dependency: where it cannot be loaded nothing is
// recorded and the handler runs in the job's trace context as before.
import type { Job } from "./job.js";
import { ownTrace, type TraceContext } from "./trace.js";

/** What a worker needs of an OpenTelemetry TracerProvider (`@opentelemetry/api`'s). */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): unknown;
}

type Api = typeof import("@opentelemetry/api");

let api: Promise<Api | null> | undefined;

/** @opentelemetry/api when the program has it installed, else null (asked once). */
function loadApi(): Promise<Api | null> {
  api ??= import("@opentelemetry/api").then((m) => m as Api, () => null);
  return api;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * Runs fn in the process span of job, recorded by tp or the global
 * TracerProvider; fn gets the trace context that enqueues within it
 * should continue (the span's, or the job's when nothing records).
 * The span ends when fn settles, with error status when it throws.
 */
export async function inProcessSpan<R>(job: Job, tp: TracerProviderLike | undefined,
  fn: (trace: TraceContext | undefined) => R | Promise<R>): Promise<R> {
  const o = await loadApi();
  if (!o) return fn(ownTrace(job));
  let parent = o.context.active();
  const links = [];
  const m = job.traceparent ? TRACEPARENT.exec(job.traceparent) : null;
  if (m) {
    const sc = { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true,
      ...(job.tracestate ? { traceState: o.createTraceState(job.tracestate) } : {}) };
    if (o.isSpanContextValid(sc)) {
      parent = o.trace.setSpanContext(parent, sc);
      links.push({ context: sc });
    }
  }
  const tracer = (tp ?? o.trace.getTracerProvider()).getTracer("@jobbie/client") as ReturnType<Api["trace"]["getTracer"]>;
  const span = tracer.startSpan(`process ${job.queue}`, {
    kind: o.SpanKind.CONSUMER, links,
    attributes: {
      "messaging.system": "jobbie", "messaging.operation.type": "process", "messaging.operation.name": "process",
      "messaging.destination.name": job.queue, "messaging.message.id": job.id, "jobbie.job.attempt": job.attempt,
    },
  }, parent);
  const sc = span.spanContext();
  const own = o.isSpanContextValid(sc) && !sc.isRemote && sc.spanId !== m?.[2];
  const trace = own
    ? { traceparent: `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags.toString(16).padStart(2, "0")}`,
      ...(sc.traceState?.serialize() ? { tracestate: sc.traceState.serialize() } : {}) }
    : ownTrace(job);
  try {
    return await o.context.with(o.trace.setSpan(parent, span), () => fn(trace));
  } catch (err) {
    span.setAttribute("error.type", errorType(err));
    span.setStatus({ code: o.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}

/** A low-cardinality error.type: the worker's own reasons by name, else the error's class. */
function errorType(err: unknown): string {
  const reason = (err as { reason?: unknown })?.reason;
  if (typeof reason === "string") return reason;
  if (err instanceof Error) return err.constructor.name;
  return "_OTHER";
}
