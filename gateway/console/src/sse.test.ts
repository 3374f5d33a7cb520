import { describe, expect, it } from "vitest";
import { backoff, openStream, SSEParser, type SSEMessage } from "./sse";

describe("SSEParser", () => {
  it("parses ids, event names and multi-line data across chunk boundaries", () => {
    const p = new SSEParser();
    const got: SSEMessage[] = [];
    got.push(...p.push(": jobbie events\n\nid: 7\nevent: job.completed\nda"));
    expect(got).toEqual([]);
    got.push(...p.push('ta: {"a":1}\n\nid: 8\r\ndata: x\r\ndata: y\r\n\r\n'));
    expect(got).toEqual([
      { id: "7", event: "job.completed", data: '{"a":1}' },
      { id: "8", event: "message", data: "x\ny" },
    ]);
    expect(p.lastEventId).toBe("8");
  });

  it("waits for the LF of a CRLF split across chunks", () => {
    const p = new SSEParser();
    expect(p.push("data: a\r")).toEqual([]);
    expect(p.push("\n\r\n")).toEqual([{ event: "message", data: "a" }]);
  });

  it("ignores comments and empty events, keeps the last id", () => {
    const p = new SSEParser();
    expect(p.push(": heartbeat\n\nid: 3\n\n")).toEqual([]);
    expect(p.push("data: z\n\n")).toEqual([{ id: "3", event: "message", data: "z" }]);
  });
});

describe("backoff", () => {
  it("doubles from 500 ms up to 15 s with jitter under 20 %", () => {
    expect(backoff(0, () => 1)).toBe(500);
    expect(backoff(1, () => 1)).toBe(1000);
    expect(backoff(10, () => 1)).toBe(15000);
    expect(backoff(10, () => 0)).toBe(12000);
  });
});

function streamOf(chunks: string[]): Response {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      const te = new TextEncoder();
      for (const ch of chunks) c.enqueue(te.encode(ch));
      c.close();
    },
  });
  return new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } });
}

describe("openStream", () => {
  it("reconnects after a drop with Last-Event-ID of the last event seen", async () => {
    const sent: (string | null)[] = [];
    const responses = [
      streamOf(["id: 1\ndata: a\n\n", "id: 2\ndata: b\n\n"]),
      streamOf(["id: 3\ndata: c\n\n"]),
    ];
    const got: string[] = [];
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const s = openStream("/api/v1/events", {
      fetchImpl: async (_url, init) => {
        const h = (init?.headers ?? {}) as Record<string, string>;
        sent.push(h["Last-Event-ID"] ?? null);
        const r = responses.shift();
        if (!r) {
          done();
          return new Response(JSON.stringify({ error: { code: "unauthenticated", message: "no" } }), { status: 401 });
        }
        return r;
      },
      sleep: async () => {},
      onMessage: (m) => got.push(m.data),
    });
    await finished;
    s.close();
    expect(got).toEqual(["a", "b", "c"]);
    expect(sent).toEqual([null, "2", "3"]);
  });

  it("stops without retrying on 401", async () => {
    let calls = 0;
    const states: string[] = [];
    await new Promise<void>((resolve) => {
      openStream("/x", {
        fetchImpl: async () => {
          calls++;
          return new Response("{}", { status: 401 });
        },
        sleep: async () => {},
        onMessage: () => {},
        onState: (st) => {
          states.push(st);
          if (st === "stopped") resolve();
        },
      });
    });
    expect(calls).toBe(1);
    expect(states).toEqual(["connecting", "stopped"]);
  });

  it("retries a 503 and resumes", async () => {
    let calls = 0;
    const got: string[] = [];
    await new Promise<void>((resolve) => {
      openStream("/x", {
        once: true,
        fetchImpl: async () => {
          calls++;
          if (calls === 1) return new Response("{}", { status: 503 });
          return streamOf(["data: ok\n\n"]);
        },
        sleep: async () => {},
        onMessage: (m) => got.push(m.data),
        onState: (st) => st === "stopped" && resolve(),
      });
    });
    expect(calls).toBe(2);
    expect(got).toEqual(["ok"]);
  });
});
