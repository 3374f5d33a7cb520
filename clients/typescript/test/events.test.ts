import { beforeAll, describe, expect, it } from "vitest";
import { type Client, type JobEvent, parseSSE } from "../src/index.js";
import { client, queue } from "./helpers.js";

// The tests of this file work in a namespace of their own, so the stream
// carries their events only.
let ns: string;
beforeAll(async () => {
  ns = `ts-events-${crypto.randomUUID().slice(0, 8)}`;
  await client().namespaces.create({ name: ns });
});

/**
 * Opens the stream, runs then() once it is open, and gathers n events.
 * A stream without lastEventId starts at its opening.
 */
async function take(c: Client, n: number, opts: { lastEventId?: string } = {}, then?: () => Promise<unknown>): Promise<JobEvent[]> {
  const ctl = new AbortController();
  const got: JobEvent[] = [];
  let opened!: () => void;
  const open = new Promise<void>((r) => (opened = r));
  const acting = open.then(() => then?.());
  for await (const e of c.events({ ...opts, signal: ctl.signal, onOpen: () => opened() })) {
    got.push(e);
    if (got.length === n) ctl.abort();
  }
  await acting;
  return got;
}

describe("events", () => {
  it("streams job events and resumes after an id with Last-Event-ID", async () => {
    const c = client({ namespace: ns });
    const q = queue();
    let a!: { job_id: string };
    const [first] = await take(c, 1, {}, async () => (a = await c.enqueue(q, 1)));
    expect(first).toMatchObject({ type: "enqueued", job_id: a.job_id, queue: q, state: "pending" });
    expect(first.id).toBeTruthy();
    const b = await c.enqueue(q, 2);
    await c.cancelJob(b.job_id);
    const resumed = await take(c, 2, { lastEventId: first.id });
    expect(resumed.map((e) => [e.type, e.job_id])).toEqual([["enqueued", b.job_id], ["cancelled", b.job_id]]);
  });

  it("reopens a broken stream from the last id seen: nothing missed, nothing twice", async () => {
    const sentIds: Array<string | null> = [];
    let broken = false;
    const c = client({
      namespace: ns,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (!String(input).endsWith("/api/v1/events")) return res;
        sentIds.push(new Headers(init?.headers).get("Last-Event-ID"));
        if (broken) return res;
        broken = true;
        // pass the first whole event on, then drop the connection
        let text = "";
        const reader = res.body!.getReader();
        const body = new ReadableStream<Uint8Array>({
          async pull(ctl) {
            const { value, done } = await reader.read();
            if (done) return ctl.close();
            text += new TextDecoder().decode(value);
            const end = text.indexOf("\n\n", text.indexOf("data:"));
            if (text.includes("data:") && end >= 0) {
              ctl.enqueue(new TextEncoder().encode(text.slice(0, end + 2)));
              await reader.cancel();
              ctl.error(new TypeError("connection reset"));
              return;
            }
          },
        });
        return new Response(body, { status: res.status, headers: res.headers });
      },
    });
    const q = queue();
    let ids: string[] = [];
    const got = await take(c, 3, {}, async () => {
      ids = (await c.enqueueBatch([1, 2, 3].map((i) => ({ queue: q, payload: i })))).job_ids!;
    });
    expect(got.map((e) => [e.type, e.job_id])).toEqual(ids.map((id) => ["enqueued", id]));
    expect(sentIds).toEqual([null, got[0].id]);
  });
});

describe("parseSSE", () => {
  it("reads fields, multi-line data, comments and every line ending, across chunk borders", async () => {
    const chunks = ["id: 1\r", "\nevent: a\ndata: x\ndata: y\r\n\r\n: keep", "-alive\n\nid: 2\rdata: z\r\r", "data: no end"];
    const body = new ReadableStream<Uint8Array>({
      start(ctl) {
        for (const c of chunks) ctl.enqueue(new TextEncoder().encode(c));
        ctl.close();
      },
    });
    const got = [];
    for await (const m of parseSSE(body)) got.push(m);
    expect(got).toEqual([
      { id: "1", event: "a", data: "x\ny" },
      { id: "1", event: "comment", data: "", comment: "keep-alive" },
      { id: "2", event: "message", data: "z" },
    ]);
  });
});
