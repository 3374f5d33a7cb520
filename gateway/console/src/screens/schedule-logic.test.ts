import { describe, expect, it } from "vitest";
import { emptyForm, formatRun, formOf, matches, rawMember, requestBody, timeZones, type Schedule } from "./schedule-logic";

const stored: Schedule = {
  id: "sch_01HZX",
  name: "digest",
  queue: "emails",
  cron: "0 9 * * 1-5",
  timezone: "Europe/Paris",
  payload: { kind: "daily", to: ["a@example.com"] },
  priority: "high",
  unique_key: "digest",
  max_retries: 5,
  enabled: false,
  next_run: null,
  last_run: "2026-03-02T08:00:00Z",
  last_job_id: "job_1",
  created_at: null,
  updated_at: null,
};

describe("formatRun", () => {
  it("writes the wall time in the schedule's zone, with its weekday and offset", () => {
    expect(formatRun("2026-03-02T09:00:00+01:00", "Europe/Paris")).toBe("Mon 2026-03-02 09:00 GMT+1");
    // The same instant from UTC, and across the summer time change.
    expect(formatRun("2026-03-02T08:00:00Z", "Europe/Paris")).toBe("Mon 2026-03-02 09:00 GMT+1");
    expect(formatRun("2026-03-30T07:00:00Z", "Europe/Paris")).toBe("Mon 2026-03-30 09:00 GMT+2");
    expect(formatRun("2026-03-02T08:00:00Z", "America/New_York")).toBe("Mon 2026-03-02 03:00 EST");
  });

  it("shows seconds only when a run has them", () => {
    expect(formatRun("2026-01-01T00:01:30Z", "UTC")).toBe("Thu 2026-01-01 00:01:30 UTC");
    expect(formatRun("2026-01-01T23:59:00Z", "UTC")).toBe("Thu 2026-01-01 23:59 UTC");
  });

  it("midnight is 00, not 24", () => {
    expect(formatRun("2026-01-02T00:00:00Z", "UTC")).toBe("Fri 2026-01-02 00:00 UTC");
  });

  it("falls back to UTC for a zone the browser does not know, and to a dash for no time", () => {
    expect(formatRun("2026-01-02T00:00:00Z", "Mars/Olympus")).toBe("Fri 2026-01-02 00:00 UTC");
    expect(formatRun("2026-01-02T00:00:00Z", "")).toBe("Fri 2026-01-02 00:00 UTC");
    expect(formatRun("not a time", "UTC")).toBe("—");
  });
});

describe("requestBody", () => {
  const form = () => ({ ...emptyForm(), name: "digest", queue: "emails", cron: " 0 9 * * 1-5 " });

  it("sends every field, with defaults, since PUT replaces the whole schedule; a blank max_retries is the queue's default", () => {
    const r = requestBody(form());
    expect("body" in r && JSON.parse(r.body)).toEqual({
      name: "digest",
      queue: "emails",
      cron: "0 9 * * 1-5",
      timezone: "UTC",
      priority: "normal",
      unique_key: "",
      enabled: true,
    });
    const explicit = requestBody({ ...form(), max_retries: " 0 " });
    expect("body" in explicit && JSON.parse(explicit.body).max_retries).toBe(0);
  });

  it("keeps the payload's text, so big integers keep their digits", () => {
    const r = requestBody({ ...form(), payload: '{"id": 12345678901234567890}' });
    expect("body" in r && r.body).toContain('"payload":{"id": 12345678901234567890}}');
    expect("body" in r && JSON.parse(r.body).payload).toBeTypeOf("object");
    const scalar = requestBody({ ...form(), payload: " 42 " });
    expect("body" in scalar && JSON.parse(scalar.body).payload).toBe(42);
  });

  it("refuses what the server would, naming the field", () => {
    const field = (f: Partial<ReturnType<typeof form>>) => {
      const r = requestBody({ ...form(), ...f });
      return "error" in r ? r.error.field : "";
    };
    expect(field({ name: " " })).toBe("name");
    expect(field({ name: "sch_x" })).toBe("name");
    expect(field({ name: "é".repeat(65) })).toBe("name");
    expect(field({ queue: "" })).toBe("queue");
    expect(field({ cron: "  " })).toBe("cron");
    expect(field({ payload: "{nope" })).toBe("payload");
    expect(field({ max_retries: "-1" })).toBe("max_retries");
    expect(field({ max_retries: "1.5" })).toBe("max_retries");
    expect(field({ max_retries: "1001" })).toBe("max_retries");
    expect(field({ max_retries: "0" })).toBe("");
    expect(field({ max_retries: "" })).toBe("");
  });

  it("keeps the name as typed (trimming it would rename on an edit)", () => {
    const r = requestBody({ ...form(), name: "nightly " });
    expect("body" in r && JSON.parse(r.body).name).toBe("nightly ");
  });
});

describe("formOf", () => {
  it("fills the form from a stored schedule and round-trips through requestBody", () => {
    const f = formOf(stored);
    expect(f).toMatchObject({ name: "digest", timezone: "Europe/Paris", priority: "high", unique_key: "digest", max_retries: "5", enabled: false });
    const r = requestBody(f);
    expect("body" in r && JSON.parse(r.body)).toEqual({
      name: "digest",
      queue: "emails",
      cron: "0 9 * * 1-5",
      timezone: "Europe/Paris",
      priority: "high",
      unique_key: "digest",
      max_retries: 5,
      enabled: false,
      payload: stored.payload,
    });
  });

  it("keeps a schedule that takes its queue's default doing so", () => {
    const f = formOf({ ...stored, max_retries: 7, max_retries_default: true });
    expect(f.max_retries).toBe("");
    const r = requestBody(f);
    expect("body" in r && JSON.parse(r.body)).not.toHaveProperty("max_retries");
    expect(formOf({ ...stored, max_retries_default: false }).max_retries).toBe("5");
  });

  it("leaves a null payload and unique key empty", () => {
    const f = formOf({ ...stored, payload: null, unique_key: null });
    expect(f.payload).toBe("");
    expect(f.unique_key).toBe("");
  });

  it("shows the payload as sent when parsing would change its numbers", () => {
    const raw = '{"id":12345678901234567890}';
    expect(formOf({ ...stored, payload: JSON.parse(raw) }, raw).payload).toBe(raw);
    const plain = '{"a":1}';
    expect(formOf({ ...stored, payload: JSON.parse(plain) }, plain).payload).toBe('{\n  "a": 1\n}');
  });
});

describe("rawMember", () => {
  it("finds a top-level member's text, whatever it holds", () => {
    const text = '{"id":"sch_1","name":"a \\"payload\\":","payload":{"x":[1,{"payload":2}],"s":"}"},"priority":"high","n":12345678901234567890}';
    expect(rawMember(text, "payload")).toBe('{"x":[1,{"payload":2}],"s":"}"}');
    expect(rawMember(text, "priority")).toBe('"high"');
    expect(rawMember(text, "n")).toBe("12345678901234567890");
    expect(rawMember(text, "missing")).toBeUndefined();
    expect(rawMember('{"payload": null, "x": 1}', "payload")).toBe("null");
    expect(rawMember('{ "payload" : [1, 2] }', "payload")).toBe("[1, 2]");
  });
});

describe("matches and timeZones", () => {
  it("filters on name, queue, cron and zone, any case", () => {
    expect(matches(stored, "DIG")).toBe(true);
    expect(matches(stored, "emails")).toBe(true);
    expect(matches(stored, "1-5")).toBe(true);
    expect(matches(stored, "paris")).toBe(true);
    expect(matches(stored, "billing")).toBe(false);
    expect(matches(stored, "  ")).toBe(true);
  });

  it("lists UTC first, once", () => {
    const z = timeZones();
    expect(z[0]).toBe("UTC");
    expect(z.filter((x) => x === "UTC")).toHaveLength(1);
    expect(z).toContain("Europe/Paris");
  });
});
