// The creates that take an Idempotency-Key, against the dev server: the
// SDK's list is the OpenAPI document's, a caller's key gives back the
// first answer (replayed), another body under it is the typed 422.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type Client, isIdempotencyKeyReused } from "../src/index.js";
import { IDEMPOTENT_ROUTES } from "../src/http.js";
import { client, queue, waitFor } from "./helpers.js";

const key = () => `ts-${crypto.randomUUID()}`;
const short = () => crypto.randomUUID().slice(0, 8);

describe("idempotent creates", () => {
  it("keys exactly the POST routes whose OpenAPI operation takes Idempotency-Key", () => {
    const doc = JSON.parse(readFileSync(new URL("../../../docs/api/openapi.json", import.meta.url).pathname, "utf8")) as {
      paths: Record<string, Record<string, { parameters?: Array<{ $ref?: string; name?: string; in?: string }> }>>;
    };
    const keyed: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if ((op.parameters ?? []).some((p) => p.$ref === "#/components/parameters/IdempotencyKey"
          || (p.in === "header" && p.name === "Idempotency-Key"))) {
          expect(method).toBe("post");
          keyed.push(path);
        }
      }
    }
    expect(keyed.sort()).toEqual([...IDEMPOTENT_ROUTES].sort());
  });

  it("a namespace create repeated under the caller's key is the same namespace, another body is 422", async () => {
    const c = client();
    const k = key();
    const name = `ts-${short()}`;
    const first = await c.namespaces.create({ name, description: "once" }, { idempotencyKey: k });
    expect(first.replayed).toBeUndefined();
    const again = await c.namespaces.create({ name, description: "once" }, { idempotencyKey: k });
    expect(again.replayed).toBe(true);
    const { replayed: _, ...body } = again;
    expect(body).toEqual(first);
    const e = await c.namespaces.create({ name: `ts-${short()}` }, { idempotencyKey: k }).catch((x) => x);
    expect(isIdempotencyKeyReused(e)).toBe(true);
    expect(e).toMatchObject({ status: 422, code: "idempotency_key_reused", field: "Idempotency-Key" });
    expect((await c.namespaces.list()).filter((n) => n.name === name)).toHaveLength(1);
  });

  it("a key create repeated under the caller's key is the same key, and the replayed token works", async () => {
    const c = client();
    const k = key();
    const req = { name: `ts-${short()}`, role: "producer", namespaces: ["default"] };
    const first = await c.keys.create(req, { idempotencyKey: k });
    const again = await c.keys.create(req, { idempotencyKey: k });
    expect(again.replayed).toBe(true);
    expect(again.id).toBe(first.id);
    expect(again.key).toBe(first.key);
    const q = queue();
    const r = await client({ apiKey: again.key }).enqueue(q, 1);
    expect((await c.getJob(r.job_id)).queue).toBe(q);
    expect((await c.keys.list()).filter((x) => x.name === req.name)).toHaveLength(1);
    const e = await c.keys.create({ ...req, role: "viewer" }, { idempotencyKey: k }).catch((x) => x);
    expect(isIdempotencyKeyReused(e)).toBe(true);
    await c.keys.revoke(first.id);
  });

  it("a role create repeated under the caller's key is the same role, another body is 422", async () => {
    const c = client();
    const k = key();
    const req = { name: `ts-role-${short()}`, permissions: [{ actions: ["job.read"], namespaces: ["*"], queues: ["*"] }] };
    const first = await c.roles.create(req, { idempotencyKey: k });
    const again = await c.roles.create(req, { idempotencyKey: k });
    expect(again.replayed).toBe(true);
    expect(again.name).toBe(first.name);
    expect(again.permissions).toEqual(first.permissions);
    const e = await c.roles.create({ ...req, description: "other" }, { idempotencyKey: k }).catch((x) => x);
    expect(isIdempotencyKeyReused(e)).toBe(true);
    await c.roles.delete(req.name);
  });

  it("a backup create repeated under the caller's key is the same backup, started once", async () => {
    const c = client();
    const ns = `ts-${short()}`;
    await c.namespaces.create({ name: ns });
    await c.inNamespace(ns).enqueue(queue(), 1);
    const k = key();
    const first = await c.backups.create(ns, { idempotencyKey: k });
    expect(first.state).toBe("running");
    const again = await c.backups.create(ns, { idempotencyKey: k });
    expect(again.replayed).toBe(true);
    expect(again.id).toBe(first.id);
    expect((await c.backups.list(ns)).map((b) => b.id)).toEqual([first.id]);
    const e = await c.backups.create("default", { idempotencyKey: k }).catch((x) => x);
    expect(isIdempotencyKeyReused(e)).toBe(true);
    const done = await waitFor("the backup to complete", async () => {
      const b = await c.backups.getOne(first.id);
      return b.state !== "running" && b;
    });
    expect(done.state).toBe("completed");
  });

  it("a namespace create retried after a lost answer sends one key and gets the first answer back", async () => {
    const keys: Array<string | null> = [];
    let lost = 0;
    const c: Client = client({
      minBackoffMs: 10,
      fetch: async (input, init) => {
        keys.push(new Headers(init?.headers).get("Idempotency-Key"));
        const res = await fetch(input, init);
        if (lost++ === 0) throw new TypeError("fetch failed: connection reset after the request was sent");
        return res;
      },
    });
    const name = `ts-${short()}`;
    const ns = await c.namespaces.create({ name });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(ns).toMatchObject({ name, replayed: true });
  });

  it("refuses a caller's key on a call that takes none, sending nothing", async () => {
    let calls = 0;
    const c = client({ fetch: (i, init) => (calls++, fetch(i, init)) });
    await expect(c.queues.list({ idempotencyKey: key() })).rejects.toThrow(TypeError);
    expect(calls).toBe(0);
  });
});
