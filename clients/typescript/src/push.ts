// The push handler: serves a push queue's deliveries with the same
// Handler a Worker runs (docs/api/push.md, "the delivery contract").

import type { Client } from "./client.js";
import { describeError, type Handler, Job, NonRetryableError } from "./job.js";
import { inProcessSpan } from "./otel.js";
import { runInTrace } from "./trace.js";
import type { WebhookVerifier } from "./verify.js";

/** The most of a delivery read: above what the server sends (wire.MaxPushDeliveryBytes). */
const MAX_DELIVERY_BYTES = 4 << 20;

function answer(status: number, body?: Record<string, unknown>): Response {
  if (!body) return new Response(null, { status });
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

/**
 * A fetch-style handler, `(req: Request) => Promise<Response>`, for a push
 * queue: it verifies the Standard Webhooks signature (401 when it fails),
 * runs handler with the delivery as a Job, and answers 200 with the
 * result (and the last checkpoint and progress), or 500 with the error's
 * message and stack (and checkpoint and progress), so the server retries
 * by the queue's policy. A pushed job has no lease to heartbeat: its
 * checkpoint and progress travel in the answer, and its signal aborts
 * (delivery_aborted) when the request does. Serve it with any runtime
 * that speaks fetch's Request and Response (Deno.serve, Bun.serve,
 * Cloudflare Workers, or Node with an adapter). With client, job.client
 * is it with the job's trace; enqueues within the handler continue the
 * job's trace as a Worker's do.
 */
export function pushHandler(verifier: WebhookVerifier, handler: Handler, client?: Client): (req: Request) => Promise<Response> {
  return async (req: Request): Promise<Response> => {
    if (req.method !== "POST") {
      const r = answer(405, { error: "push deliveries are POSTed" });
      r.headers.set("Allow", "POST");
      return r;
    }
    const body = new Uint8Array(await req.arrayBuffer());
    if (body.length > MAX_DELIVERY_BYTES) return answer(413, { error: "the delivery is too large" });
    try {
      await verifier.verify(req.headers, body);
    } catch (err) {
      return answer(401, { error: (err as Error).message });
    }
    let d: Record<string, unknown>;
    try {
      d = JSON.parse(new TextDecoder().decode(body));
      if (typeof d?.job_id !== "string" || !d.job_id || typeof d.queue !== "string" || !d.queue) throw new Error();
    } catch {
      return answer(400, { error: "not a push delivery: want a JSON object with job_id and queue" });
    }
    const job = new Job({
      job_id: d.job_id as string, queue: d.queue as string, payload: d.payload ?? null, attempt: Number(d.attempt ?? 0),
      max_retries: Number(d.max_retries ?? 0), lease_duration: Number(d.timeout ?? 0), checkpoint: d.checkpoint ?? null,
      tags: (d.tags as Record<string, string>) ?? {}, lease_token: "",
      traceparent: d.traceparent as string | undefined, tracestate: d.tracestate as string | undefined,
    }, async (j, v) => {
      j.checkpointValue = v ?? null;
    });
    if (client) job.client = client.withTrace(job);
    const onAbort = () => job.stop("delivery_aborted");
    req.signal?.addEventListener("abort", onAbort, { once: true });
    const extra = (): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      if (job.checkpointValue !== undefined) o.checkpoint = job.checkpointValue;
      if (job.progressValue) o.progress = job.progressValue;
      return o;
    };
    try {
      const result = await inProcessSpan(job, undefined, (tc) => {
        if (client) job.client = client.withTrace(tc);
        return runInTrace(tc, () => handler(job));
      });
      const a = { ...(result === undefined ? {} : { result }), ...extra() };
      JSON.stringify(a);
      return Object.keys(a).length === 0 ? answer(200) : answer(200, a);
    } catch (err) {
      const { message, backtrace } = describeError(err);
      const nonRetryable = err instanceof NonRetryableError ? { non_retryable: true } : {};
      return answer(500, { error: message, ...(backtrace ? { backtrace } : {}), ...nonRetryable, ...extra() });
    } finally {
      req.signal?.removeEventListener("abort", onAbort);
    }
  };
}
