// Real signed requests from the server: push deliveries to pushHandler and
// a webhook's test event, both received by an HTTPS server of the test's
// own whose certificate the dev server trusts.
import { createServer } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { NonRetryableError, pushHandler, WebhookVerifier } from "../src/index.js";
import { client, queue, waitFor } from "./helpers.js";

type Route = (req: Request) => Promise<Response>;
const routes = new Map<string, Route>();
let base = "";
let server: ReturnType<typeof createServer>;

beforeAll(async () => {
  const { cert, certKey } = inject("jobbie");
  server = createServer({ cert, key: certKey }, async (req, res) => {
    const chunks: Uint8Array[] = [];
    for await (const c of req) chunks.push(c);
    const body = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let off = 0;
    for (const c of chunks) (body.set(c, off), (off += c.length));
    const h = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(", ") : v);
    const route = routes.get(req.url ?? "");
    const answer = route
      ? await route(new Request(`https://127.0.0.1${req.url}`, { method: req.method, headers: h, body: req.method === "POST" ? body : undefined }))
      : new Response("no such route", { status: 404 });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(new Uint8Array(await answer.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `https://127.0.0.1:${server.address().port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe("real signed requests", () => {
  it("a pushed job's handler continues its trace in the enqueues it makes, through job.client too", async () => {
    const c = client();
    const q = queue();
    const next = `${q}.next`;
    const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const keys = (await c.signingKeys.list()).map((k) => k.public_key);
    const made: string[] = [];
    routes.set(`/push/${q}`, pushHandler(new WebhookVerifier(keys), async (job) => {
      expect(job.traceparent).toBe(tp);
      made.push((await c.enqueue(next, "ambient")).job_id, (await job.client!.enqueue(next, "explicit")).job_id);
      return "ok";
    }, c));
    await c.queues.put(q, { push: { url: `${base}/push/${q}`, timeout: "10s" } });
    const r = await c.enqueue(q, {}, { traceparent: tp, max_retries: 0 });
    await waitFor("completed", async () => (await c.getJob(r.job_id)).state === "completed");
    expect(made.length).toBe(2);
    for (const id of made) expect((await c.getJob(id)).traceparent?.split("-")[1]).toBe(tp.split("-")[1]);
  });

  it("a push queue's deliveries verify and run through pushHandler; a failure is retried with its stack", async () => {
    const c = client();
    const q = queue();
    const keys = (await c.signingKeys.list()).map((k) => k.public_key);
    let attempts = 0;
    routes.set(`/push/${q}`, pushHandler(new WebhookVerifier(keys), async (job) => {
      attempts++;
      if (job.attempt === 1) {
        await job.checkpoint({ step: 1 });
        throw new Error("first delivery fails");
      }
      return { got: job.payload, resumedFrom: job.lastCheckpoint };
    }));
    await c.queues.put(q, { push: { url: `${base}/push/${q}`, timeout: "10s" } });
    const r = await c.enqueue(q, { hello: "push" }, { max_retries: 1, retry_backoff: "none" });
    await waitFor("completed", async () => (await c.getJob(r.job_id)).state === "completed");
    const j = await c.getJob(r.job_id);
    expect(attempts).toBe(2);
    expect(j.result).toEqual({ got: { hello: "push" }, resumedFrom: { step: 1 } });
    expect(j.errors![0].error).toBe("Error: first delivery fails");
    expect(j.errors![0].backtrace).toContain("push.test.ts");
  });

  it("a NonRetryableError thrown by a push handler makes the job dead after its one delivery", async () => {
    const c = client();
    const q = queue();
    const keys = (await c.signingKeys.list()).map((k) => k.public_key);
    let attempts = 0;
    routes.set(`/push/${q}`, pushHandler(new WebhookVerifier(keys), async () => {
      attempts++;
      throw new NonRetryableError("unknown address");
    }));
    await c.queues.put(q, { push: { url: `${base}/push/${q}`, timeout: "10s" } });
    const r = await c.enqueue(q, null, { max_retries: 5, retry_backoff: "none" });
    await waitFor("dead", async () => (await c.getJob(r.job_id)).state === "dead");
    const j = await c.getJob(r.job_id);
    expect(attempts).toBe(1);
    expect(j.dead_reason).toBe("non_retryable");
    expect(j.errors![0].error).toBe("NonRetryableError: unknown address");
  });

  it("a webhook's test event verifies with the endpoint's whsec_ secret (v1) and the namespace's keys (v1a)", async () => {
    const c = client();
    const seen: Array<{ hmac: boolean; ed: boolean; type: string }> = [];
    const path = `/hook/${crypto.randomUUID()}`;
    const keys = (await c.signingKeys.list()).map((k) => k.public_key);
    let hmac: WebhookVerifier | undefined;
    routes.set(path, async (req) => {
      const body = new Uint8Array(await req.arrayBuffer());
      const ok = (v?: WebhookVerifier) => (v ? v.verify(req.headers, body).then(() => true, () => false) : Promise.resolve(false));
      seen.push({ hmac: await ok(hmac), ed: await ok(new WebhookVerifier(keys)), type: JSON.parse(new TextDecoder().decode(body)).type });
      return new Response(null, { status: 204 });
    });
    const wh = await c.webhooks.create({ url: `${base}${path}`, events: ["job.completed"], secret: true });
    expect(wh.secret).toMatch(/^whsec_/);
    hmac = new WebhookVerifier([wh.secret!]);
    const attempt = await c.webhooks.test(wh.id);
    expect(attempt.ok).toBe(true);
    expect(seen).toEqual([{ hmac: true, ed: true, type: "dev.jobbie.test" }]);
    await c.webhooks.delete(wh.id);
  });
});
