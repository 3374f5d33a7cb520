// Server-Sent Events over fetch rather than EventSource: fetch can send
// the namespace header, and resuming is ours to control (Last-Event-ID
// from the last event seen, backoff between reconnects, a stop on 401 or
// 403, which retrying cannot fix).

import { errorOf, headers } from "./api";

export const LAST_EVENT_ID = "Last-Event-ID";

export interface SSEMessage {
  id?: string;
  event: string;
  data: string;
}

/** SSEParser turns chunks of an event stream into messages (the WHATWG rules: fields, comments, multi-line data, CR/LF/CRLF). */
export class SSEParser {
  private buf = "";
  private data: string[] = [];
  private event = "";
  private id: string | undefined;
  /** lastEventId is the id of the last event dispatched with one. */
  lastEventId: string | undefined;

  push(chunk: string): SSEMessage[] {
    this.buf += chunk;
    const out: SSEMessage[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf);
      if (!m) break;
      // A lone CR at the end may be the first half of a CRLF: wait for more.
      if (m[0] === "\r" && m.index === this.buf.length - 1) break;
      const line = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      const msg = this.line(line);
      if (msg) out.push(msg);
    }
    return out;
  }

  private line(line: string): SSEMessage | undefined {
    if (line === "") {
      if (this.data.length === 0) {
        this.event = "";
        return undefined;
      }
      const msg: SSEMessage = { event: this.event || "message", data: this.data.join("\n") };
      if (this.id !== undefined) msg.id = this.id;
      this.lastEventId = this.id ?? this.lastEventId;
      this.data = [];
      this.event = "";
      return msg;
    }
    if (line.startsWith(":")) return undefined;
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? "" : line.slice(i + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.data.push(value);
        break;
      case "event":
        this.event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.id = value;
        break;
    }
    return undefined;
  }
}

/** backoff is the wait before reconnect attempt n (0-based): doubling from 500 ms to 15 s, with up to 20 % jitter. */
export function backoff(n: number, rand: () => number = Math.random): number {
  const base = Math.min(15000, 500 * 2 ** Math.min(n, 5));
  return Math.round(base * (0.8 + 0.2 * rand()));
}

export type StreamState = "connecting" | "open" | "retrying" | "stopped";

export interface StreamOptions {
  onMessage: (m: SSEMessage) => void;
  onState?: (s: StreamState, err?: Error) => void;
  /** resume: start after this event id. */
  lastEventId?: string;
  /** once: do not reconnect after the server ends the stream (a finished bulk operation). */
  once?: boolean;
  fetchImpl?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

/** openStream reads an SSE endpoint until closed, reconnecting with Last-Event-ID after a drop. */
export function openStream(path: string, opts: StreamOptions): { close: () => void } {
  const ctl = new AbortController();
  const f = opts.fetchImpl ?? fetch.bind(globalThis);
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const state = (s: StreamState, e?: Error) => opts.onState?.(s, e);
  let lastId = opts.lastEventId;

  (async () => {
    for (let attempt = 0; !ctl.signal.aborted; ) {
      state(attempt === 0 ? "connecting" : "retrying");
      try {
        const h = headers("GET", { Accept: "text/event-stream" });
        if (lastId !== undefined) h[LAST_EVENT_ID] = lastId;
        const res = await f(path, { headers: h, credentials: "same-origin", signal: ctl.signal });
        if (!res.ok || !res.body) {
          const err = await errorOf(res);
          if (res.status === 401 || res.status === 403 || res.status === 404 || res.status === 400) {
            state("stopped", err);
            return;
          }
          throw err;
        }
        state("open");
        attempt = 0;
        const parser = new SSEParser();
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const m of parser.push(value)) {
            if (m.id !== undefined) lastId = m.id;
            opts.onMessage(m);
          }
        }
        if (opts.once) {
          state("stopped");
          return;
        }
      } catch (e) {
        if (ctl.signal.aborted) break;
        state("retrying", e as Error);
      }
      if (ctl.signal.aborted) break;
      await sleep(backoff(attempt++));
    }
    state("stopped");
  })();
  return { close: () => ctl.abort() };
}
