// Server-Sent Events over fetch's body stream, parsed by the HTML
// standard's rules (fields id, event, data, retry; comment lines), so the
// SDK needs no EventSource and works wherever fetch streams.

/** One dispatched event, or a comment line (event "comment"). */
export interface SSEMessage {
  /** The last event id seen (the stream's, as resumable with Last-Event-ID). */
  id: string;
  event: string;
  data: string;
  /** The text of a comment line, for event "comment". */
  comment?: string;
}

/** Parses body into messages until it ends or signal aborts. */
export async function* parseSSE(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<SSEMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let lastId = "";
  let event = "";
  let data: string[] = [];
  let sawCR = false;
  const onAbort = () => void reader.cancel().catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return; // an incomplete event at the end is dropped, as the standard says
      buf += decoder.decode(value, { stream: true });
      for (;;) {
        let i = 0;
        // a line ends at \n, \r\n or \r; a \n right after a \r that ended the last chunk belongs to it
        if (sawCR && buf.startsWith("\n")) buf = buf.slice(1);
        sawCR = false;
        const m = /\r\n|\r|\n/.exec(buf);
        if (!m) break;
        i = m.index;
        if (m[0] === "\r" && i === buf.length - 1) sawCR = true;
        const line = buf.slice(0, i);
        buf = buf.slice(i + m[0].length);
        if (line === "") {
          if (data.length > 0) {
            yield { id: lastId, event: event || "message", data: data.join("\n") };
          }
          event = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) {
          yield { id: lastId, event: "comment", data: "", comment: line.slice(1).trimStart() };
          continue;
        }
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? "" : line.slice(colon + 1);
        if (val.startsWith(" ")) val = val.slice(1);
        switch (field) {
          case "event": event = val; break;
          case "data": data.push(val); break;
          case "id": if (!val.includes("\0")) lastId = val; break;
          default: break; // retry and unknown fields: the SDK paces its own reconnects
        }
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    reader.releaseLock();
    await body.cancel().catch(() => {});
  }
}
