// Without @opentelemetry/api (an optional peer dependency) the worker
// records nothing and its handlers' enqueues carry the job's trace
// context as it came.
import { describe, expect, it, vi } from "vitest";
import { type Job, Worker } from "../src/index.js";
import { client, queue, waitFor } from "./helpers.js";

vi.mock("@opentelemetry/api", () => {
  throw new Error("Cannot find package '@opentelemetry/api'");
});

const TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("without @opentelemetry/api", () => {
  it("runs handlers in the job's trace context", async () => {
    await expect(import("@opentelemetry/api")).rejects.toThrow(); // as in a program that lacks it
    const c = client();
    const q = queue();
    let child = "";
    const w = new Worker(c, { queues: [q], fetchTimeoutSec: 2, handleSignals: false, logger: { warn: () => {}, error: () => {} } },
      async (job: Job) => {
        child = (await c.enqueue(`${q}.next`, job.id)).job_id;
      });
    const { job_id } = await c.enqueue(q, "first", { traceparent: TP, tracestate: "congo=x" });
    const done = w.run();
    await waitFor(`job ${job_id} completed`, async () => (await c.getJob(job_id)).state === "completed");
    w.stop();
    await done;
    const next = await c.getJob(child);
    expect([next.traceparent, next.tracestate]).toEqual([TP, "congo=x"]);
  });
});
