import { describe, expect, it } from "vitest";
import { buildRequest, emptyForm, goDuration, parsePayload, parseSpan, parseTags } from "./job-enqueue";

describe("parsePayload", () => {
  it("reads JSON, and empty as no payload", () => {
    expect(parsePayload('{"to":"a@b"}')).toEqual({ value: { to: "a@b" } });
    expect(parsePayload("  ")).toEqual({});
    expect(parsePayload("null")).toEqual({ value: null });
  });
  it("says why bad JSON is bad", () => {
    const r = parsePayload("{to: 1}");
    expect(r.value).toBeUndefined();
    expect(r.error).toMatch(/^The payload is not valid JSON: /);
  });
});

describe("parseTags", () => {
  it("reads key=value lines", () => {
    expect(parseTags("tenant=acme\n\n  region = eu \nempty=")).toEqual({ tags: { tenant: "acme", region: "eu", empty: "" } });
    expect(parseTags("a=b=c")).toEqual({ tags: { a: "b=c" } });
    expect(parseTags("")).toEqual({});
  });
  it("refuses what the API would", () => {
    expect(parseTags("novalue").error).toMatch(/line 1 is not key=value/);
    expect(parseTags("=x").error).toMatch(/line 1/);
    expect(parseTags("a=1\na=2").error).toMatch(/twice/);
    expect(parseTags("k".repeat(65) + "=v").error).toMatch(/over 64 bytes/);
    expect(parseTags("k=" + "v".repeat(257)).error).toMatch(/over 256 bytes/);
    const many = Array.from({ length: 33 }, (_, i) => `k${i}=v`).join("\n");
    expect(parseTags(many).error).toMatch(/at most 32/);
  });
});

describe("spans", () => {
  it("reads durations and seconds", () => {
    expect(parseSpan("90")).toBe(90_000);
    expect(parseSpan("1.5")).toBe(1500);
    expect(parseSpan("30s")).toBe(30_000);
    expect(parseSpan("1h30m")).toBe(5_400_000);
    expect(parseSpan("2d")).toBe(172_800_000);
    expect(parseSpan("500ms")).toBe(500);
    expect(parseSpan("soon")).toBeUndefined();
    expect(parseSpan("5 m")).toBeUndefined();
    expect(goDuration(90_000)).toBe("90s");
    expect(goDuration(1500)).toBe("1500ms");
  });
});

describe("buildRequest", () => {
  const now = new Date("2026-02-11T10:00:00Z");
  it("sends only what was given", () => {
    expect(buildRequest({ ...emptyForm, queue: "emails" }, now)).toEqual({ req: { queue: "emails", payload: {} } });
    expect(buildRequest({ ...emptyForm, queue: "emails", payload: "" }, now)).toEqual({ req: { queue: "emails" } });
  });
  it("writes every field", () => {
    const r = buildRequest(
      {
        queue: " emails ",
        payload: '{"n":1}',
        priority: "high",
        maxRetries: "2",
        when: "delay",
        delay: "5m",
        at: "",
        uniqueKey: "welcome:1",
        uniquePeriod: "1h",
        tags: "tenant=acme",
        backoff: "fixed",
        expireAfter: "10m",
        concurrencyKey: " cust-1 ",
        fairnessKey: "tenant-7",
      },
      now,
    );
    expect(r).toEqual({
      req: {
        queue: "emails",
        payload: { n: 1 },
        priority: "high",
        max_retries: 2,
        scheduled_at: "2026-02-11T10:05:00.000Z",
        unique_key: "welcome:1",
        unique_period: 3600,
        tags: { tenant: "acme" },
        retry_backoff: "fixed",
        expire_after: "600s",
        concurrency_key: "cust-1",
        fairness_key: "tenant-7",
      },
    });
  });
  it("schedules at a local time", () => {
    const r = buildRequest({ ...emptyForm, queue: "q", when: "at", at: "2026-03-01T09:30" }, now);
    expect(r.req?.scheduled_at).toBe(new Date("2026-03-01T09:30").toISOString());
  });
  it("answers errors by field", () => {
    const r = buildRequest({ ...emptyForm, payload: "{", maxRetries: "-1", when: "delay", delay: "x", uniquePeriod: "1h", tags: "x" }, now);
    expect(Object.keys(r.errors ?? {}).sort()).toEqual(["delay", "maxRetries", "payload", "queue", "tags", "uniquePeriod"]);
    expect(r.req).toBeUndefined();
    expect(buildRequest({ ...emptyForm, queue: "q", when: "at" }, now).errors?.at).toBeDefined();
    expect(buildRequest({ ...emptyForm, queue: "q", maxRetries: "1.5" }, now).errors?.maxRetries).toBeDefined();
    expect(buildRequest({ ...emptyForm, queue: "q", fairnessKey: "k".repeat(129) }, now).errors?.fairnessKey).toContain("128 bytes");
    expect(buildRequest({ ...emptyForm, queue: "q", concurrencyKey: "k".repeat(128) }, now).req?.concurrency_key).toHaveLength(128);
    expect(buildRequest({ ...emptyForm, queue: "q", concurrencyKey: "  " }, now).req).toEqual({ queue: "q", payload: {} });
  });
});
