// The worker's process span against a real jobbie dev, recorded by the
// OpenTelemetry SDK's in-memory exporter: its parent and link, its
// attributes, its error status, the handler's own spans as its children
// and the handler's enqueues continuing it.
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, describe, expect, it } from "vitest";
import { type Client, type Job, JobbieError, Worker } from "../src/index.js";
import { client, queue, waitFor } from "./helpers.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";
const TP = `00-${TRACE}-${PARENT}-01`;
const quiet = { warn: () => {}, error: () => {} };

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
afterAll(() => context.disable());

function recorder() {
  const exporter = new InMemorySpanExporter();
  return { exporter, provider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }) };
}

async function settled(c: Client, id: string, state: string) {
  await waitFor(`job ${id} ${state}`, async () => (await c.getJob(id)).state === state);
}

describe("process spans", () => {
  it("continue the job's trace: parent and link, attributes, the handler's spans and enqueues", async () => {
    const c = client();
    const q = queue();
    const { exporter, provider } = recorder();
    let child = "";
    const w = new Worker(c, { queues: [q], fetchTimeoutSec: 2, handleSignals: false, logger: quiet, tracerProvider: provider },
      async (job: Job) => {
        await new Promise((r) => setTimeout(r, 1)); // across an await, as a real handler's calls are
        provider.getTracer("handler").startSpan("work").end(); // in the handler's context: the process span's child
        child = (await c.enqueue(`${q}.next`, "ambient")).job_id;
        return job.id;
      });
    const { job_id } = await c.enqueue(q, "first", { traceparent: TP, tracestate: "congo=x" });
    const done = w.run();
    await settled(c, job_id, "completed");
    w.stop();
    await done;

    const spans = exporter.getFinishedSpans();
    const process = spans.find((s) => s.name === `process ${q}`)!;
    expect(process).toBeDefined();
    const sc = process.spanContext();
    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(sc.traceId).toBe(TRACE);
    expect(process.parentSpanContext?.spanId).toBe(PARENT);
    expect(process.links.map((l) => l.context.spanId)).toEqual([PARENT]);
    expect(process.attributes).toMatchObject({
      "messaging.system": "jobbie", "messaging.operation.type": "process", "messaging.operation.name": "process",
      "messaging.destination.name": q, "messaging.message.id": job_id, "jobbie.job.attempt": 1,
    });
    expect(process.status.code).toBe(SpanStatusCode.UNSET);
    expect(spans.find((s) => s.name === "work")?.parentSpanContext?.spanId).toBe(sc.spanId);
    expect(trace.getActiveSpan()).toBeUndefined(); // the span was the handler's only
    const next = await c.getJob(child);
    expect([next.traceparent, next.tracestate]).toEqual([`00-${TRACE}-${sc.spanId}-01`, "congo=x"]);
  });

  it("record a failure's status and error.type; a job without a trace starts one", async () => {
    const c = client();
    const q = queue();
    const { exporter, provider } = recorder();
    const w = new Worker(c, { queues: [q], fetchTimeoutSec: 2, handleSignals: false, logger: quiet, tracerProvider: provider },
      async () => {
        const inner = provider.getTracer("handler").startSpan("work");
        inner.end();
        throw new RangeError("no luck");
      });
    const { job_id } = await c.enqueue(q, "x", { max_retries: 0 });
    const done = w.run();
    await settled(c, job_id, "dead");
    w.stop();
    await done;

    const spans = exporter.getFinishedSpans();
    const process = spans.find((s) => s.name === `process ${q}`)!;
    expect(process.status).toEqual({ code: SpanStatusCode.ERROR, message: "no luck" });
    expect(process.attributes["error.type"]).toBe("RangeError");
    expect(process.parentSpanContext).toBeUndefined();
    expect(process.links).toEqual([]);
    const work = spans.find((s) => s.name === "work")!;
    expect(work.parentSpanContext?.spanId).toBe(process.spanContext().spanId); // the handler's span is its child
  });
});

describe("the namespace's OTLP endpoint", () => {
  it("is set, read and removed on the client's namespace only; a bad URL is a 400 naming otlp_endpoint", async () => {
    const c = client();
    const name = queue("ts-otlp").replace(".", "-");
    await c.namespaces.create({ name });
    const other = c.inNamespace(name);
    const url = "https://127.0.0.1:4318/v1/traces"; // the dev server allows inside addresses
    expect(await other.setTracing(url)).toBe(url);
    expect(await other.getTracing()).toBe(url);
    expect(await c.getTracing()).not.toBe(url); // the default namespace's is its own
    const err = await other.setTracing("http://127.0.0.1:4318/v1/traces").then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(JobbieError);
    expect([(err as JobbieError).status, (err as JobbieError).field]).toEqual([400, "otlp_endpoint"]);
    expect(await other.getTracing()).toBe(url); // nothing changed
    expect(await other.setTracing(null)).toBe("");
    expect(await other.getTracing()).toBe("");
    await c.namespaces.delete(name, { force: true });
  });
});
