import { describe, expect, it } from "vitest";
import { isBadRequest, isNotFound, isUnauthenticated, JobbieError } from "../src/index.js";
import { client, queue, waitFor } from "./helpers.js";

const TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("jobs", () => {
  it("enqueues with options and trace context, reads, cancels, retries and deletes", async () => {
    const c = client();
    const q = queue();
    const r = await c.enqueue(q, { to: "a@example.com" }, {
      priority: "high", max_retries: 5, tags: { team: "mail" }, traceparent: TP, tracestate: "congo=t61rcWkgMzE",
      scheduled_at: new Date(Date.now() + 3600_000),
    });
    expect(r.status).toBe("scheduled");
    const j = await c.getJob(r.job_id);
    expect(j).toMatchObject({ queue: q, priority: "high", max_retries: 5, tags: { team: "mail" }, traceparent: TP, payload: { to: "a@example.com" } });
    expect((await c.cancelJob(r.job_id)).status).toBe("cancelled");
    expect((await c.retryJob(r.job_id)).job_id).toBe(r.job_id);
    expect((await c.getJob(r.job_id)).state).toBe("pending");
    await c.deleteJob(r.job_id);
    await expect(c.getJob(r.job_id)).rejects.toSatisfy(isNotFound);
  });

  it("unique keys answer the existing job", async () => {
    const c = client();
    const q = queue();
    const a = await c.enqueue(q, 1, { unique_key: "k" });
    const b = await c.enqueue(q, 2, { unique_key: "k" });
    expect(b).toEqual({ job_id: a.job_id, status: "pending", unique_existing: true });
  });

  it("enqueues a batch with a callback, and lists batches with a cursor", async () => {
    const c = client();
    const q = queue();
    const r = await c.enqueueBatch([{ queue: q, payload: { id: 1 } }, { queue: q, payload: { id: 2 }, traceparent: TP }],
      { callback_queue: `${q}.done`, callback_payload: { album: 42 } });
    expect(r.job_ids).toHaveLength(2);
    expect(r.batch_id).toMatch(/^batch_/);
    const b = await c.batches.get(r.batch_id!);
    expect(b).toMatchObject({ id: r.batch_id, total: 2, pending: 2, callback_queue: `${q}.done` });
    expect((await c.getJob(r.job_ids![1])).traceparent).toBe(TP);
    const ids: string[] = [];
    for await (const x of c.batches.all({ limit: 1 })) {
      ids.push(x.id);
      if (ids.length >= 2) break;
    }
    expect(ids[0]).toBe(r.batch_id);
  });

  it("chains and dependencies", async () => {
    const c = client();
    const q = queue();
    const step0 = await c.enqueue(q, { url: "x" }, { chain: { steps: [{ queue: q }, { queue: `${q}.b` }], on_failure: { queue: `${q}.failed` } } });
    const chain = await c.getChain(step0.job_id);
    expect(chain.steps!.map((s) => s.queue)).toEqual([q, `${q}.b`]);
    expect(chain.steps![0].job_id).toBe(step0.job_id);
    expect(chain.on_failure_queue).toBe(`${q}.failed`);
    const dep = await c.enqueue(q, null, { depends_on: [step0.job_id] });
    expect(dep.status).toBe("held");
    expect((await c.getJob(dep.job_id)).depends_on).toEqual([step0.job_id]);
  });

  it("lists dead jobs", async () => {
    const c = client();
    const q = queue();
    const r = await c.enqueue(q, null, { max_retries: 0 });
    const j = await c.fetch({ queues: [q], timeout: 5, worker_id: "t-dead" });
    expect(j?.job_id).toBe(r.job_id);
    expect((await c.fail(j!.job_id, "boom", "at x", { leaseToken: j!.lease_token })).status).toBe("dead");
    const page = await c.deadJobs({ queue: q });
    expect(page.jobs!.map((d) => d.id)).toEqual([r.job_id]);
    expect(page.jobs![0].last_error).toBe("boom");
  });

  it("a fetch that times out answers null (204), and fetchBatch []", async () => {
    const c = client();
    expect(await c.fetch({ queues: [queue()], timeout: 0.2 })).toBeNull();
    expect(await c.fetchBatch({ queues: [queue()], timeout: 0.2, max: 5 })).toEqual([]);
  });
});

describe("errors", () => {
  it("a bad field is a 400 naming it, and nothing is stored", async () => {
    const c = client();
    const q = queue();
    const err = await c.enqueue(q, 1, { priority: "urgent" as "high" }).catch((e) => e);
    expect(err).toBeInstanceOf(JobbieError);
    expect(isBadRequest(err)).toBe(true);
    expect(err).toMatchObject({ status: 400, code: "bad_request", field: "priority" });
    expect(err.requestId).toBeTruthy();
    const unknown = await c.enqueue(q, 1, { priorty: "high" } as object).catch((e) => e);
    expect(unknown).toMatchObject({ status: 400, field: "priorty" });
    const tp = await c.enqueue(q, 1, { traceparent: "00-zz" }).catch((e) => e);
    expect(tp).toMatchObject({ status: 400, field: "traceparent" });
    expect((await c.search.page({ queue: q })).jobs).toEqual([]);
  });

  it("a bad key is 401, an unknown job 404, and neither is retried", async () => {
    let calls = 0;
    const bad = client({ apiKey: "not-a-key", fetch: (i, init) => (calls++, fetch(i, init)) });
    const e = await bad.queues.list().catch((x) => x);
    expect(isUnauthenticated(e)).toBe(true);
    expect(calls).toBe(1);
    const nf = await client().getJob("job_00000000000000000000000000").catch((x) => x);
    expect(nf).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("retries", () => {
  it("retries 503, 429 and a dropped connection under one Idempotency-Key, honouring Retry-After", async () => {
    const seen: Array<string | null> = [];
    const answers: Array<() => Response> = [
      () => new Response(JSON.stringify({ error: { code: "no_leader", message: "no leader" } }), { status: 503, headers: { "Retry-After": "1", "Content-Type": "application/json" } }),
      () => { throw new TypeError("fetch failed: socket hang up"); },
      () => new Response(JSON.stringify({ error: { code: "rate_limited", message: "slow down" } }), { status: 429, headers: { "Content-Type": "application/json" } }),
    ];
    const times: number[] = [];
    const c = client({
      minBackoffMs: 10,
      fetch: async (input, init) => {
        seen.push(new Headers(init?.headers).get("Idempotency-Key"));
        times.push(Date.now());
        const next = answers.shift();
        return next ? next() : fetch(input, init);
      },
    });
    const q = queue();
    const r = await c.enqueue(q, { n: 1 });
    expect(seen).toHaveLength(4);
    expect(new Set(seen).size).toBe(1);
    expect(seen[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(900); // Retry-After: 1
    const page = await c.search.page({ queue: q });
    expect(page.jobs!.map((j) => j.id)).toEqual([r.job_id]);
    // a second logical call has a key of its own
    await c.enqueue(q, { n: 2 });
    expect(seen[4]).not.toBe(seen[0]);
  });

  it("a retry after a lost answer gets the first answer back: one job, never two", async () => {
    const keys: Array<string | null> = [];
    let lost = 0;
    const c = client({
      minBackoffMs: 10,
      fetch: async (input, init) => {
        keys.push(new Headers(init?.headers).get("Idempotency-Key"));
        const res = await fetch(input, init);
        if (lost++ === 0) throw new TypeError("fetch failed: connection reset after the request was sent");
        return res;
      },
    });
    const q = queue();
    const r = await c.enqueue(q, { n: 1 });
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(r.replayed).toBe(true);
    expect((await client().search.page({ queue: q })).jobs!.map((j) => j.id)).toEqual([r.job_id]);
    lost = 0;
    const b = await c.enqueueBatch([{ queue: q, payload: 2 }, { queue: q, payload: 3 }]);
    expect(b.replayed).toBe(true);
    expect((await client().search.page({ queue: q })).total).toBe(3);
  });

  it("a call that takes no key is sent again after a 429 only, never after a lost answer", async () => {
    let calls = 0;
    const c = client({
      minBackoffMs: 10,
      fetch: async (input, init) => {
        calls++;
        if (new Headers(init?.headers).has("Idempotency-Key")) throw new Error("a namespace create sent a key");
        if (calls === 1) return new Response(JSON.stringify({ error: { code: "rate_limited", message: "slow" } }), { status: 429, headers: { "Content-Type": "application/json" } });
        const res = await fetch(input, init);
        if (calls === 2) throw new TypeError("fetch failed: connection reset after the request was sent");
        return res;
      },
    });
    const name = `ts-${crypto.randomUUID().slice(0, 8)}`;
    await expect(c.namespaces.create({ name })).rejects.toMatchObject({ status: 0, code: "network_error" });
    expect(calls).toBe(2);
    expect((await client().namespaces.getOne(name)).name).toBe(name); // it landed, once
  });

  it("gives up after the retries allowed with the last error", async () => {
    const c = client({
      retries: 2, minBackoffMs: 1,
      fetch: async () => new Response("upstream down", { status: 502 }),
    });
    const e = await c.queues.list().catch((x) => x);
    expect(e).toMatchObject({ status: 502, code: "unavailable", retryable: true });
    expect(e.detail).toBe("upstream down");
  });
});
