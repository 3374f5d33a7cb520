import { describe, expect, it } from "vitest";
import { type BulkOperation, isConflict, isNotFound } from "../src/index.js";
import { client, queue, waitFor } from "./helpers.js";

describe("queues", () => {
  it("puts, reads, pauses, resumes, caps, throttles and deletes a queue", async () => {
    const c = client();
    const q = queue();
    const put = await c.queues.put(q, { description: "mail", concurrency: 3, throttle: { rate: 10, period: "1m" } });
    expect(put).toMatchObject({ name: q, description: "mail", concurrency: 3, throttle: { rate: 10 } });
    await c.enqueue(q, 1);
    expect((await c.queues.get(q)).counts.pending).toBe(1);
    await c.queues.pause(q);
    expect((await c.queues.get(q)).paused).toBe(true);
    await c.queues.resume(q);
    await c.queues.setConcurrency(q, 1);
    expect((await c.queues.get(q)).concurrency).toBe(1);
    await c.queues.removeConcurrency(q);
    await c.queues.removeThrottle(q);
    const got = await c.queues.get(q);
    expect(got.concurrency).toBeNull();
    expect(got.throttle).toBeNull();
    expect((await c.queues.list()).map((x) => x.name)).toContain(q);
    const d = await c.queues.drain(q);
    expect(d).toMatchObject({ queue: q, drained: true });
    await c.queues.clear(q);
    expect((await c.queues.get(q)).counts.pending).toBe(0);
    await c.queues.delete(q);
    await expect(c.queues.get(q)).rejects.toSatisfy(isNotFound);
  });
});

describe("schedules", () => {
  it("previews, creates, reads by name, disables, runs and deletes a schedule", async () => {
    const c = client();
    const q = queue();
    const p = await c.schedules.preview("0 9 * * 1", "Europe/Paris", 3);
    expect(p.next_runs).toHaveLength(3);
    const s = await c.schedules.create({ name: "weekly", queue: q, cron: "0 9 * * 1", timezone: "Europe/Paris", payload: { r: 1 } });
    expect(s).toMatchObject({ name: "weekly", queue: q, enabled: true });
    expect((await c.schedules.get(s.id)).cron).toBe("0 9 * * 1");
    expect((await c.schedules.disable(s.id)).enabled).toBe(false);
    const run = await c.schedules.run(s.id);
    expect((await c.getJob(run.job_id)).payload).toEqual({ r: 1 });
    const up = await c.schedules.update(s.id, { name: "weekly", queue: q, cron: "0 10 * * 1" });
    expect(up.cron).toBe("0 10 * * 1");
    expect((await c.schedules.list()).map((x) => x.id)).toContain(s.id);
    await c.schedules.delete(s.id);
    await expect(c.schedules.get(s.id)).rejects.toSatisfy(isNotFound);
  });
});

describe("search and bulk", () => {
  it("follows the cursor across pages", async () => {
    const c = client();
    const q = queue();
    const ids = (await c.enqueueBatch(Array.from({ length: 7 }, (_, i) => ({ queue: q, payload: { i } })))).job_ids!;
    const pages = [];
    for await (const p of c.search.pages({ queue: q, limit: 3 })) pages.push(p.jobs!.length);
    expect(pages).toEqual([3, 3, 1]);
    const seen = [];
    for await (const j of c.search.jobs({ queue: q, limit: 2 })) seen.push(j.id);
    expect(seen.sort()).toEqual([...ids].sort());
  });

  it("runs a bulk action in the background with progress", async () => {
    const c = client();
    const q = queue();
    await c.enqueueBatch(Array.from({ length: 12 }, (_, i) => ({ queue: q, payload: { i } })));
    const updates: BulkOperation[] = [];
    const done = await c.bulk.run({ filter: { queue: q, state: ["pending"] }, action: "cancel" }, (op) => updates.push(op));
    expect(done).toMatchObject({ status: "completed", affected: 12 });
    expect(updates.length).toBeGreaterThan(0);
    expect(updates.at(-1)!.processed).toBe(12);
    const id = (done as BulkOperation).id;
    expect((await c.bulk.get(id)).affected).toBe(12);
    expect((await c.bulk.list({ limit: 5 })).operations!.map((o) => o.id)).toContain(id);
    // under the sync limit it is done at once
    const small = queue();
    await c.enqueue(small, 1);
    expect(await c.bulk.run({ filter: { queue: small }, action: "cancel" })).toMatchObject({ affected: 1 });
  });
});

describe("workers and cluster", () => {
  it("lists a worker that fetched, and the shard's health", async () => {
    const c = client();
    const id = `ts-w-${crypto.randomUUID().slice(0, 6)}`;
    await c.fetch({ queues: [queue()], worker_id: id, hostname: "box", timeout: 0.1 });
    const w = (await c.workers()).find((x) => x.id === id);
    expect(w).toMatchObject({ hostname: "box", status: "active" });
    expect((await c.cluster()).healthy).toBe(true);
  });
});

describe("namespaces, keys, roles, usage, webhooks, signing keys", () => {
  it("creates a namespace and works in it, apart from the default", async () => {
    const c = client();
    const name = `ts-${crypto.randomUUID().slice(0, 8)}`;
    expect((await c.namespaces.create({ name, description: "sdk" })).name).toBe(name);
    expect((await c.namespaces.getOne(name)).description).toBe("sdk");
    const inNs = c.inNamespace(name);
    const q = queue();
    const r = await inNs.enqueue(q, 1);
    await expect(c.getJob(r.job_id)).rejects.toSatisfy(isNotFound);
    expect((await inNs.getJob(r.job_id)).queue).toBe(q);
    await c.namespaces.update(name, { deletion_protection: true });
    await expect(c.namespaces.delete(name, { force: true })).rejects.toSatisfy(isConflict);
    await c.namespaces.update(name, { deletion_protection: false });
    await c.namespaces.delete(name, { force: true });
    expect((await c.namespaces.list()).map((n) => n.name)).not.toContain(name);
  });

  it("creates a custom role and a key carrying it, rotates and revokes the key", async () => {
    const c = client();
    const role = `ts-role-${crypto.randomUUID().slice(0, 6)}`;
    await c.roles.create({ name: role, description: "read jobs", permissions: [{ actions: ["job.read"], namespaces: ["*"], queues: ["*"] }] });
    expect((await c.roles.getOne(role)).builtin).toBe(false);
    const k = await c.keys.create({ name: "ts", role, namespaces: ["default"] });
    expect(k.key).toBeTruthy();
    const limited = client({ apiKey: k.key });
    await expect(limited.enqueue(queue(), 1)).rejects.toMatchObject({ status: 403 });
    await expect(c.roles.delete(role)).rejects.toMatchObject({ status: 409, code: "role_in_use" });
    const rotated = await c.keys.rotate(k.id, "0s");
    expect(rotated.key).not.toBe(k.key);
    expect((await c.keys.list()).map((x) => x.id)).toContain(k.id);
    await c.keys.revoke(k.id);
    expect((await c.keys.getOne(k.id)).revoked_at).toBeTruthy();
    await c.roles.delete(role);
    expect((await c.roles.list()).some((r) => r.name === "admin" && r.builtin)).toBe(true);
  });

  it("reads usage, the plan and invoices as their typed answers", async () => {
    const c = client();
    const u = await c.usage.get({ granularity: "day" });
    const g: "hour" | "day" = u.granularity; // typed by the OpenAPI document's enum
    expect(g).toBe("day");
    expect(u.totals).toBeTypeOf("object");
    const plan = await c.usage.plan();
    expect(plan.plan.name).toBeTypeOf("string");
    const upcoming = await c.usage.upcomingInvoice();
    const status: "open" | "closed" = upcoming.status;
    expect(status).toBe("open");
    expect(upcoming.id).toMatch(/^inv_/);
    const list = await c.usage.invoices();
    expect(list.invoices?.map((i) => i.id)).toContain(upcoming.id);
    expect((await c.usage.invoice(upcoming.id)).period.start).toBe(upcoming.period.start);
  });

  it("refuses a webhook to a plain http url naming url, and lists signing keys", async () => {
    const c = client();
    await expect(c.webhooks.create({ url: "http://127.0.0.1:8443/hook", events: ["*"] })).rejects.toMatchObject({ status: 400, field: "url" });
    expect(await c.webhooks.list()).toEqual(expect.any(Array));
    const keys = await c.signingKeys.list();
    expect(keys.length).toBeGreaterThan(0);
    expect(keys[0].public_key).toMatch(/^whpk_/);
  });
});
