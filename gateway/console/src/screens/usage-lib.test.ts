import { describe, expect, it } from "vitest";
import { barHeights, chartSummary, granularityOf, money, presetOf, rangeFor, type UsageBucket } from "./usage-lib";

describe("barHeights", () => {
  it("scales to the largest", () => {
    expect(barHeights([0, 5, 10], 100)).toEqual([0, 50, 100]);
  });
  it("keeps a tiny non-zero value visible", () => {
    expect(barHeights([1, 10000], 100)).toEqual([1, 100]);
  });
  it("draws nothing for all zeros or none", () => {
    expect(barHeights([0, 0], 50)).toEqual([0, 0]);
    expect(barHeights([], 50)).toEqual([]);
  });
});

describe("money", () => {
  it("writes minor units in the currency", () => {
    expect(money(12345, "USD")).toBe("$123.45");
    expect(money(0, "EUR")).toBe("€0.00");
    expect(money(500, "JPY")).toBe("¥500");
    expect(money(1234567, "")).toBe("$12,345.67");
  });
  it("survives an unknown code", () => {
    expect(money(10, "X1")).toBe("10 X1");
  });
});

describe("range presets", () => {
  const now = Date.parse("2026-11-24T16:30:00Z");
  it("go back from now", () => {
    expect(rangeFor("24h", now)).toEqual({ from: "2026-11-23T16:30:00.000Z", to: "2026-11-24T16:30:00.000Z" });
    expect(rangeFor("7d", now).from).toBe("2026-11-17T16:30:00.000Z");
    expect(rangeFor("30d", now).from).toBe("2026-10-25T16:30:00.000Z");
  });
  it("read the URL, defaulting", () => {
    expect(presetOf("7d")).toBe("7d");
    expect(presetOf("nope")).toBe("24h");
    expect(presetOf(null)).toBe("24h");
    expect(granularityOf("day")).toBe("day");
    expect(granularityOf("x")).toBe("hour");
  });
});

describe("chartSummary", () => {
  const m = (n: number) => ({ jobs_enqueued: n, executions: 0, jobs_completed: 0, jobs_failed: 0, jobs_dead: 0, active_job_seconds: 0, storage_byte_hours: 0, api_requests: 0, push_deliveries: 0, webhook_deliveries: 0 });
  it("says total, peak and incomplete buckets", () => {
    const b: UsageBucket[] = [
      { start: "2026-11-24T14:00:00Z", meters: m(3), incomplete: false },
      { start: "2026-11-24T15:00:00Z", meters: m(7), incomplete: true },
    ];
    expect(chartSummary("Jobs enqueued", "jobs_enqueued", b, "hour")).toBe("Jobs enqueued per hour, 2 hours: total 10, peak 7 at Nov 24, 15:00 UTC; 1 incomplete");
    expect(chartSummary("X", "jobs_enqueued", [], "hour")).toBe("X: no data");
  });
});
