import { describe, expect, it } from "vitest";
import { formatCount, formatMs, formatSeconds, isEmpty, niceScale, plot, RANGES, statsPath, timeLabel, toHistory, type StatsAnswer } from "./history-lib";

const answer = (buckets: StatsAnswer["buckets"], step: "1m" | "1h" = "1m"): StatsAnswer => ({
  queue: "q",
  step,
  from: "2026-11-29T05:00:00Z",
  to: step === "1m" ? "2026-11-29T05:04:00Z" : "2026-11-29T09:00:00Z",
  buckets,
});

const bucket = (start: string, n: number, pt?: [number, number, number, number]) => ({
  start,
  enqueued: n,
  completed: n - 1,
  failed: 1,
  dead: 0,
  pending: 2 * n,
  oldest_pending_age: 1.5,
  processing_time: pt ? { count: pt[0], p50_ms: pt[1], p95_ms: pt[2], p99_ms: pt[3] } : null,
});

describe("toHistory", () => {
  it("gives one point per step, oldest first, and a missing step as zeros", () => {
    const h = toHistory(answer([bucket("2026-11-29T05:03:00Z", 5, [4, 10, 20, 30]), bucket("2026-11-29T05:01:00Z", 3)]));
    expect(h.times.map((t) => new Date(t).toISOString().slice(11, 16))).toEqual(["05:00", "05:01", "05:02", "05:03"]);
    expect(h.values.enqueued).toEqual([0, 3, 0, 5]);
    expect(h.values.completed).toEqual([0, 2, 0, 4]);
    expect(h.values.failed).toEqual([0, 1, 0, 1]);
    expect(h.values.pending).toEqual([0, 6, 0, 10]);
    expect(h.values.oldest).toEqual([0, 1.5, 0, 1.5]);
    expect(h.step).toBe(60_000);
  });

  it("reads percentiles of a step with attempts, and 0 for a step without", () => {
    const h = toHistory(answer([bucket("2026-11-29T05:00:00Z", 1, [2, 41, 205, 420]), bucket("2026-11-29T05:01:00Z", 1, [0, 9, 9, 9])]));
    expect(h.values.p50).toEqual([41, 0, 0, 0]);
    expect(h.values.p95).toEqual([205, 0, 0, 0]);
    expect(h.values.p99).toEqual([420, 0, 0, 0]);
  });

  it("steps by the hour for 1h, and takes null buckets as an empty history", () => {
    const h = toHistory(answer(null, "1h"));
    expect(h.times.length).toBe(4);
    expect(h.step).toBe(3_600_000);
    expect(isEmpty(h)).toBe(true);
    expect(isEmpty(toHistory(answer([bucket("2026-11-29T05:02:00Z", 1)])))).toBe(false);
  });
});

describe("niceScale", () => {
  it("rounds the top up to 1, 2 or 5 × 10ⁿ per tick", () => {
    expect(niceScale(7)).toEqual({ top: 8, ticks: [0, 2, 4, 6, 8] });
    expect(niceScale(100)).toEqual({ top: 100, ticks: [0, 50, 100] });
    expect(niceScale(930).top).toBe(1000);
    expect(niceScale(0.3).ticks).toEqual([0, 0.1, 0.2, 0.3]);
  });
  it("keeps counts' ticks whole, and gives an all-zero series a unit axis", () => {
    expect(niceScale(2, 4, true)).toEqual({ top: 2, ticks: [0, 1, 2] });
    expect(niceScale(0)).toEqual({ top: 1, ticks: [0, 1] });
  });
});

describe("plot", () => {
  it("puts each step at its middle and the value against the top, zero on the baseline", () => {
    expect(plot([0, 5, 10, 0], 10, 400, 100)).toEqual([
      [50, 100],
      [150, 50],
      [250, 0],
      [350, 100],
    ]);
  });
});

describe("units", () => {
  it("formats counts, times and ages", () => {
    expect([formatCount(950), formatCount(1200), formatCount(3_400_000)]).toEqual(["950", "1.2k", "3.4M"]);
    expect([formatMs(0), formatMs(0.8), formatMs(250), formatMs(1500), formatMs(120_000)]).toEqual(["0", "0.8 ms", "250 ms", "1.5 s", "2 min"]);
    expect([formatSeconds(45), formatSeconds(180), formatSeconds(7200), formatSeconds(129600)]).toEqual(["45 s", "3 min", "2 h", "1.5 d"]);
  });
  it("labels times in UTC, with the day past a day", () => {
    const t = Date.parse("2026-11-29T05:07:00Z");
    expect(timeLabel(t, RANGES[0].span)).toBe("05:07");
    expect(timeLabel(t, RANGES[2].span)).toBe("11-29 05:07");
  });
});

describe("statsPath", () => {
  it("asks for the range's step, ending now", () => {
    const now = Date.parse("2026-11-29T06:00:00Z");
    expect(statsPath("emails.send", RANGES[0], now)).toBe(
      "/api/v1/queues/emails.send/stats?step=1m&from=2026-11-29T05%3A00%3A00.000Z&to=2026-11-29T06%3A00%3A00.000Z",
    );
    expect(statsPath("a/b", RANGES[4], now)).toContain("/queues/a%2Fb/stats?step=1h&from=2026-10-30T06");
    // Mid-step, the range ends with the current step's end: whole steps only.
    expect(statsPath("q", RANGES[0], now + 25_000)).toContain("from=2026-11-29T05%3A01%3A00.000Z&to=2026-11-29T06%3A01%3A00.000Z");
    expect(statsPath("q", RANGES[3], now + 60_000)).toContain("from=2026-11-22T07%3A00%3A00.000Z&to=2026-11-29T07%3A00%3A00.000Z");
  });
});
