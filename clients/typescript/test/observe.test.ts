// Alert rules and the audit log against a real jobbie dev: a rule created
// and read back, updated and deleted; an audited action found in the log
// by page, by iterator and as JSON lines; a viewer key refused with 403.
import { describe, expect, it } from "vitest";
import { type AuditRecord, JobbieError } from "../src/index.js";
import { client, queue, waitFor } from "./helpers.js";

const ruleName = () => `ts-rule-${crypto.randomUUID().slice(0, 8)}`;

async function viewer() {
  const k = await client().keys.create({ name: `ts-viewer-${crypto.randomUUID().slice(0, 6)}`, role: "viewer" });
  return client({ apiKey: k.key! });
}

describe("alert rules", () => {
  it("creates a rule, reads it back, replaces and deletes it", async () => {
    const c = client();
    const q = queue();
    const name = ruleName();
    const made = await c.alerts.create({ name, kind: "queue_depth_above", queue: q, threshold: 1000, for: "5m" });
    expect(made).toMatchObject({ name, kind: "queue_depth_above", queue: q, threshold: 1000, for: "5m", enabled: true, state: "ok" });
    expect(await c.alerts.get(name)).toMatchObject({ name, kind: "queue_depth_above", queue: q, threshold: 1000 });
    expect((await c.alerts.list()).map((r) => r.name)).toContain(name);
    const replaced = await c.alerts.update(name, { kind: "dead_increase", queue: q, threshold: 3, for: "10m", enabled: false });
    expect(replaced).toMatchObject({ name, kind: "dead_increase", threshold: 3, for: "10m", enabled: false });
    expect(await c.alerts.get(name)).toMatchObject({ kind: "dead_increase", enabled: false });
    await expect(c.alerts.create({ name, kind: "no_worker", for: "1m" })).rejects.toMatchObject({ status: 409 });
    await c.alerts.delete(name);
    await expect(c.alerts.get(name)).rejects.toMatchObject({ status: 404, code: "not_found" });
  });

  it("answers a bad field with a 400 naming it, and a viewer's change with a 403", async () => {
    const c = client();
    const err = await c.alerts.create({ name: ruleName(), kind: "queue_depth_above", threshold: 1, for: "forever" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobbieError);
    expect(err).toMatchObject({ status: 400, field: "for" });
    const v = await viewer();
    expect(Array.isArray(await v.alerts.list())).toBe(true); // namespace.read: a viewer may look
    await expect(v.alerts.create({ name: ruleName(), kind: "no_worker", for: "1m" })).rejects.toMatchObject({
      name: "JobbieError", status: 403, code: "forbidden",
    });
  });
});

describe("audit log", () => {
  it("holds an audited action, by page, by iterator following cursors, and as JSON lines", async () => {
    const c = client();
    const name = ruleName();
    const q = queue();
    await c.alerts.create({ name, kind: "no_worker", queue: q, for: "1m" });
    await c.alerts.update(name, { kind: "no_worker", queue: q, for: "2m" });
    const filter = { object: `alert/${name}`, limit: 1 };
    // limit 1: the two records are on two pages, so reading both follows a cursor.
    const recs = await waitFor("both audit records", async () => {
      const all: AuditRecord[] = [];
      for await (const r of c.audit.records(filter)) all.push(r);
      return all.length === 2 ? all : undefined;
    });
    expect(recs.map((r) => [r.route, r.action, r.object_type, r.object_id, r.result, r.status, r.namespace])).toEqual([
      ["POST /api/v1/alerts", "queue.manage", "alert", name, "ok", 201, "default"],
      ["PUT /api/v1/alerts/:name", "queue.manage", "alert", name, "ok", 200, "default"],
    ]);
    expect(recs[0]!.key_id).toBeTruthy();

    const first = await c.audit.page(filter);
    expect(first.records!.map((r) => r.id)).toEqual([recs[0]!.id]);
    expect(first.cursor).toBeTruthy();
    const pages = [];
    for await (const p of c.audit.pages(filter)) pages.push(p.records?.map((r) => r.id));
    expect(pages.flat()).toEqual(recs.map((r) => r.id));

    const firstLines = await c.audit.jsonlPage(filter);
    expect(firstLines.cursor).toBeTruthy();
    expect(JSON.parse(firstLines.jsonl.trim())).toEqual(recs[0]);
    let jsonl = "";
    for await (const chunk of c.audit.exportJsonl(filter)) jsonl += chunk;
    const lines = jsonl.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as AuditRecord);
    expect(lines).toEqual(recs);

    const newest: AuditRecord[] = [];
    for await (const r of c.audit.records({ ...filter, order: "desc" })) newest.push(r);
    expect(newest).toEqual([...recs].reverse());
    await c.alerts.delete(name);
  });

  it("refuses a viewer key with 403 and a bad filter with a 400 naming it", async () => {
    const v = await viewer();
    await expect(v.audit.page()).rejects.toMatchObject({ name: "JobbieError", status: 403, code: "forbidden" });
    await expect(client().audit.page({ limit: 5000 })).rejects.toMatchObject({ status: 400, field: "limit" });
  });
});
