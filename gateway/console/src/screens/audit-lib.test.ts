import { describe, expect, it } from "vitest";
import { ApiError } from "../api";
import { auditPath, exportLines, exportName, filterOf, filterQuery, keyText, objectText, rfc3339, type AuditFilter } from "./audit-lib";

const none: AuditFilter = filterOf(new URLSearchParams());

describe("the filters", () => {
  it("live in the URL's query, the empty ones left out", () => {
    const f = { ...none, action: " queue.manage ", result: "error" };
    expect(filterQuery(f).toString()).toBe("action=queue.manage&result=error");
    expect(filterOf(filterQuery(f))).toEqual({ ...none, action: "queue.manage", result: "error" });
  });
  it("make the API's request, times as instants, with the cursor and the limit", () => {
    const from = "2026-11-29T06:00";
    const p = auditPath({ ...none, key_id: "key_1", namespace: "default", object: "queue/emails", from }, "abc", 50);
    const q = new URL(p, "http://x").searchParams;
    expect(p.startsWith("/api/v1/audit?")).toBe(true);
    expect(Object.fromEntries(q)).toEqual({ key_id: "key_1", namespace: "default", object: "queue/emails", from: new Date(from).toISOString(), limit: "50", cursor: "abc" });
    expect(auditPath(none, "", 1000, "jsonl")).toBe("/api/v1/audit?limit=1000&format=jsonl");
    expect(auditPath(none, "c", 50, undefined, "desc")).toBe("/api/v1/audit?limit=50&cursor=c&order=desc");
  });
  it("refuse a time that is none, naming its field", () => {
    expect(rfc3339("", "from")).toBe("");
    expect(() => auditPath({ ...none, to: "yesterday-ish" }, "", 50)).toThrowError(ApiError);
    expect(() => rfc3339("nope", "to")).toThrowError(expect.objectContaining({ field: "to", status: 400 }));
  });
});

describe("a record", () => {
  it("reads its object and its key", () => {
    expect(objectText({ object_type: "queue", object_id: "emails" })).toBe("queue/emails");
    expect(objectText({ object_type: "key" })).toBe("key");
    expect(keyText({ key_id: "key_1", key_name: "ops" })).toBe("ops");
    expect(keyText({ key_id: "key_1" })).toBe("key_1");
  });
});

describe("the export", () => {
  it("follows the cursor to the last page and counts the records", async () => {
    const pages: Record<string, { text: string; cursor: string | null }> = {
      "": { text: '{"id":"1"}\n{"id":"2"}\n', cursor: "c1" },
      c1: { text: '{"id":"3"}', cursor: "c2" },
      c2: { text: "", cursor: null },
    };
    const asked: string[] = [];
    const out = await exportLines(async (c) => (asked.push(c), pages[c]));
    expect(asked).toEqual(["", "c1", "c2"]);
    expect(out).toEqual({ lines: '{"id":"1"}\n{"id":"2"}\n{"id":"3"}\n', pages: 3, records: 3, more: false });
  });
  it("stops at its bound and says more remained", async () => {
    let n = 0;
    const out = await exportLines(async () => ({ text: `{"n":${n++}}\n`, cursor: "again" }), 4);
    expect(out).toMatchObject({ pages: 4, records: 4, more: true });
  });
  it("names the file by the time", () => {
    expect(exportName(new Date("2026-11-29T06:30:00.5Z"))).toBe("audit-2026-11-29T06-30-00-500Z.jsonl");
  });
});
