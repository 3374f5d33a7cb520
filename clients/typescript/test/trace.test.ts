// Trace context against a real jobbie dev: options given back on reads
// and fetches, bad values refused before sending, and enqueues made
// within a handler continuing the handled job's trace.
import { describe, expect, it } from "vitest";
import { type Client, currentTrace, type Job, JobbieError, runInTrace, Worker } from "../src/index.js";
import { client, queue, waitFor } from "./helpers.js";

const TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const OTHER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const traceId = (tp: string | undefined) => tp?.split("-")[1];
const quiet = { warn: () => {}, error: () => {} };

async function completed(c: Client, id: string) {
  await waitFor(`job ${id} completed`, async () => (await c.getJob(id)).state === "completed");
}

async function refused(p: () => Promise<unknown>): Promise<JobbieError> {
  try {
    await p();
  } catch (err) {
    if (err instanceof JobbieError) return err;
    throw err;
  }
  throw new Error("not refused");
}

describe("trace context", () => {
  it("keeps the enqueue's context and gives it back on reads and fetches", async () => {
    const c = client();
    const q = queue();
    const { job_id } = await c.enqueue(q, 1, { traceparent: TP, tracestate: "congo=t61rcWkgMzE" });
    const j = await c.getJob(job_id);
    expect([j.traceparent, j.tracestate]).toEqual([TP, "congo=t61rcWkgMzE"]);
    const ids = (await c.enqueueBatch([{ queue: q, traceparent: OTHER }, { queue: q }])).job_ids!;
    expect((await c.getJob(ids[0]!)).traceparent).toBe(OTHER);
    expect((await c.getJob(ids[1]!)).traceparent).toBeUndefined(); // outside a handler nothing is inherited
    const fetched = await c.fetch({ queues: [q], worker_id: "trace-test", timeout: 1 });
    expect([fetched?.job_id, fetched?.traceparent]).toEqual([job_id, TP]);
  });

  it("refuses a bad traceparent or tracestate before sending, naming it", async () => {
    let sent = 0;
    const c = client({ fetch: (input, init) => (sent++, fetch(input, init)) });
    const q = queue();
    await c.enqueue(q, "before");
    sent = 0;
    const cases: [() => Promise<unknown>, string][] = [
      [() => c.enqueue(q, 1, { traceparent: TP.toUpperCase() }), "traceparent"],
      [() => c.enqueue(q, 1, { tracestate: "a=b" }), "tracestate"],
      [() => c.enqueue(q, 1, { traceparent: TP, tracestate: "a=b,a=c" }), "tracestate"],
      [() => c.enqueueBatch([{ queue: q }, { queue: q, traceparent: "00-x" }]), "jobs[1].traceparent"],
      [() => c.enqueueBatch([{ queue: q }], { callback_queue: q, traceparent: TP, tracestate: "B=1" }), "batch.tracestate"],
      [() => c.enqueue(q, 1, { chain: { steps: [{ queue: q }, { queue: q, traceparent: `00-${"0".repeat(32)}-00f067aa0ba902b7-01` }] } }),
        "chain.steps[1].traceparent"],
    ];
    for (const [call, field] of cases) {
      const err = await refused(call);
      expect([err.status, err.field]).toEqual([400, field]);
      expect(err.message).toContain(field);
    }
    expect(sent).toBe(0);
    expect((await c.queues.get(q)).counts.pending).toBe(1); // nothing was sent
  });

  it("continues the handled job's trace in enqueues made within the handler, unless told otherwise", async () => {
    const c = client();
    const q = queue();
    const next = `${q}.next`;
    const made: Record<string, string> = {};
    const w = new Worker(c, { queues: [q], fetchTimeoutSec: 2, handleSignals: false, logger: quiet }, async (job: Job) => {
      await new Promise((r) => setTimeout(r, 1)); // across an await, as a real handler's calls are
      made.ambient = (await c.enqueue(next, "ambient")).job_id;
      made.batch = (await c.enqueueBatch([{ queue: next }])).job_ids![0]!;
      made.explicit = (await job.client!.enqueue(next, "explicit")).job_id;
      made.own = (await c.enqueue(next, "own", { traceparent: OTHER })).job_id;
      made.none = (await c.enqueue(next, "none", { inheritTrace: false })).job_id;
      made.explicitNone = (await job.client!.enqueue(next, "none", { inheritTrace: false })).job_id;
      return "ok";
    });
    const { job_id } = await c.enqueue(q, "first", { traceparent: TP, tracestate: "congo=x" });
    const done = w.run();
    await completed(c, job_id);
    w.stop();
    await done;
    for (const k of ["ambient", "batch", "explicit"]) {
      const j = await c.getJob(made[k]!);
      expect([k, traceId(j.traceparent), j.tracestate]).toEqual([k, traceId(TP), "congo=x"]);
    }
    expect((await c.getJob(made.own!)).traceparent).toBe(OTHER);
    expect((await c.getJob(made.none!)).traceparent).toBeUndefined();
    expect((await c.getJob(made.explicitNone!)).traceparent).toBeUndefined();
    // Outside the handler the client continues nothing.
    expect((await c.getJob((await c.enqueue(next, "after")).job_id)).traceparent).toBeUndefined();
  });

  it("a job without a trace hides an outer one from the enqueues of its handler", async () => {
    const inner = await runInTrace({ traceparent: TP }, async () => {
      await Promise.resolve();
      expect(currentTrace()).toEqual({ traceparent: TP });
      return runInTrace({}, async () => currentTrace());
    });
    expect(inner).toBeUndefined();
    expect(currentTrace()).toBeUndefined();
  });
});
