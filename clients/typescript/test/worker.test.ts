import { describe, expect, it } from "vitest";
import { type Client, type Job, JobbieError, JobStopped, NonRetryableError, Worker, type WorkerOptions } from "../src/index.js";
import { client, queue, waitFor } from "./helpers.js";

const quiet = { warn: () => {}, error: () => {} };

function worker(c: Client, q: string, h: (job: Job) => unknown, o: Partial<WorkerOptions> = {}): Worker {
  return new Worker(c, { queues: [q], fetchTimeoutSec: 2, heartbeatIntervalMs: 200, handleSignals: false, logger: quiet, ...o }, h);
}

/** A promise and its resolve, to hold handlers until the test lets them go. */
function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
}

async function state(c: Client, id: string) {
  return (await c.getJob(id)).state;
}

describe("worker", () => {
  it("runs at most `concurrency` jobs at once and acks each with its result", async () => {
    const c = client();
    const q = queue();
    const ids = (await c.enqueueBatch(Array.from({ length: 6 }, (_, i) => ({ queue: q, payload: { i } })))).job_ids!;
    let running = 0;
    let most = 0;
    const g = gate();
    const w = worker(c, q, async (job) => {
      running++;
      most = Math.max(most, running);
      await g.p;
      running--;
      return { doubled: (job.payload as { i: number }).i * 2 };
    }, { concurrency: 3 });
    const done = w.run();
    await waitFor("three jobs running", () => running === 3);
    const active = (await c.search.page({ queue: q, state: ["active"] })).jobs!.length;
    expect(active).toBe(3);
    g.open();
    await waitFor("all completed", async () => (await c.search.page({ queue: q, state: ["completed"] })).jobs!.length === 6);
    w.stop();
    await done;
    expect(most).toBe(3);
    expect((await c.getJob(ids[4])).result).toEqual({ doubled: 8 });
  });

  it("fails with the error and its stack, and the server retries", async () => {
    const c = client();
    const q = queue();
    const r = await c.enqueue(q, null, { max_retries: 1, retry_backoff: "none" });
    function failingStep(): never {
      throw new Error("first try");
    }
    const w = worker(c, q, (job) => (job.attempt === 1 ? failingStep() : "second"));
    const done = w.run();
    await waitFor("completed", async () => (await state(c, r.job_id)) === "completed");
    w.stop();
    await done;
    const j = await c.getJob(r.job_id);
    expect(j.result).toBe("second");
    expect(j.errors![0].error).toBe("Error: first try");
    expect(j.errors![0].backtrace).toContain("failingStep");
  });

  it("a NonRetryableError makes the job dead at once although retries are left", async () => {
    const c = client();
    const q = queue();
    const r = await c.enqueue(q, null, { max_retries: 5, retry_backoff: "fixed", retry_base_delay: "1s" });
    let calls = 0;
    const w = worker(c, q, () => {
      calls++;
      throw new NonRetryableError("bad input");
    });
    const done = w.run();
    await waitFor("ended", async () => ["cancelled", "dead"].includes(await state(c, r.job_id)));
    w.stop();
    await done;
    const j = await c.getJob(r.job_id);
    expect(j.state).toBe("dead");
    expect(j.dead_reason).toBe("non_retryable");
    expect(calls).toBe(1);
    expect(j.errors).toHaveLength(1);
    expect(j.errors![0].error).toBe("NonRetryableError: bad input");
  });

  it("a drained worker finishes the job it holds, fetches nothing more and run() resolves", async () => {
    const c = client();
    const q = queue();
    const held = await c.enqueue(q, 1);
    const started: string[] = [];
    const g = gate();
    const w = worker(c, q, async (job) => {
      started.push(job.id);
      await g.p;
      return "done";
    }, { concurrency: 1, workerId: `drain-${q}` });
    const done = w.run();
    await waitFor("the held job started", () => started.length === 1);
    expect(await c.drainWorker(`drain-${q}`)).toEqual({ worker_id: `drain-${q}`, draining: true });
    expect((await c.workers()).find((x) => x.id === `drain-${q}`)?.draining).toBe(true);
    const next = await c.enqueue(q, 2);
    g.open();
    await done; // resolves by itself
    expect(w.drained).toBe(true);
    expect(started).toEqual([held.job_id]);
    expect(await state(c, held.job_id)).toBe("completed");
    const j = await c.getJob(next.job_id);
    expect(j.state).toBe("pending");
    expect(j.attempt).toBe(0);
    await expect(c.drainWorker(`never-seen-${q}`)).rejects.toSatisfy((e) => e instanceof JobbieError && e.status === 404);
  });

  it("a job cancelled while it runs aborts its signal, and the worker settles it as cancelled at once", async () => {
    const c = client();
    const q = queue();
    const r = await c.enqueue(q, null);
    let reason: unknown;
    const started = gate();
    const w = worker(c, q, async (job) => {
      started.open();
      await new Promise((resolve) => job.signal.addEventListener("abort", resolve));
      reason = job.signal.reason;
      return "ignored";
    });
    const done = w.run();
    await started.p;
    expect((await c.cancelJob(r.job_id)).status).toBe("cancelling");
    await waitFor("the handler saw the cancel", () => reason !== undefined);
    expect(reason).toBeInstanceOf(JobStopped);
    expect((reason as JobStopped).reason).toBe("job_cancelled");
    await waitFor("cancelled", async () => (await state(c, r.job_id)) === "cancelled");
    w.stop();
    await done;
    expect((await c.getJob(r.job_id)).result).toBeNull();
  });

  it("a lease lost while heartbeats could not get through aborts the job, and the late worker reports nothing", async () => {
    let partitioned = true;
    const c = client({
      fetch: async (input, init) => {
        if (partitioned && String(input).endsWith("/api/v1/heartbeat")) throw new TypeError("fetch failed: network unreachable");
        return fetch(input, init);
      },
    });
    const q = queue();
    const r = await c.enqueue(q, null, { max_retries: 2 });
    let reason: unknown;
    const started = gate();
    const w = worker(c, q, async (job) => {
      started.open();
      await new Promise((resolve) => job.signal.addEventListener("abort", resolve));
      reason = job.signal.reason;
      return "late result";
    }, { leaseDurationSec: 1, heartbeatIntervalMs: 300, fetchTimeoutSec: 1, concurrency: 1 });
    const done = w.run();
    await started.p;
    // The lease runs out; another worker gets the job.
    const other = client();
    const second = await waitFor("the job leased again", () => other.fetch({ queues: [q], worker_id: "other", timeout: 5 }));
    expect(second.job_id).toBe(r.job_id);
    expect(second.attempt).toBe(2);
    partitioned = false;
    await waitFor("the first worker learnt it lost the lease", () => reason !== undefined);
    expect((reason as JobStopped).reason).toBe("lease_lost");
    w.stop();
    await done;
    expect(await state(c, r.job_id)).toBe("active"); // the late worker settled nothing
    await other.ack(second.job_id, "second worker", { leaseToken: second.lease_token, workerId: "other" });
    const j = await c.getJob(r.job_id);
    expect(j.result).toBe("second worker");
    expect(j.errors![0].error).toBe("lease_expired");
  });

  it("reports progress and checkpoints; the next attempt resumes from the checkpoint", async () => {
    const c = client();
    const q = queue();
    const r = await c.enqueue(q, null, { max_retries: 1, retry_backoff: "none" });
    const seen: unknown[] = [];
    const w = worker(c, q, async (job) => {
      seen.push(job.lastCheckpoint);
      if (job.attempt === 1) {
        job.progress(5, 10, "half");
        await job.checkpoint({ offset: 5 });
        const d = await c.getJob(job.id);
        expect(d.checkpoint).toEqual({ offset: 5 });
        expect(d.progress).toEqual({ current: 5, total: 10, message: "half" });
        throw new Error("crash after the checkpoint");
      }
      return "resumed";
    });
    const done = w.run();
    await waitFor("completed", async () => (await state(c, r.job_id)) === "completed");
    w.stop();
    await done;
    expect(seen).toEqual([null, { offset: 5 }]);
  });

  it("shuts down gracefully: finishes what ends within the grace, fails the rest with worker_shutdown, fetches no more", async () => {
    const c = client();
    const q = queue();
    const [quick, stuck] = (await c.enqueueBatch([{ queue: q, payload: "quick" }, { queue: q, payload: "stuck", max_retries: 2 }])).job_ids!;
    const running = new Set<string>();
    const letQuickGo = gate();
    const w = worker(c, q, async (job) => {
      running.add(job.payload as string);
      if (job.payload === "quick") {
        await letQuickGo.p;
        return "done";
      }
      await new Promise(() => {}); // ignores its signal
    }, { concurrency: 2, shutdownGraceMs: 500 });
    const done = w.run();
    await waitFor("both running", () => running.size === 2);
    w.stop();
    letQuickGo.open();
    await done;
    expect(await state(c, quick)).toBe("completed");
    const s = await c.getJob(stuck);
    expect(["retrying", "pending"]).toContain(s.state);
    expect(s.errors![0].error).toBe("worker_shutdown");
    const later = await c.enqueue(q, "after");
    expect(await state(c, later.job_id)).toBe("pending");
  });

  it("shuts down on SIGTERM and removes its signal handlers", async () => {
    const c = client();
    const q = queue();
    const r = await c.enqueue(q, null);
    const started = gate();
    const before = process.listenerCount("SIGTERM");
    const w = worker(c, q, async (job) => {
      started.open();
      await new Promise((resolve) => job.signal.addEventListener("abort", resolve));
      return "unreached";
    }, { handleSignals: true, shutdownGraceMs: 200 });
    const done = w.run();
    await started.p;
    expect(process.listenerCount("SIGTERM")).toBe(before + 1);
    process.emit("SIGTERM");
    await done;
    expect(process.listenerCount("SIGTERM")).toBe(before);
    expect((await c.getJob(r.job_id)).errors![0].error).toBe("worker_shutdown");
  });

  it("backs off a 429 and a 503 on fetch, honouring Retry-After, then works", async () => {
    const refusals = [
      new Response(JSON.stringify({ error: { code: "key_long_poll_limit", message: "too many" } }), { status: 429, headers: { "Retry-After": "1", "Content-Type": "application/json" } }),
      new Response(JSON.stringify({ error: { code: "no_leader", message: "election" } }), { status: 503, headers: { "Content-Type": "application/json" } }),
    ];
    const fetchTimes: number[] = [];
    const c = client({
      fetch: async (input, init) => {
        if (String(input).endsWith("/fetch/batch")) {
          fetchTimes.push(Date.now());
          const r = refusals.shift();
          if (r) return r;
        }
        return fetch(input, init);
      },
    });
    const q = queue();
    const r = await c.enqueue(q, null);
    const w = worker(c, q, () => "ok");
    const done = w.run();
    await waitFor("completed", async () => (await state(c, r.job_id)) === "completed");
    w.stop();
    await done;
    expect(fetchTimes.length).toBeGreaterThanOrEqual(3);
    expect(fetchTimes[1] - fetchTimes[0]).toBeGreaterThanOrEqual(900);
  });

  it("stops with the error when the server refuses the worker", async () => {
    const c = client({ apiKey: "not-a-key" });
    const w = worker(c, queue(), () => "never");
    await expect(w.run()).rejects.toMatchObject({ status: 401 });
  });
});
