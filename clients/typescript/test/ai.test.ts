import { describe, expect, it } from "vitest";
import { type Client, type Job, JobbieError, parseCostUSD, Worker } from "../src/index.js";
import { client, queue, waitFor } from "./helpers.js";

const quiet = { warn: () => {}, error: () => {} };

function worker(c: Client, q: string, h: (job: Job) => unknown): Worker {
  return new Worker(c, { queues: [q], fetchTimeoutSec: 2, heartbeatIntervalMs: 60_000, handleSignals: false, logger: quiet }, h);
}

/** Runs one job of q to completion, reporting cost_usd on its ack. */
async function spend(c: Client, q: string, cost: string): Promise<void> {
  await c.enqueue(q, null);
  const f = await c.fetch({ queues: [q], worker_id: "w", timeout: 5 });
  expect(f).not.toBeNull();
  await c.ack(f!.job_id, null, { workerId: "w", leaseToken: f!.lease_token, usage: { cost_usd: cost } });
}

describe("ai", () => {
  it("a handler's usage reports go with its heartbeat and its ack, summed exactly", async () => {
    const c = client();
    const q = queue("ai");
    const r = await c.enqueue(q, null);
    let bad: unknown;
    let afterHeartbeat: string | undefined;
    const w = worker(c, q, async (job) => {
      job.reportUsage({ input_tokens: 100, cost_usd: "0.1", model: "m-small" });
      try {
        job.reportUsage({ cost_usd: "0.1.2" });
      } catch (err) {
        bad = err;
      }
      await job.checkpoint({ step: 1 }); // a heartbeat: it carries what was reported so far
      afterHeartbeat = (await c.getJob(job.id)).usage?.cost_usd;
      job.reportUsage({ output_tokens: 7, cost_usd: "0.2" });
      job.reportUsage({ cache_read_tokens: 3, cost_usd: "0.3", model: "m-large", provider: "p" });
      return "ok";
    });
    const done = w.run();
    await waitFor("completed", async () => (await c.getJob(r.job_id)).state === "completed");
    w.stop();
    await done;
    expect(bad).toBeInstanceOf(TypeError);
    expect((bad as Error).message).toContain("usage.cost_usd");
    expect(afterHeartbeat).toBe("0.1");
    const j = await c.getJob(r.job_id);
    expect(j.usage).toMatchObject({ input_tokens: 100, output_tokens: 7, cache_read_tokens: 3, cost_usd: "0.6", model: "m-large", provider: "p" });
    const u = await c.ai.usage({ groupBy: "queue" });
    expect(u.groups!.find((g) => g.key === q)).toMatchObject({ reports: 2, input_tokens: 100, output_tokens: 7, cost_usd: "0.6" });
    await expect(c.ai.usage({ groupBy: "day" as "queue" })).rejects.toSatisfy((e) => e instanceof JobbieError && e.field === "group_by");
    // By step: a bucket per hour of the last 24, whose sums add up to the totals.
    const by = await c.ai.usage({ groupBy: "queue", step: "1h" });
    expect(by.step).toBe("1h");
    expect(by.buckets).toHaveLength(24);
    expect(Date.parse(by.buckets![0]!.start)).toBe(Date.parse(by.from));
    const mine = by.buckets!.flatMap((b) => (b.groups ?? []).filter((g) => g.key === q));
    expect(mine.reduce((n, g) => n + g.reports, 0)).toBe(2);
    expect(mine.reduce((n, g) => n + parseCostUSD(g.cost_usd)!, 0n)).toBe(parseCostUSD("0.6"));
    expect((await c.ai.usage({ groupBy: "queue" })).buckets).toBeUndefined();
    await expect(c.ai.usage({ step: "90m" })).rejects.toSatisfy((e) => e instanceof JobbieError && e.status === 400 && e.field === "step");
  });

  it("budgets: create, read, update, delete; held jobs found by budget, approved and rejected", async () => {
    const c = client();
    const q = queue("ai");
    const name = `hold-${q}`;
    await expect(c.ai.budgets.create({ name, scope: "queue", queue: q, on_exceed: "hold" }))
      .rejects.toSatisfy((e) => e instanceof JobbieError && e.status === 400 && e.field === "daily_cost_usd");
    const b = await c.ai.budgets.create({ name, scope: "queue", queue: q, daily_cost_usd: "0.5", per_job_tokens: 1000, on_exceed: "hold" });
    expect(b).toMatchObject({ name, queue: q, daily_cost_usd: "0.5", per_job_tokens: 1000, exceeded: false, spent_today_usd: "0" });
    expect((await c.ai.budgets.list()).map((x) => x.name)).toContain(name);
    const up = await c.ai.budgets.update(name, { scope: "queue", queue: q, daily_cost_usd: "0.25", on_exceed: "hold" });
    expect(up.daily_cost_usd).toBe("0.25");
    expect(up.per_job_tokens).toBeUndefined();

    await spend(c, q, "0.3");
    expect((await c.ai.budgets.get(name)).exceeded).toBe(true);
    const held = (await c.enqueue(q, 1)).job_id;
    const other = (await c.enqueue(q, 2)).job_id;
    const d = await c.getJob(held);
    expect(d).toMatchObject({ state: "held", held_reason: "budget", held_budget: name });
    const found = await c.search.page({ held_budget: name, order: "asc" });
    expect(found.jobs!.map((j) => j.id)).toEqual([held, other]);

    expect(await c.ai.approve(held)).toEqual({ job_id: held, status: "pending" });
    expect(await c.ai.reject(other)).toEqual({ job_id: other, status: "cancelled" });
    await expect(c.ai.approve(other)).rejects.toSatisfy((e) => e instanceof JobbieError && e.status === 409);
    expect((await c.getJob(other)).cancel_reason).toBe("budget_rejected");

    await c.ai.budgets.delete(name);
    await expect(c.ai.budgets.get(name)).rejects.toSatisfy((e) => e instanceof JobbieError && e.status === 404);
  });
});
