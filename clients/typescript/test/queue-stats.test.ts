import { describe, expect, it } from "vitest";
import { isBadRequest, isNotFound, type QueueStats } from "../src/index.js";
import { client, queue } from "./helpers.js";

function totals(s: QueueStats) {
  const t = { enqueued: 0, completed: 0, failed: 0, dead: 0, attempts: 0 };
  for (const b of s.buckets ?? []) {
    t.enqueued += b.enqueued;
    t.completed += b.completed;
    t.failed += b.failed;
    t.dead += b.dead;
    t.attempts += b.processing_time.count;
  }
  return t;
}

describe("queue history and scale", () => {
  it("counts what was enqueued, completed and failed, and keeps demand above 0 while a job is leased", async () => {
    const c = client();
    const q = queue();
    for (let i = 0; i < 3; i++) await c.enqueue(q, { i }, { max_retries: 0 });
    const a = (await c.fetch({ queues: [q], timeout: 5, worker_id: "t-stats" }))!;
    await c.ack(a.job_id, undefined, { leaseToken: a.lease_token });
    const b = (await c.fetch({ queues: [q], timeout: 5, worker_id: "t-stats" }))!;
    expect((await c.fail(b.job_id, "boom", undefined, { leaseToken: b.lease_token })).status).toBe("dead");

    const minutes = await c.queues.stats(q);
    expect(minutes).toMatchObject({ queue: q, step: "1m" });
    expect(minutes.buckets).toHaveLength(60);
    expect(totals(minutes)).toEqual({ enqueued: 3, completed: 1, failed: 1, dead: 1, attempts: 2 });
    const hours = await c.queues.stats(q, { from: new Date(Date.now() - 3 * 3600_000), step: "1h" });
    expect(hours.step).toBe("1h");
    expect([3, 4]).toContain(hours.buckets!.length);
    expect(totals(hours).enqueued).toBe(3);

    // One pending, then none pending and one held: demand is never 0 while a worker holds a job.
    expect(await c.queues.scale(q)).toMatchObject({ queue: q, backlog: 1, in_flight: 0, demand: 1, paused: false });
    const held = (await c.fetch({ queues: [q], timeout: 5, worker_id: "t-stats" }))!;
    expect(await c.queues.scale(q)).toMatchObject({ backlog: 0, in_flight: 1, demand: 1, oldest_pending_age: 0 });
    await c.ack(held.job_id, undefined, { leaseToken: held.lease_token });
    expect((await c.queues.scale(q)).demand).toBe(0);
  });

  it("refuses a bad query naming its field, and a queue that is not there is not found", async () => {
    const c = client();
    const q = queue();
    await c.enqueue(q, null);
    await expect(c.queues.stats(q, { step: "2m" as "1m" })).rejects.toSatisfy((e) => isBadRequest(e) && e.field === "step");
    await expect(c.queues.stats(q, { from: "2026-01-01T00:00:00Z", to: "2025-12-31T00:00:00Z" }))
      .rejects.toSatisfy((e) => isBadRequest(e) && e.field === "to");
    await expect(c.queues.stats(queue())).rejects.toSatisfy(isNotFound);
    await expect(c.queues.scale(queue())).rejects.toSatisfy(isNotFound);
  });
});
